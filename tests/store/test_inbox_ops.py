"""A chat transport's inbox: a message accepted with its claims in one write, consumed by the
write that gives it its effect, fed again while unconsumed, settled once its turn ended."""

from __future__ import annotations

import pytest

from robota.core.store import (
    AcceptInbound,
    AnchorTurnAttempt,
    CancelPrompt,
    ConsumeInbox,
    EnqueuePrompt,
    FinishTurnAttempt,
    InsertTurnAttempt,
    PruneInbox,
    RecordFinalDelivery,
    RelinkInbox,
    SettleInbox,
    TakeQueuedTurn,
    event_claimed,
    open_reader,
    settled_outcome,
    turn_attempt,
    unconsumed_inbox,
    unsettled_inbox,
)

ROUTE = "feishu:chat_id:oc_1"


@pytest.fixture
def reader(store):
    db = open_reader(store.path)
    yield db
    db.close()


def accept(n: int, *, event: str | None = None, message: str | None = None) -> AcceptInbound:
    return AcceptInbound(
        event or f"ev{n}",
        message or f"feishu-message:om_{n}",
        "feishu",
        ROUTE,
        f"om_{n}",
        f'{{"n": {n}}}',
        message_kind="message_id",
    )


def test_a_message_is_accepted_once_with_its_claims(store, reader) -> None:
    write = store.client.write_sync
    first = write(accept(1), timeout=5)
    assert isinstance(first, int)
    assert event_claimed(reader, "ev1") and event_claimed(reader, "feishu-message:om_1")
    # A redelivery, and a second event about the same message, keep nothing.
    assert write(accept(1), timeout=5) is None
    assert write(accept(1, event="ev1-again"), timeout=5) is None
    # One that came by another transport is not this one's.
    write(
        AcceptInbound("sl1", "slack-message:C1:1.5", "slack", "slack:C1", "C1:1.5", "{}"),
        timeout=5,
    )
    (row,) = unconsumed_inbox(reader, "feishu")
    assert (row.id, row.route_key, row.message_id) == (first, ROUTE, "om_1")
    assert row.payload == '{"n": 1}'  # the event as it came, parsed again when fed again


def test_unconsumed_messages_are_fed_again_in_the_order_they_came(store, reader) -> None:
    write = store.client.write_sync
    ids = [write(accept(n), timeout=5) for n in (1, 2, 3)]
    assert write(ConsumeInbox(ids[1]), timeout=5) is True
    assert write(ConsumeInbox(ids[1]), timeout=5) is False, "consumed once"
    assert [r.message_id for r in unconsumed_inbox(reader, "feishu")] == ["om_1", "om_3"]


def test_rows_consumed_long_ago_are_forgotten(store, reader) -> None:
    write = store.client.write_sync
    old, new, waiting = (write(accept(n), timeout=5) for n in (1, 2, 3))
    write(ConsumeInbox(old, at=10.0), timeout=5)
    write(ConsumeInbox(new, at=30.0), timeout=5)
    assert write(PruneInbox("feishu", 20.0), timeout=5) == 1
    assert write(PruneInbox("slack", 40.0), timeout=5) == 0
    assert [r.message_id for r in unconsumed_inbox(reader, "feishu")] == ["om_3"]
    assert write(ConsumeInbox(old), timeout=5) is False, "gone"
    assert waiting is not None


def attempt(attempt_id: str, **fields: object) -> InsertTurnAttempt:
    return InsertTurnAttempt(attempt_id, "t1", ROUTE, "hello", **fields)  # type: ignore[arg-type]


def test_the_turns_attempt_consumes_the_message_and_a_successor_takes_it_over(
    store, reader
) -> None:
    write = store.client.write_sync
    inbox = write(accept(1), timeout=5)
    write(attempt("a1", inbox=inbox, anchor_message_id="om_1"), timeout=5)
    assert unconsumed_inbox(reader, "feishu") == []
    # A retry or a continued turn answers the same message.
    write(attempt("a2", takes_over="a1", recovery_count=1), timeout=5)
    found = turn_attempt(reader, "a2")
    assert found is not None and found.recovery_count == 1
    write(FinishTurnAttempt("a2", "completed", final_text="done"), timeout=5)
    assert unsettled_inbox(reader, "feishu", ":feishu") == [], "its card's answer is not out"
    write(RecordFinalDelivery("a2:feishu"), timeout=5)
    ((row, outcome),) = unsettled_inbox(reader, "feishu", ":feishu")
    assert (row.message_id, row.attempt_id, outcome) == ("om_1", "a2", "completed")
    assert write(SettleInbox("feishu-message:om_1"), timeout=5) is True
    assert unsettled_inbox(reader, "feishu", ":feishu") == []
    assert write(RelinkInbox("a2", "a3"), timeout=5) == 1


