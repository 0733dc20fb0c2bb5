"""The typed ops and queries: dedupe, the delivery ledger, turn attempts, the prompt queue."""

from __future__ import annotations

import itertools
import sqlite3

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from robota.core.store import (
    AppendAuditEvent,
    CancelPrompt,
    CancelRoutePrompts,
    ClaimInboundEvent,
    EnqueuePrompt,
    HeartbeatTurnAttempt,
    InsertTurnAttempt,
    RecordFinalDelivery,
    RecordProgressCard,
    SaveRouteState,
    StoreClient,
    StoreWriter,
    TakePrompt,
    TakeQueuedTurn,
    Together,
    UpdateTurnAttempt,
    audit_events,
    final_delivery,
    load_route_state,
    open_reader,
    pending_prompts,
    stale_turn_attempts,
    turn_attempt,
)


@pytest.fixture
def reader(store):
    db = open_reader(store.path)
    yield db
    db.close()


def test_claim_is_true_once_then_false_also_after_a_writer_restart(db_path) -> None:
    ref = StoreWriter.start(db_path)
    client = StoreClient(ref)
    assert client.write_sync(ClaimInboundEvent("evt-1", "message"), timeout=5) is True
    assert client.write_sync(ClaimInboundEvent("evt-1", "message"), timeout=5) is False
    ref.stop(timeout=10)

    ref = StoreWriter.start(db_path)
    try:
        client = StoreClient(ref)
        assert client.write_sync(ClaimInboundEvent("evt-1", "message"), timeout=5) is False
        assert client.write_sync(ClaimInboundEvent("evt-2", "message"), timeout=5) is True
    finally:
        ref.stop(timeout=10)


def test_final_delivery_is_recorded_exactly_once(store, reader) -> None:
    write = store.client.write_sync
    assert final_delivery(reader, "turn-1") is None
    assert write(RecordFinalDelivery("turn-1", ("m1", "m2"), at=10.0), timeout=5) is True
    assert write(RecordFinalDelivery("turn-1", ("m9",), at=11.0), timeout=5) is False
    entry = final_delivery(reader, "turn-1")
    assert entry is not None
    assert entry.delivered
    assert entry.final_message_ids == ("m1", "m2")  # the second attempt changed nothing
    assert entry.final_delivered_at == 10.0


def test_progress_cards_then_the_final_delivery_share_one_ledger_entry(store, reader) -> None:
    write = store.client.write_sync
    assert write(RecordProgressCard("turn-2", "card", "h1"), timeout=5) is True
    assert write(RecordProgressCard("turn-2", "card", "h1"), timeout=5) is False  # unchanged
    assert write(RecordProgressCard("turn-2", "card", "h2"), timeout=5) is True
    entry = final_delivery(reader, "turn-2")
    assert entry is not None
    assert not entry.delivered

    assert write(RecordFinalDelivery("turn-2", ("final",)), timeout=5) is True
    # A late progress update must not touch a delivered turn.
    assert write(RecordProgressCard("turn-2", "card", "h3"), timeout=5) is False
    entry = final_delivery(reader, "turn-2")
    assert entry is not None
    assert entry.delivered
    assert (entry.progress_message_id, entry.last_card_hash) == ("card", "h2")
    assert entry.final_message_ids == ("final",)


def test_turn_attempt_lifecycle_and_stale_heartbeats(store, reader) -> None:
    write = store.client.write_sync
    write(InsertTurnAttempt("a1", "t1", "tg:1", "hi", images=("/i.png",), at=100.0), timeout=5)
    write(InsertTurnAttempt("a2", "t1", "tg:1", "again", at=100.0), timeout=5)
    attempt = turn_attempt(reader, "a1")
    assert attempt is not None
    assert (attempt.status, attempt.images, attempt.heartbeat_at) == (
        "accepted",
        ("/i.png",),
        100.0,
    )

    assert write(UpdateTurnAttempt("a1", "running", remote_turn_id="rt-1", at=101.0), timeout=5)
    assert write(HeartbeatTurnAttempt("a1", at=150.0), timeout=5)
    assert write(UpdateTurnAttempt("a2", "failed", error="agent exited", at=102.0), timeout=5)
    assert write(UpdateTurnAttempt("a1", "recovering", add_recovery=True, at=160.0), timeout=5)

    attempt = turn_attempt(reader, "a1")
    assert attempt is not None
    assert attempt.status == "recovering"
    assert attempt.remote_turn_id == "rt-1"  # kept when not given again
    assert (attempt.recovery_count, attempt.retry_count) == (1, 0)
    assert attempt.updated_at == 160.0
    failed = turn_attempt(reader, "a2")
    assert failed is not None
    assert failed.error == "agent exited"

    # a2 is finished, so only a1 can be stale; and only once its heartbeat is old enough.
    assert [a.id for a in stale_turn_attempts(reader, heartbeat_before=200.0)] == ["a1"]
    assert stale_turn_attempts(reader, heartbeat_before=150.0) == []

    assert write(UpdateTurnAttempt("missing", "failed"), timeout=5) is False
    assert write(HeartbeatTurnAttempt("missing"), timeout=5) is False
    with pytest.raises(ValueError, match="unknown turn status"):
        write(UpdateTurnAttempt("a1", "exploded"), timeout=5)  # type: ignore[arg-type]


