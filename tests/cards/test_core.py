"""The card policy on a hand-held clock: spacing, critical updates, coalescing, unchanged skip,
backoff, the terminal flush, the final answer once, approval tokens and restarts."""

from __future__ import annotations

import json

import pytest

from robota.core.cards import (
    CardPolicy,
    CardShown,
    CardTurn,
    DeliverFinal,
    FinalAnswerDelivered,
    FinalAnswerFailed,
    ProgressCardPosted,
    Restored,
    ShowCard,
    TurnCard,
)
from robota.core.events import (
    ApprovalRequested,
    ApprovalResolved,
    TextDelta,
    ToolStarted,
    TurnCompleted,
    TurnStarted,
    Usage,
    UsageUpdated,
)
from robota.core.store import (
    CardAction,
    FinalDelivery,
    RetireCardActions,
    SaveTurnSnapshot,
    TurnSnapshot,
)

from ._harness import (
    Clock,
    Driver,
    TinyPlatform,
    Tokens,
    fail_first,
    permanent,
    transient,
)

TURN = CardTurn("t1", "task-1", "route-1")


def make(script=None, *, restored: Restored | None = None, **policy) -> Driver:
    clock = Clock()
    card = TurnCard(
        TURN,
        TinyPlatform(),
        policy=CardPolicy(**policy),
        clock=clock,
        wall=clock,
        token=Tokens(),
        restored=restored,
    )
    driver = Driver(card, clock) if script is None else Driver(card, clock, script=script)
    driver.start()
    return driver


def at(driver: Driver, when: float, event) -> None:
    driver.advance(when)
    driver.event(event)


def test_updates_go_out_at_once_then_at_most_every_two_seconds() -> None:
    d = make()
    at(d, 0.0, TurnStarted("t1"))
    for n, when in enumerate([0.1, 0.5, 1.0, 1.9]):
        at(d, when, TextDelta("m", f"part {n} "))
    assert d.shows() == [0.0]
    assert d.card.next_wake() == 2.0
    d.advance(10)
    assert d.shows() == [0.0, 2.0]
    assert d.screen.card["messages"] == ["part 0 part 1 part 2 part 3 "]
    at(d, 10.0, TextDelta("m", "later"))
    assert d.shows() == [0.0, 2.0, 10.0]  # long after the last one: at once


def test_critical_changes_wait_only_half_a_second() -> None:
    d = make()
    at(d, 0.0, TurnStarted("t1"))
    at(d, 0.1, TextDelta("m", "asking"))
    at(d, 0.2, ApprovalRequested("a1", "command", "run rm", command="rm -rf build"))
    assert d.card.next_wake() == 0.5
    d.advance(0.49)
    assert d.shows() == [0.0]
    d.advance(0.5)
    assert d.shows() == [0.0, 0.5]
    assert d.screen.card["state"] == "approval"
    assert set(d.screen.card["buttons"]["a1"]) == {
        "accept",
        "accept_for_session",
        "decline",
        "cancel",
    }


def test_offers_coalesce_and_the_latest_state_wins() -> None:
    d = make()
    at(d, 0.0, TurnStarted("t1"))
    for n in range(200):
        at(d, n / 100, ToolStarted(f"c{n}", "command", "run"))
    d.advance(2.0)
    assert d.shows() == [0.0, 2.0]
    assert len(d.screen.card["tools"]) == 200
    assert d.screen.card == d.card.platform.render(
        d.card.view, elapsed=None, approval_tokens=d.card.tokens()
    )


def test_an_unchanged_render_is_skipped_and_keeps_the_spacing_free() -> None:
    d = make()
    at(d, 0.0, TurnStarted("t1"))
    at(d, 0.1, UsageUpdated(Usage(total_tokens=5)))  # not on this card
    d.advance(5.0)
    assert d.shows() == [0.0]
    assert d.card.view.usage == Usage(total_tokens=5)
    at(d, 5.0, TextDelta("m", "news"))
    assert d.shows() == [0.0, 5.0]


