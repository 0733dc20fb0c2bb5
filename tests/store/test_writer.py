"""The writer: batches, acks after commit, failure isolation, and the client's three write paths."""

from __future__ import annotations

import ctypes
import sqlite3
import threading
from dataclasses import dataclass
from pathlib import Path

import pytest
import trio

from robota.core import RequestTimeout, StoreError
from robota.core.store import (
    AppendAuditEvent,
    ClaimInboundEvent,
    Database,
    StoreClient,
    StoreWriter,
    Write,
    audit_events,
    event_claimed,
    open_reader,
)


@dataclass(frozen=True)
class Boom:
    """Writes, then fails: its savepoint must be rolled back alone."""

    event_id: str

    def apply(self, db: Database, /) -> None:
        db.execute(
            "INSERT INTO inbound_event_receipts (event_id, kind, received_at) VALUES (?, 'x', 0)",
            (self.event_id,),
        )
        raise ValueError(f"boom {self.event_id}")


@dataclass(frozen=True)
class Commits:
    """A misbehaving op that commits the batch's transaction itself."""

    def apply(self, db: Database, /) -> None:
        db.conn.execute("COMMIT")


def count(path: Path, table: str) -> int:
    reader = open_reader(path)
    try:
        return int(reader.execute(f"SELECT count(*) FROM {table}").fetchone()[0])
    finally:
        reader.close()