def test_a_queued_prompt_consumes_the_message_and_its_turn_answers_it(store, reader) -> None:
    write = store.client.write_sync
    inbox = write(accept(1), timeout=5)
    write(EnqueuePrompt(ROUTE, "hello", message_id="om_1", inbox=inbox), timeout=5)
    assert unconsumed_inbox(reader, "feishu") == []
    assert unsettled_inbox(reader, "feishu", ":feishu") == [], "it waits"
    prompt = write(TakeQueuedTurn(ROUTE, "a1", "t1"), timeout=5)
    assert prompt is not None
    taken = turn_attempt(reader, "a1")
    assert taken is not None and taken.anchor_message_id == "om_1"
    write(FinishTurnAttempt("a1", "failed", error="boom"), timeout=5)
    write(RecordFinalDelivery("a1:feishu"), timeout=5)
    ((row, outcome),) = unsettled_inbox(reader, "feishu", ":feishu")
    assert (row.attempt_id, outcome) == ("a1", "failed")


def test_a_cancelled_prompt_and_a_command_are_over_at_once(store, reader) -> None:
    write = store.client.write_sync
    queued, command, door = (write(accept(n), timeout=5) for n in (1, 2, 3))
    prompt_id = write(EnqueuePrompt(ROUTE, "hello", inbox=queued), timeout=5)
    write(CancelPrompt(prompt_id), timeout=5)
    write(ConsumeInbox(command), timeout=5)
    write(ConsumeInbox(door, via="door"), timeout=5)  # a team's door: no turn yet
    outcomes = [(r.message_id, o) for r, o in unsettled_inbox(reader, "feishu", ":feishu")]
    assert outcomes == [("om_1", "interrupted"), ("om_2", "completed")]


def test_a_team_requests_turn_answers_the_message_its_door_took_in(store, reader) -> None:
    write = store.client.write_sync
    inbox = write(accept(1), timeout=5)
    write(ConsumeInbox(inbox, via="door"), timeout=5)
    write(attempt("a1"), timeout=5)
    write(AnchorTurnAttempt("a1", "om_1"), timeout=5)  # the transport's card found its message
    write(FinishTurnAttempt("a1", "completed", final_text="done"), timeout=5)
    write(RecordFinalDelivery("a1:feishu"), timeout=5)
    ((row, outcome),) = unsettled_inbox(reader, "feishu", ":feishu")
    assert (row.attempt_id, outcome) == ("a1", "completed")


@pytest.mark.parametrize(
    ("turn", "prompt", "delivered", "has_turn", "has_prompt", "door", "expected"),
    [
        ("completed", None, True, True, False, False, "completed"),
        ("failed", None, True, True, False, False, "failed"),
        ("interrupted", None, True, True, False, False, "interrupted"),
        ("completed", None, False, True, False, False, None),  # its card will settle it
        ("running", None, False, True, False, False, None),
        (None, None, False, True, False, False, None),  # its attempt is gone: nothing to say
        (None, "pending", False, False, True, False, None),  # still queued
        (None, "taken", False, False, True, False, None),
        (None, "cancelled", False, False, True, False, "interrupted"),
        (None, None, False, False, False, False, "completed"),  # a command, a reply
        (None, None, False, False, False, True, None),  # a team's door's, no turn yet
    ],
)
def test_how_a_consumed_message_ended(  # noqa: PLR0917 (the table)
    turn: str | None,
    prompt: str | None,
    delivered: bool,
    has_turn: bool,
    has_prompt: bool,
    door: bool,
    expected: str | None,
) -> None:
    outcome = settled_outcome(
        turn, prompt, delivered=delivered, has_turn=has_turn, has_prompt=has_prompt, by_door=door
    )
    assert outcome == expected