def test_transient_failures_back_off_2_4_8_16_30_then_30() -> None:
    d = make(fail_first(7, transient()))
    at(d, 0.0, TurnStarted("t1"))
    d.advance(120.5)
    failed = [t for t, kind, _ in d.screen.log if kind == "show-failed"]
    assert failed == [0.0, 2.0, 6.0, 14.0, 30.0, 60.0, 90.0]
    assert d.shows() == [120.0]
    # A success resets the series: the next update follows the normal spacing.
    at(d, 121.0, TextDelta("m", "x"))
    d.advance(200)
    assert d.shows() == [120.0, 122.0]


def test_retry_after_from_the_platform_is_respected_when_longer() -> None:
    d = make(fail_first(2, transient(retry_after=11.0)))
    at(d, 0.0, TurnStarted("t1"))
    d.advance(100)
    failed = [t for t, kind, _ in d.screen.log if kind == "show-failed"]
    assert failed == [0.0, 11.0]
    assert d.shows() == [22.0]


def test_the_terminal_state_is_flushed_even_through_failures_and_before_the_answer() -> None:
    d = make()
    d.auto = False
    at(d, 0.0, TurnStarted("t1"))
    at(d, 0.1, TextDelta("m", "done: 42", "final"))
    d.script = fail_first(3, transient())
    at(d, 0.2, TurnCompleted("t1", "completed", final_item_id="m"))
    d.auto = True
    d.answer()  # the first card (started) fails; the terminal one waits behind it
    d.advance(100)
    kinds = [kind for _, kind, _ in d.screen.log]
    assert kinds == ["show-failed", "show-failed", "show-failed", "show", "final"]
    last_show = next(p for _, kind, p in reversed(d.screen.log) if kind == "show")
    assert last_show["state"] == "completed"
    assert d.screen.finals == [("done: 42",)]
    assert [n for n in d.notices if isinstance(n, FinalAnswerDelivered)] == [
        FinalAnswerDelivered("t1", ("f0",), "card-1")
    ]


def test_the_final_answer_waits_for_the_terminal_card_then_goes_once() -> None:
    d = make()
    d.auto = False
    at(d, 0.0, TurnStarted("t1"))
    at(d, 0.1, TextDelta("m", "a long answer that needs chunks", "final"))
    at(d, 0.2, TurnCompleted("t1", "completed", final_item_id="m"))
    # The first card is still in flight: nothing else may go yet.
    assert [type(r).__name__ for _, r in d.requests] == ["ShowCard"]
    d.answer()
    d.advance(0.5)
    d.answer()
    kinds = [type(r).__name__ for _, r in d.requests]
    assert kinds == ["ShowCard", "ShowCard", "DeliverFinal"]
    assert d.requests[1][0] == 0.5  # the terminal state is critical
    d.answer()
    final = d.requests[2][1]
    assert isinstance(final, DeliverFinal)
    assert "".join(final.chunks) == "a long answer that needs chunks"
    assert len(final.chunks) == 4
    # Nothing more, whatever happens next.
    at(d, 50, TextDelta("m", " late"))
    d.advance(500)
    assert len(d.requests) == 3
    assert d.card.done
    assert sum(isinstance(n, FinalAnswerDelivered) for n in d.notices) == 1


def test_a_transient_final_failure_is_retried_with_backoff() -> None:
    finals = [0]

    def script(request):
        if isinstance(request, DeliverFinal):
            finals[0] += 1
            if finals[0] <= 3:
                return transient(retry_after=5.0 if finals[0] == 3 else None)()
        return None

    d = make(script)
    at(d, 0.0, TurnCompleted("t1", "completed", final_text="answer"))
    d.advance(100)
    finals_log = [(t, kind) for t, kind, _ in d.screen.log if kind.startswith("final")]
    assert finals_log == [
        (0.0, "final-failed"),
        (2.0, "final-failed"),
        (6.0, "final-failed"),
        (14.0, "final"),  # 8 s after the third failure: longer than its retry_after of 5
    ]
    assert sum(isinstance(n, FinalAnswerDelivered) for n in d.notices) == 1