def test_route_state_round_trip(store, reader) -> None:
    assert load_route_state(reader, "tg:1") is None
    store.client.write_sync(SaveRouteState("tg:1", '{"n":1}'), timeout=5)
    store.client.write_sync(SaveRouteState("tg:1", '{"n":2}'), timeout=5)
    assert load_route_state(reader, "tg:1") == '{"n":2}'


def test_queued_prompts_are_taken_in_order_and_cancel_skips(store, reader) -> None:
    write = store.client.write_sync
    ids = [write(EnqueuePrompt("tg:1", f"p{i}"), timeout=5) for i in range(4)]
    other = write(EnqueuePrompt("tg:2", "elsewhere"), timeout=5)
    assert write(CancelPrompt(ids[1]), timeout=5) is True
    assert write(CancelPrompt(ids[1]), timeout=5) is False

    first = write(TakePrompt("tg:1"), timeout=5)
    assert first is not None
    assert (first.id, first.text, first.status) == (ids[0], "p0", "taken")
    assert write(CancelPrompt(ids[0]), timeout=5) is False  # taken prompts stay taken
    assert [p.text for p in pending_prompts(reader, "tg:1")] == ["p2", "p3"]

    assert write(CancelRoutePrompts("tg:1"), timeout=5) == 2
    assert write(TakePrompt("tg:1"), timeout=5) is None
    assert [p.id for p in pending_prompts(reader, "tg:2")] == [other]


def test_a_queued_prompt_becomes_a_turn_attempt_in_the_same_write(store, reader) -> None:
    write = store.client.write_sync
    assert write(TakeQueuedTurn("tg:1", "a0", "t1"), timeout=5) is None
    assert turn_attempt(reader, "a0") is None, "an empty queue records no attempt"
    write(EnqueuePrompt("tg:1", "look", images=("/tmp/x.png",)), timeout=5)
    write(EnqueuePrompt("tg:1", "then this"), timeout=5)

    taken = write(TakeQueuedTurn("tg:1", "a1", "t1", parent_id="a0"), timeout=5)
    assert taken is not None and taken.text == "look"
    attempt = turn_attempt(reader, "a1")
    assert attempt is not None
    assert (attempt.prompt, attempt.images, attempt.parent_id, attempt.status) == (
        "look",
        ("/tmp/x.png",),
        "a0",
        "accepted",
    )

    # The attempt cannot be written (its id is taken): the prompt is not taken either.
    with pytest.raises(sqlite3.IntegrityError):
        write(TakeQueuedTurn("tg:1", "a1", "t1"), timeout=5)
    assert [p.text for p in pending_prompts(reader, "tg:1")] == ["then this"]


def test_together_commits_all_or_nothing(store, reader) -> None:
    write = store.client.write_sync
    write(InsertTurnAttempt("a1", "t1", "tg:1", "hi"), timeout=5)
    failing = Together((RecordFinalDelivery("a1"), InsertTurnAttempt("a1", "t1", "tg:1", "dup")))
    with pytest.raises(sqlite3.IntegrityError):
        write(failing, timeout=5)
    assert write(RecordFinalDelivery("a1"), timeout=5) is True, "the failed write claimed nothing"
    both = Together((RecordFinalDelivery("a2"), UpdateTurnAttempt("a1", "running")))
    assert write(both, timeout=5) == (True, True)


def test_audit_events_page_in_append_order(store, reader) -> None:
    ids = [
        store.client.write_sync(AppendAuditEvent("turn.started", {"n": n}), timeout=5)
        for n in range(5)
    ]
    page = audit_events(reader, limit=3)
    rest = audit_events(reader, after_id=page[-1].id)
    assert [e.id for e in page + rest] == ids
    assert [e.payload for e in page + rest] == [{"n": n} for n in range(5)]


# -- the queue as a property -------------------------------------------------------------------

_queue_ops = st.lists(
    st.one_of(
        st.tuples(st.just("enqueue"), st.text(max_size=4)),
        st.tuples(st.just("cancel"), st.integers(min_value=0, max_value=40)),
        st.tuples(st.just("take"), st.just(0)),
    ),
    min_size=3,
    max_size=60,
)


def test_any_interleaving_keeps_fifo_order_of_the_survivors(store, reader) -> None:
    """Whatever mix of enqueue, cancel and take: takes return the oldest surviving prompt,
    cancel succeeds exactly on pending prompts, and what is left is the survivors in order."""
    routes = (f"route-{n}" for n in itertools.count())
    write = store.client.write_sync

    @settings(
        max_examples=100,
        deadline=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture],
    )
    @given(ops=_queue_ops)
    def check(ops: list[tuple[str, object]]) -> None:
        route = next(routes)
        enqueued: list[int] = []
        model: list[tuple[int, str]] = []  # pending, oldest first
        for kind, arg in ops:
            if kind == "enqueue":
                text = str(arg)
                prompt_id = write(EnqueuePrompt(route, text), timeout=5)
                enqueued.append(prompt_id)
                model.append((prompt_id, text))
            elif kind == "cancel" and enqueued:
                target = enqueued[int(str(arg)) % len(enqueued)]
                was_pending = any(pid == target for pid, _ in model)
                assert write(CancelPrompt(target), timeout=5) is was_pending
                model = [(pid, text) for pid, text in model if pid != target]
            elif kind == "take":
                taken = write(TakePrompt(route), timeout=5)
                expected = model.pop(0) if model else None
                assert (None if taken is None else (taken.id, taken.text)) == expected
        assert [(p.id, p.text) for p in pending_prompts(reader, route)] == model

    check()
