"""What a restarted chat transport reopens, by table (``recovery_plan``, pure)."""

from __future__ import annotations

import pytest

from robota.core.frontend import RecoveredTurn, recovery_plan
from robota.core.store import TurnAttempt

ROUTE = "chat:1"


def attempt(
    id_: str,
    status: str,
    *,
    anchor: str | None = None,
    prompt: str = "hello",
    route: str = ROUTE,
    final: str | None = None,
    error: str | None = None,
) -> TurnAttempt:
    return TurnAttempt(
        id=id_,
        task_id="task-1",
        route_key=route,
        status=status,  # type: ignore[arg-type]
        prompt=prompt,
        images=(),
        anchor_message_id=anchor,
        remote_turn_id="rt-" + id_,
        retry_count=0,
        recovery_count=0,
        error=error,
        heartbeat_at=None,
        created_at=100.0,
        updated_at=100.0,
        final_text=final,
    )


def row(plan: list[RecoveredTurn]) -> list[tuple[str, str | None, tuple[str, ...], str | None]]:
    """(attempt, anchor, messages, the end told at once) of each reopened card."""
    return [(p.attempt.id, p.anchor, p.messages, p.ended.status if p.ended else None) for p in plan]


CONTINUED = "Earlier the turn was cut short.\n\nhello"


@pytest.mark.parametrize(
    ("unsettled", "expected"),
    [
        # A running turn with its message: its card reopens and runs on.
        ([(attempt("a1", "running", anchor="m1"), "card1")], [("a1", "m1", ("m1",), None)]),
        # A turn that completed while nobody delivered its answer: ended from the store.
        (
            [(attempt("a1", "completed", anchor="m1", final="done"), "card1")],
            [("a1", "m1", ("m1",), "completed")],
        ),
        # Interrupted or failed without a card: nothing to reopen.
        ([(attempt("a1", "interrupted", anchor="m1"), None)], []),
        ([(attempt("a1", "failed", anchor="m1"), None)], []),
        # ... with a card's send claimed and never recorded ("": the run was killed between
        # the platform creating the card and its record): that card may exist, it goes
        # terminal too, settling no message (a successor may have answered it already).
        ([(attempt("a1", "interrupted", anchor="m1"), "")], [("a1", "m1", (), "interrupted")]),
        ([(attempt("a1", "failed", anchor="m1"), "")], [("a1", "m1", (), "failed")]),
        (
            [
                (attempt("a1", "interrupted", anchor="m1"), ""),
                (attempt("a2", "completed", anchor="m1", prompt=CONTINUED, final="x"), None),
            ],
            [("a1", "m1", (), "interrupted"), ("a2", "m1", ("m1",), "completed")],
        ),
        # A running or completed turn's claimed card settles as an unknown one always did.
        ([(attempt("a1", "running", anchor="m1"), "")], [("a1", "m1", ("m1",), None)]),
        # ... with a card: it goes terminal.
        (
            [(attempt("a1", "failed", anchor="m1", error="boom"), "card1")],
            [("a1", "m1", ("m1",), "failed")],
        ),
        # A completed turn without a card still delivers its answer (no anchor: to the chat).
        ([(attempt("a1", "completed", final="x"), None)], [("a1", None, (), "completed")]),
        # The continued turn answers its interrupted predecessor's message, and settles it;
        # the predecessor's card goes terminal without settling it.
        (
            [
                (attempt("a1", "interrupted", anchor="m1"), "card1"),
                (attempt("a2", "recovering", prompt=CONTINUED), None),
            ],
            [("a1", "m1", (), "interrupted"), ("a2", "m1", ("m1",), None)],
        ),
        # A predecessor on another route is not this one's.
        (
            [
                (attempt("a1", "interrupted", anchor="m1", route="chat:2"), "card1"),
                (attempt("a2", "running", prompt=CONTINUED), None),
            ],
            [("a1", "m1", ("m1",), "interrupted"), ("a2", None, (), None)],
        ),
        # A prompt that does not end with the predecessor's is a turn of its own.
        (
            [
                (attempt("a1", "interrupted", anchor="m1", prompt="other"), "card1"),
                (attempt("a2", "running", prompt="hello"), None),
            ],
            [("a1", "m1", ("m1",), "interrupted"), ("a2", None, (), None)],
        ),
        # An anchored running turn keeps its own message.
        (
            [
                (attempt("a1", "interrupted", anchor="m1"), "card1"),
                (attempt("a2", "running", anchor="m2", prompt=CONTINUED), None),
            ],
            [("a1", "m1", ("m1",), "interrupted"), ("a2", "m2", ("m2",), None)],
        ),
        # An accepted turn is still active: its route tells its end.
        ([(attempt("a1", "accepted", anchor="m1"), None)], [("a1", "m1", ("m1",), None)]),
    ],
)
def test_the_recovery_plan(
    unsettled: list[tuple[TurnAttempt, str | None]],
    expected: list[tuple[str, str | None, tuple[str, ...], str | None]],
) -> None:
    assert row(recovery_plan(unsettled)) == expected


def test_the_plan_says_which_turn_continues_which() -> None:
    plan = recovery_plan(
        [
            (attempt("a1", "interrupted", anchor="m1"), "card1"),
            (attempt("a2", "running", prompt=CONTINUED), None),
        ]
    )
    assert [(p.attempt.id, p.continues, p.continued) for p in plan] == [
        ("a1", False, True),
        ("a2", True, False),
    ]


def test_the_end_told_from_the_store_carries_the_answer_or_the_error() -> None:
    (done,) = recovery_plan([(attempt("a1", "completed", final="the answer"), "c")])
    assert done.ended is not None
    assert (done.ended.final_text, done.ended.error, done.ended.turn_id) == (
        "the answer",
        None,
        "rt-a1",
    )
    (failed,) = recovery_plan([(attempt("a1", "failed", final="partial", error="boom"), "c")])
    assert failed.ended is not None and failed.ended.error is not None
    assert (failed.ended.final_text, failed.ended.error.message) == (None, "boom")


def test_skipped_attempts_are_not_reopened_nor_continued() -> None:
    unsettled = [
        (attempt("a1", "interrupted", anchor="m1"), "card1"),
        (attempt("a2", "running", prompt=CONTINUED), None),
    ]
    assert row(recovery_plan(unsettled, skip=frozenset({"a2"}))) == [
        ("a1", "m1", ("m1",), "interrupted")
    ]


def test_a_continued_turn_anchored_to_its_predecessors_message_continues_it() -> None:
    """Since the inbox, a continued turn's attempt names the message it answers: its
    predecessor's. The predecessor's card goes terminal without settling it; the continued
    turn settles it."""
    unsettled = [
        (attempt("a1", "interrupted", anchor="m1"), "card1"),
        (attempt("a2", "running", anchor="m1", prompt=CONTINUED), None),
    ]
    assert row(recovery_plan(unsettled)) == [
        ("a1", "m1", (), "interrupted"),
        ("a2", "m1", ("m1",), None),
    ]
    assert [(p.continues, p.continued) for p in recovery_plan(unsettled)] == [
        (False, True),
        (True, False),
    ]