def test_a_permanent_final_failure_is_reported_not_retried() -> None:
    d = make(lambda r: permanent()() if isinstance(r, DeliverFinal) else None)
    at(d, 0.0, TurnCompleted("t1", "failed", final_text="x"))
    d.advance(500)
    assert [kind for _, kind, _ in d.screen.log] == ["show", "final-failed"]
    assert d.notices[-1] == FinalAnswerFailed("t1", "message deleted")
    assert d.card.done


def test_final_retries_are_bounded() -> None:
    d = make(lambda r: transient()() if isinstance(r, DeliverFinal) else None, final_attempts=4)
    at(d, 0.0, TurnCompleted("t1", "completed", final_text="x"))
    d.advance(10_000)
    assert [kind for _, kind, _ in d.screen.log].count("final-failed") == 4
    assert isinstance(d.notices[-1], FinalAnswerFailed)


def test_a_terminal_card_refused_for_good_does_not_hold_the_answer_forever() -> None:
    d = make(lambda r: permanent()() if isinstance(r, ShowCard) else None)
    at(d, 0.0, TurnCompleted("t1", "completed", final_text="the answer"))
    d.advance(1000)
    kinds = [kind for _, kind, _ in d.screen.log]
    assert kinds == ["show-failed", "show-failed", "show-failed", "final"]
    assert d.card.done


def test_approval_buttons_get_tokens_that_are_retired_when_answered_or_the_turn_ends() -> None:
    d = make()
    at(d, 0.0, TurnStarted("t1"))
    at(d, 1.0, ApprovalRequested("a1", "command", "run", decisions=("accept", "decline")))
    at(d, 1.1, ApprovalRequested("a2", "file_change", "edit"))
    d.advance(2.0)
    show = d.requests[-1][1]
    assert isinstance(show, ShowCard)
    assert show.payload["buttons"] == {
        "a1": {"accept": "tok-1", "decline": "tok-2"},
        "a2": {
            "accept": "tok-3",
            "accept_for_session": "tok-4",
            "decline": "tok-5",
            "cancel": "tok-6",
        },
    }
    assert {(b.token, b.action) for b in show.actions} >= {
        ("tok-1", CardAction("t1", "a1", "accept")),
        ("tok-6", CardAction("t1", "a2", "cancel")),
    }
    assert all(b.expires_at == pytest.approx(1.0 + 7 * 24 * 3600) for b in show.actions[:2])
    at(d, 3.0, ApprovalResolved("a1", "accept"))
    assert RetireCardActions("t1", "a1", "resolved", 3.0) in d.ops
    d.advance(5.0)
    assert list(d.screen.card["buttons"]) == ["a2"]
    at(d, 6.0, TurnCompleted("t1", "interrupted"))
    assert RetireCardActions("t1", None, "turn_ended", 6.0) in d.ops
    d.advance(10)
    assert d.screen.card["buttons"] == {}
    assert d.requests[-2][1].actions == ()


@pytest.mark.parametrize(("interval", "versions"), [(10.0, [1, 5]), (0.0, [1, 3, 5])])
def test_snapshots_go_with_newer_cards_at_most_every_interval_and_before_the_answer(
    interval: float, versions: list[int]
) -> None:
    d = make(snapshot_interval=interval)
    at(d, 0.0, TurnStarted("t1"))
    at(d, 0.5, UsageUpdated(Usage(total_tokens=1)))  # skipped render: no snapshot either
    d.advance(3)
    at(d, 3.0, TextDelta("m", "hello", "final"))
    at(d, 4.0, TurnCompleted("t1", "completed", final_item_id="m"))
    d.advance(10)
    saves = [op for op in d.ops if isinstance(op, SaveTurnSnapshot)]
    assert [op.version for op in saves] == versions
    assert saves[-1].version == d.card.view.version
    assert isinstance(d.requests[-1][1], DeliverFinal)
    assert d.card.snapshot() is None  # nothing newer to save


