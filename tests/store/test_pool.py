"""``ReaderPool``: a few reader connections lent per read, on a real store file."""

from __future__ import annotations

import sqlite3
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from robota.core import StoreError
from robota.core.store import ClaimInboundEvent, ReaderPool, event_claimed


def test_reads_see_each_commit_and_refuse_writes(store) -> None:
    pool = ReaderPool(store.path)
    try:
        with pool.reading() as db:
            assert not event_claimed(db, "e1")
            assert db.execute("PRAGMA cache_size").fetchone()[0] == -256
        store.client.write_sync(ClaimInboundEvent("e1", "message"), timeout=5)
        with pool.reading() as db:
            assert event_claimed(db, "e1")
            with pytest.raises(sqlite3.OperationalError, match="readonly"):
                db.execute(
                    "INSERT INTO inbound_event_receipts (event_id, kind, received_at) "
                    "VALUES ('e2', 'k', 0)"
                )
    finally:
        pool.close()


def test_one_connection_serves_reads_one_after_another(store) -> None:
    pool = ReaderPool(store.path)
    try:
        seen = set()
        for _ in range(10):
            with pool.reading() as db:
                seen.add(id(db))
        assert len(seen) == 1
        assert pool.opened == 1
    finally:
        pool.close()


def test_threads_reading_at_once_share_at_most_size_connections(store) -> None:
    store.client.write_sync(ClaimInboundEvent("e1", "message"), timeout=5)
    pool = ReaderPool(store.path, size=3)
    inside = 0
    most = 0
    lock = threading.Lock()
    holding = threading.Barrier(4)
    release = threading.Event()

    def read(hold: bool) -> bool:
        nonlocal inside, most
        with pool.reading() as db:
            with lock:
                inside += 1
                most = max(most, inside)
            if hold:
                holding.wait(10)
                release.wait(10)
            claimed = event_claimed(db, "e1")
            with lock:
                inside -= 1
        return claimed

    try:
        with ThreadPoolExecutor(12) as threads:
            first = [threads.submit(read, True) for _ in range(3)]
            holding.wait(10)  # all three connections are lent
            rest = [threads.submit(read, False) for _ in range(40)]
            release.set()
            results = [f.result(timeout=20) for f in first + rest]
        assert all(results)
        assert most == 3
        assert pool.opened == 3
    finally:
        pool.close()


def test_a_borrower_waits_for_a_free_connection_then_gives_up(store) -> None:
    pool = ReaderPool(store.path, size=1, timeout=0.2)
    try:
        with (
            pool.reading(),
            pytest.raises(StoreError, match=r"no reader .* free within 0\.2 s"),
            pool.reading(),
        ):
            pass
        # The one connection is back and lent again.
        with pool.reading() as db:
            assert db.execute("SELECT 1").fetchone()[0] == 1
    finally:
        pool.close()


def test_a_waiting_borrower_gets_the_connection_given_back(store) -> None:
    pool = ReaderPool(store.path, size=1)
    lent = threading.Event()
    back = threading.Event()
    got: list[int] = []

    def holder() -> None:
        with pool.reading():
            lent.set()
            back.wait(10)

    def waiter() -> None:
        with pool.reading() as db:
            got.append(db.execute("SELECT 1").fetchone()[0])

    try:
        first = threading.Thread(target=holder)
        first.start()
        assert lent.wait(10)
        second = threading.Thread(target=waiter)
        second.start()
        back.set()
        first.join(10)
        second.join(10)
        assert got == [1]
        assert pool.opened == 1
    finally:
        pool.close()


def test_a_failed_read_returns_a_good_connection(store) -> None:
    pool = ReaderPool(store.path, size=1)
    try:
        with pytest.raises(sqlite3.OperationalError), pool.reading() as db:
            broken = db
            db.execute("SELECT * FROM no_such_table")
        # The connection the error went through is closed, not lent again.
        with pytest.raises(sqlite3.ProgrammingError):
            broken.execute("SELECT 1")
        with pool.reading() as db:
            assert db is not broken
            assert db.execute("SELECT 1").fetchone()[0] == 1
        assert pool.opened == 1
    finally:
        pool.close()


def test_a_connection_left_in_a_transaction_is_not_lent_again(store) -> None:
    pool = ReaderPool(store.path, size=1)
    try:
        with pool.reading() as db:
            pinned = db
            db.execute("BEGIN")
            assert not event_claimed(db, "e1")
        store.client.write_sync(ClaimInboundEvent("e1", "message"), timeout=5)
        with pool.reading() as db:
            assert db is not pinned
            assert event_claimed(db, "e1")
    finally:
        pool.close()


def test_a_closed_pool_closes_every_connection_and_opens_again_on_need(store) -> None:
    pool = ReaderPool(store.path)
    with pool.reading() as lent:
        with pool.reading() as idle:
            pass
        pool.close()
        with pytest.raises(sqlite3.ProgrammingError):
            idle.execute("SELECT 1")
        assert lent.execute("SELECT 1").fetchone()[0] == 1
    with pytest.raises(sqlite3.ProgrammingError):
        lent.execute("SELECT 1")
    assert pool.opened == 0
    with pool.reading() as db:
        assert db.execute("SELECT 1").fetchone()[0] == 1
    assert pool.opened == 1
    pool.close()
    assert pool.opened == 0


def test_a_missing_store_is_an_error_and_leaves_the_pool_usable(tmp_path) -> None:
    pool = ReaderPool(tmp_path / "none.db", size=1, timeout=0.2)
    with pytest.raises(StoreError, match="no such file"), pool.reading():
        pass
    # The slot the failed open took is free again: the next one fails the same way, not by
    # waiting for a connection that never was.
    with pytest.raises(StoreError, match="no such file"), pool.reading():
        pass
    assert pool.opened == 0


@pytest.mark.parametrize("size", [0, -1])
def test_size_must_be_positive(tmp_path, size: int) -> None:
    with pytest.raises(ValueError, match="size"):
        ReaderPool(tmp_path / "x.db", size=size)