def test_concurrent_writers_from_many_threads_all_get_acked(store) -> None:
    threads, per_thread = 8, 60
    results: dict[str, bool] = {}
    errors: list[BaseException] = []
    lock = threading.Lock()
    start = threading.Barrier(threads, timeout=10)

    def writer(n: int) -> None:
        try:
            start.wait()
            for i in range(per_thread):
                event = f"t{n}-e{i}"
                claimed = store.client.write_sync(ClaimInboundEvent(event, "m"), timeout=10)
                with lock:
                    results[event] = claimed
        except BaseException as error:  # pragma: no cover - reported below
            errors.append(error)

    workers = [threading.Thread(target=writer, args=(n,)) for n in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(30)
    assert errors == []
    assert len(results) == threads * per_thread
    assert all(results.values())
    assert count(store.path, "inbound_event_receipts") == threads * per_thread
    # Every write committed exactly once (+1: the fixture's ready round trip).
    assert sum(store.commits) == threads * per_thread + 1


def test_a_burst_while_the_writer_is_busy_costs_a_few_commits(store, acks, make_gate) -> None:
    gate = make_gate()
    store.client.submit(gate, acks.for_("gate"))
    gate.wait_entered()
    commits_before = len(store.commits)
    for i in range(1000):
        store.client.submit(AppendAuditEvent("burst", {"i": i}), acks.for_(i))
    gate.release.set()
    outcomes = acks.wait_for(1001)
    batches = store.commits[commits_before:]
    assert sum(batches) == 1001
    # The gate's own batch, then 1000 writes in batches of at most max_batch (500).
    assert len(batches) == 3, batches
    assert max(batches) == 500
    # One client's writes are applied in the order they were submitted.
    ids = [outcomes[i] for i in range(1000)]
    assert ids == sorted(ids)


def test_max_batch_bounds_every_transaction(start_store, acks) -> None:
    running = start_store(max_batch=64)
    for i in range(300):
        running.client.submit(AppendAuditEvent("x", {"i": i}), acks.for_(i))
    acks.wait_for(300)
    assert sum(running.commits) == 300
    assert max(running.commits) <= 64


@pytest.mark.concurrency
def test_no_ack_before_its_commit_is_visible_to_a_reader(store, repetition: int) -> None:
    reader = open_reader(store.path, any_thread=True)  # used only by acks, in the writer thread
    done = threading.Condition()
    seen: dict[str, bool] = {}
    threads, per_thread = 4, 25

    def checking_ack(event_id: str):
        def ack(outcome: object) -> None:
            visible = event_claimed(reader, event_id)
            with done:
                seen[event_id] = visible and outcome is True
                done.notify_all()

        return ack

    def submitter(n: int) -> None:
        for i in range(per_thread):
            event_id = f"r{repetition}-t{n}-{i}"
            store.client.submit(ClaimInboundEvent(event_id, "m"), checking_ack(event_id))

    workers = [threading.Thread(target=submitter, args=(n,)) for n in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(10)
    with done:
        assert done.wait_for(lambda: len(seen) == threads * per_thread, 10)
    reader.close()
    assert all(seen.values()), [e for e, ok in seen.items() if not ok]


def test_an_open_batch_is_invisible_and_unacked(store, acks, make_gate) -> None:
    first, second = make_gate(), make_gate()
    store.client.submit(first, acks.for_("first"))
    first.wait_entered()
    # Queued behind the first gate, these two land in the same batch.
    store.client.submit(ClaimInboundEvent("pending", "m"), acks.for_("claim"))
    store.client.submit(second, acks.for_("second"))
    first.release.set()
    second.wait_entered()
    reader = open_reader(store.path)
    try:
        # The claim ran, but its batch has not committed: nobody may know about it yet.
        assert not event_claimed(reader, "pending")
        assert "claim" not in dict(acks.received)
        second.release.set()
        outcomes = acks.wait_for(3)
        assert outcomes["claim"] is True
        assert event_claimed(reader, "pending")
    finally:
        reader.close()


def test_a_failing_op_gets_its_error_and_its_batch_commits(store, acks, make_gate) -> None:
    gate = make_gate()
    store.client.submit(gate, acks.for_("gate"))
    gate.wait_entered()
    store.client.submit(ClaimInboundEvent("before", "m"), acks.for_("before"))
    store.client.submit(Boom("boom"), acks.for_("boom"))
    store.client.submit(ClaimInboundEvent("after", "m"), acks.for_("after"))
    gate.release.set()
    outcomes = acks.wait_for(4)
    assert store.commits[-1] == 3  # one batch
    assert outcomes["before"] is True
    assert outcomes["after"] is True
    assert isinstance(outcomes["boom"], ValueError)
    reader = open_reader(store.path)
    try:
        assert event_claimed(reader, "before")
        assert event_claimed(reader, "after")
        assert not event_claimed(reader, "boom")  # rolled back to its savepoint
    finally:
        reader.close()


def test_an_op_that_ends_the_transaction_fails_its_batch(store, acks, make_gate) -> None:
    gate = make_gate()
    store.client.submit(gate, acks.for_("gate"))
    gate.wait_entered()
    store.client.submit(Commits(), acks.for_("rogue"))
    store.client.submit(ClaimInboundEvent("after", "m"), acks.for_("after"))
    gate.release.set()
    outcomes = acks.wait_for(3)
    assert isinstance(outcomes["rogue"], StoreError)
    assert isinstance(outcomes["after"], StoreError)
    assert "must not commit" in str(outcomes["rogue"])
    # The writer is still serving, and the failed batch left nothing behind.
    assert store.client.write_sync(ClaimInboundEvent("after", "m"), timeout=5) is True


def test_a_batch_that_cannot_begin_fails_each_write_and_the_writer_recovers(
    start_store,
) -> None:
    running = start_store(busy_timeout=0.05)
    running.client.write_sync(ClaimInboundEvent("warm-up", "m"), timeout=5)
    other = sqlite3.connect(running.path, isolation_level=None)  # another process, say
    try:
        other.execute("BEGIN IMMEDIATE")
        with pytest.raises(StoreError, match=r"could not begin a batch of 1 writes.*locked"):
            running.client.write_sync(ClaimInboundEvent("blocked", "m"), timeout=5)
        other.execute("ROLLBACK")
    finally:
        other.close()
    assert running.client.write_sync(ClaimInboundEvent("blocked", "m"), timeout=5) is True


def test_an_ack_that_raises_does_not_hurt_its_neighbours(
    store, acks, make_gate, caplog: pytest.LogCaptureFixture
) -> None:
    def bad_ack(outcome: object) -> None:
        raise RuntimeError("ack bug")

    gate = make_gate()
    store.client.submit(gate, acks.for_("gate"))
    gate.wait_entered()
    store.client.submit(ClaimInboundEvent("one", "m"), bad_ack)
    store.client.submit(ClaimInboundEvent("two", "m"), acks.for_("two"))
    gate.release.set()
    assert acks.wait_for(2)["two"] is True
    assert "the ack of ClaimInboundEvent raised" in caplog.text


def test_a_bare_write_message_is_a_batch_of_one(store, acks) -> None:
    ref = StoreWriter.start(store.path)
    try:
        ref.tell(Write(ClaimInboundEvent("bare", "m"), acks.for_("bare")))
        assert acks.wait_for(1)["bare"] is True
    finally:
        ref.stop(timeout=10)


def test_write_sync_timeout_withdraws_a_write_not_yet_taken(store, make_gate) -> None:
    gate = make_gate()
    store.client.submit(gate, lambda outcome: None)
    gate.wait_entered()
    with pytest.raises(RequestTimeout, match=r"not written.*withdrawn"):
        store.client.write_sync(ClaimInboundEvent("late", "m"), timeout=0.05)
    assert store.client.pending == 0
    gate.release.set()
    # Had it not been withdrawn, this claim would now be a duplicate.
    assert store.client.write_sync(ClaimInboundEvent("late", "m"), timeout=5) is True


def test_a_taken_write_cannot_be_withdrawn(store, make_gate) -> None:
    gate = make_gate()
    write = store.client.submit(gate, lambda outcome: None)
    gate.wait_entered()
    assert store.client.withdraw(write) is False
    gate.release.set()


def test_write_sync_timeout_on_a_taken_write_says_it_may_still_commit(store, make_gate) -> None:
    # The idle writer takes the gate at once; the timeout only has to outlast that.
    gate = make_gate()
    with pytest.raises(RequestTimeout, match="may still commit"):
        store.client.write_sync(gate, timeout=0.25)
    assert gate.entered.is_set()
    gate.release.set()
    assert store.client.write_sync(ClaimInboundEvent("x", "m"), timeout=5) is True


def test_a_stopped_writer_fails_writes_at_once(db_path) -> None:
    ref = StoreWriter.start(db_path)
    client = StoreClient(ref)
    client.write_sync(ClaimInboundEvent("a", "m"), timeout=5)
    ref.stop(timeout=10)
    with pytest.raises(StoreError, match="not running"):
        client.write_sync(ClaimInboundEvent("b", "m"), timeout=5)
    assert client.pending == 0


def test_invalid_max_batch_is_rejected(db_path) -> None:
    with pytest.raises(ValueError, match="max_batch"):
        StoreWriter(db_path, max_batch=0)


# -- from trio ---------------------------------------------------------------------------------


async def test_trio_writers_share_batches_and_dedupe(store) -> None:
    results: list[bool] = []

    async def claim(i: int) -> None:
        results.append(await store.client.write(ClaimInboundEvent(f"e{i % 25}", "m"), timeout=10))

    async with trio.open_nursery() as nursery:
        for i in range(100):
            nursery.start_soon(claim, i)
    assert len(results) == 100
    assert results.count(True) == 25


async def test_trio_write_raises_the_ops_error(store) -> None:
    with pytest.raises(ValueError, match="boom x"):
        await store.client.write(Boom("x"), timeout=5)
    assert await store.client.write(ClaimInboundEvent("x", "m"), timeout=5) is True


async def test_trio_write_timeout_and_cancel_withdraw_the_write(store, make_gate) -> None:
    gate = make_gate()
    store.client.submit(gate, lambda outcome: None)
    await trio.to_thread.run_sync(gate.wait_entered)
    with pytest.raises(RequestTimeout, match="withdrawn"):
        await store.client.write(AppendAuditEvent("timed-out"), timeout=0.05)
    with trio.move_on_after(0.05) as scope:
        await store.client.write(AppendAuditEvent("cancelled"), timeout=10)
    assert scope.cancelled_caught
    assert store.client.pending == 0
    gate.release.set()
    last = await store.client.write(AppendAuditEvent("kept"), timeout=5)
    reader = open_reader(store.path)
    try:
        assert [e.event_type for e in audit_events(reader)] == ["kept"]
        assert audit_events(reader)[-1].id == last
    finally:
        reader.close()


@dataclass(frozen=True)
class FillScratch:
    """About 2.4 MB of pages in a table of their own."""

    def apply(self, db: Database, /) -> None:
        db.execute("CREATE TABLE IF NOT EXISTS scratch (b BLOB)")
        db.conn.executemany("INSERT INTO scratch VALUES (randomblob(4000))", [()] * 600)


@dataclass(frozen=True)
class ReadScratch:
    """Reads every page of the scratch table: the writer's page cache fills."""

    def apply(self, db: Database, /) -> int:
        return int(db.execute("SELECT sum(length(b)) FROM scratch").fetchone()[0])


def sqlite_memory_used() -> int:
    """SQLite's own count of the bytes it has allocated in this process (every connection)."""
    [library] = {
        line.split()[-1]
        for line in Path("/proc/self/maps").read_text().splitlines()
        if "libsqlite3" in line
    }
    current, highest = ctypes.c_int64(), ctypes.c_int64()
    ctypes.CDLL(library).sqlite3_status64(0, ctypes.byref(current), ctypes.byref(highest), 0)
    return current.value


def test_the_writer_gives_back_its_page_cache_when_asked_and_keeps_writing(store) -> None:
    """Issue 28 s.3: ``release_cache`` empties the writer's page cache between batches (a burst's
    pages would stay cached for the host's life); the writes after it go on as before."""
    store.client.write_sync(FillScratch(), timeout=30)
    assert store.client.write_sync(ReadScratch(), timeout=30) == 600 * 4000
    cached = sqlite_memory_used()
    store.client.release_cache()
    store.client.write_sync(AppendAuditEvent("after"), timeout=10)  # taken after the release
    assert cached - sqlite_memory_used() > 1_000_000
    assert store.client.write_sync(ReadScratch(), timeout=30) == 600 * 4000
    reader = open_reader(store.path)
    try:
        assert [e.event_type for e in audit_events(reader)] == ["after"]
    finally:
        reader.close()