def test_a_restart_after_the_answer_went_out_sends_nothing() -> None:
    ledger = FinalDelivery("t1", "card-9", ("f1", "f2"), 5.0, "h")
    d = make(restored=Restored(ledger=ledger))
    assert d.notices == [FinalAnswerDelivered("t1", ("f1", "f2"), "card-9", already=True)]
    at(d, 1.0, TextDelta("m", "late"))
    at(d, 2.0, TurnCompleted("t1", "completed", final_text="again"))
    d.advance(100)
    assert d.requests == []


def test_a_restart_continues_the_view_and_reuses_live_tokens() -> None:
    first = make()
    at(first, 0.0, TurnStarted("t1"))
    at(first, 0.1, ApprovalRequested("a1", "command", "run"))
    first.advance(1.0)  # the approval's buttons are on the card
    at(first, 1.0, TextDelta("m", "working"))  # not yet on the card
    snapshot_op = first.card.snapshot()
    assert snapshot_op is not None
    snapshot = TurnSnapshot("t1", "task-1", json.loads(snapshot_op.snapshot_json), 0.3)
    shown = [r for _, r in first.requests if isinstance(r, ShowCard)]
    live = tuple(("card-1", binding) for binding in shown[-1].actions)
    assert len(live) == 4
    ledger = FinalDelivery("t1", "card-1", (), None, "h")
    second = make(restored=Restored(snapshot, ledger, live))
    # At once, with everything the predecessor knew, and the same buttons.
    assert [type(r).__name__ for _, r in second.requests] == ["ShowCard"]
    assert second.screen.card["messages"] == ["working"]
    assert second.screen.card["buttons"] == first.card.tokens()
    assert second.card.card_message_id == "card-1"


def test_outcomes_of_a_predecessor_only_teach_the_card_id() -> None:
    d = make()
    d.auto = False
    at(d, 0.0, TurnStarted("t1"))
    own = d.pending[0]
    stale = CardShown("someone-else-1", "t1", "card-7", "hash", created=True)
    d.feed(d.card.outcome(stale))
    assert d.card.card_message_id == "card-7"
    assert d.card.throttle.in_flight  # its own request is still the one in flight
    assert ProgressCardPosted("t1", "card-7") in d.notices
    d.answer()
    assert not d.card.throttle.in_flight
    assert own.request_id != stale.request_id


def test_a_card_opened_for_a_turn_that_ended_is_never_shown_running_again() -> None:
    """A restart opens the card of a turn that ended while nobody showed it: the view the
    killed run saved is running, and the card's first show is already the end."""
    first = make()
    at(first, 0.0, TurnStarted("t1"))
    at(first, 0.1, TextDelta("m", "working"))
    first.advance(1.0)
    snapshot_op = first.card.snapshot()
    assert snapshot_op is not None
    snapshot = TurnSnapshot("t1", "task-1", json.loads(snapshot_op.snapshot_json), 0.3)
    ledger = FinalDelivery("t1", "card-1", (), None, "h")
    clock = Clock()
    ended = TurnCompleted("t1", "completed", final_text="the answer")
    card = TurnCard(
        CardTurn("t1", "task-1", "route-1", ended=ended),
        TinyPlatform(),
        clock=clock,
        wall=clock,
        token=Tokens(),
        restored=Restored(snapshot, ledger),
    )
    second = Driver(card, clock)
    second.start()
    second.advance(10.0)
    shown = [r.payload["state"] for _, r in second.requests if isinstance(r, ShowCard)]
    assert shown == ["completed"]
    finals = [r for _, r in second.requests if isinstance(r, DeliverFinal)]
    assert len(finals) == 1
