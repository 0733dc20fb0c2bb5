"""The safe restart's decisions (``_restart.RestartCore``), as tables: no clock, no host."""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import pytest

from robota.host import QUIET, Go, Idle, RestartCore, Wait


def core() -> RestartCore:
    ids = itertools.count(1)
    return RestartCore(lambda: f"s{next(ids)}")


@dataclass(frozen=True)
class Step:
    """At ``now``, with these counts (and an inbound first, when ``inbound``), the decision."""

    now: float
    turns: int = 0
    finals: int = 0
    inbound: bool = False


@pytest.mark.parametrize(
    ("steps", "expected"),
    [
        # Requested at 0 with nothing running: quiet until 15, then it goes.
        ([Step(0.0), Step(QUIET - 0.1), Step(QUIET)], ["quiet", "quiet", "go"]),
        # A running turn holds it, whatever the time; the window counts from the request.
        ([Step(1.0, turns=1), Step(100.0, turns=1), Step(101.0)], ["turns", "turns", "go"]),
        # A final still to deliver holds it as a turn does.
        ([Step(20.0, finals=1), Step(21.0)], ["finals", "go"]),
        # An inbound message resets the window: 10 + 15 = 25.
        (
            [Step(10.0, inbound=True), Step(24.9), Step(25.0)],
            ["quiet", "quiet", "go"],
        ),
        # Turns first, then finals, then quiet: each in turn.
        (
            [
                Step(1.0, turns=2, finals=1),
                Step(2.0, finals=1),
                Step(3.0, inbound=True),
                Step(18.0),
            ],
            ["turns", "finals", "quiet", "go"],
        ),
    ],
)
def test_a_safe_restart_waits_for_turns_finals_and_quiet(
    steps: list[Step], expected: list[str]
) -> None:
    restarts = core()
    restarts.request(route=None, force=False, reason=None, now=0.0)
    seen = []
    for step in steps:
        if step.inbound:
            restarts.inbound(step.now)
        decision = restarts.decide(step.now, turns_running=step.turns, finals_pending=step.finals)
        seen.append("go" if isinstance(decision, Go) else decision.why)  # type: ignore[union-attr]
    assert seen == expected


def test_the_quiet_window_ends_at_the_latest_of_request_and_inbound() -> None:
    restarts = core()
    restarts.inbound(3.0)  # before the request: the request's own time counts
    restarts.request(route=None, force=False, reason=None, now=5.0)
    decision = restarts.decide(6.0, turns_running=0, finals_pending=0)
    assert isinstance(decision, Wait) and decision.until == 5.0 + QUIET


def test_force_goes_at_once_even_while_turns_run() -> None:
    restarts = core()
    restarts.request(route="cli:a", force=True, reason="upgrade", now=0.0)
    decision = restarts.decide(0.0, turns_running=3, finals_pending=2)
    assert isinstance(decision, Go)
    assert decision.schedule.routes == {"cli:a": "upgrade"}


def test_nothing_pending_is_idle() -> None:
    assert isinstance(core().decide(0.0, turns_running=5, finals_pending=0), Idle)


def test_requests_join_the_pending_schedule_and_force_upgrades_it() -> None:
    restarts = core()
    first = restarts.request(route="feishu:oc_1", force=False, reason="first", now=0.0)
    second = restarts.request(route="slack:C1", force=False, reason="second", now=1.0)
    again = restarts.request(route="feishu:oc_1", force=False, reason="other", now=2.0)
    assert first.id == second.id == again.id == "s1"
    assert again.routes == {"feishu:oc_1": "first", "slack:C1": "second"}, "deduplicated"
    assert again.reason == "first" and not again.force
    assert first.routes == {"feishu:oc_1": "first"}, "an earlier schedule is not changed"
    forced = restarts.request(route=None, force=True, reason=None, now=3.0)
    assert (forced.id, forced.force) == ("s1", True)
    assert isinstance(restarts.decide(3.0, turns_running=1, finals_pending=0), Go)


@pytest.mark.parametrize(
    ("cancel_id", "cancelled", "pending_after"),
    [("s2", True, None), ("s1", False, "s2"), ("nope", False, "s2")],
)
def test_cancel_names_its_schedule(
    cancel_id: str, cancelled: bool, pending_after: str | None
) -> None:
    restarts = core()
    restarts.request(route=None, force=False, reason=None, now=0.0)
    assert restarts.cancel("s1")
    restarts.request(route=None, force=False, reason=None, now=1.0)  # a newer one: s2
    assert restarts.cancel(cancel_id) is cancelled
    assert (restarts.pending.id if restarts.pending else None) == pending_after


def test_once_it_went_cancel_refuses() -> None:
    restarts = core()
    schedule = restarts.request(route=None, force=False, reason=None, now=0.0)
    assert isinstance(restarts.decide(QUIET, turns_running=0, finals_pending=0), Go)
    assert not restarts.cancel(schedule.id)
    assert isinstance(restarts.decide(QUIET + 1, turns_running=1, finals_pending=0), Go)
