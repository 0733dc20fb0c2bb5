"""``robota.mcp``'s ``TurnFollow`` and ``event_line``: which of a route's notices are a run's
turn, the progress line each says, the throttle, the approvals reported and the outcome. Both
backends feed it (the process's own engine, the host's ``task.run`` stream), so these tables
are what either reports."""

from __future__ import annotations

import pytest

from robota.core.engine import (
    InputQueued,
    InputSteered,
    RouteIdle,
    RouteNotice,
    RouteReply,
    TurnBegan,
    TurnFinished,
    TurnUpdate,
)
from robota.core.events import (
    ApprovalRequested,
    ApprovalResolved,
    PlanEntry,
    PlanUpdated,
    ReasoningDelta,
    RuntimeEvent,
    TextDelta,
    ToolCompleted,
    ToolStarted,
    ToolUpdated,
    TurnError,
    TurnStarted,
    Usage,
    UsageUpdated,
)
from robota.mcp import Line, RunOutcome, ToolRefused, TurnFollow, event_line
from robota.mcp._follow import PROGRESS_EVERY

KEY = "mcp:t1"


def began(prompt: str = "hi", attempt: str = "a1") -> TurnBegan:
    return TurnBegan(KEY, "t1", attempt, prompt)


def update(event: RuntimeEvent, attempt: str = "a1") -> TurnUpdate:
    return TurnUpdate(KEY, "t1", attempt, event)


def finished(status: str = "completed", attempt: str = "a1", **kwargs: object) -> TurnFinished:
    return TurnFinished(KEY, "t1", attempt, status, "the answer", **kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("event", "line"),
    [
        (ToolStarted("x1", "command", "ls -l"), Line("tool: ls -l", force=True)),
        (ToolCompleted("x1", "completed"), Line("tool completed: the tool")),
        (ToolCompleted("x9", "failed"), Line("tool failed: x9")),
        (ToolUpdated("x1", output_delta="..."), Line("tool running: the tool")),
        (
            ApprovalRequested("p1", "command", "rm -rf build"),
            Line("approval asked: rm -rf build", force=True),
        ),
        (
            ApprovalResolved("p1", "decline", "policy"),
            Line("approval decline by policy", force=True),
        ),
        (TextDelta("m1", "hello"), Line("answer: 12 characters")),
        (ReasoningDelta("r1", "hmm"), Line("thinking")),
        (
            PlanUpdated((PlanEntry("a", "completed"), PlanEntry("b", "pending"))),
            Line("plan: 1 of 2 steps done"),
        ),
        (TurnStarted("r1"), None),
        (UsageUpdated(Usage(input_tokens=3)), None),
    ],
)
def test_event_line(event: RuntimeEvent, line: Line | None) -> None:
    assert event_line(event, {"x1": "the tool"}, 12) == line


def heard(notices: list[RouteNotice], sent: int | None = 1, gap: float = 1.0) -> list[str]:
    """The lines ``notices`` say, heard ``gap`` seconds apart."""
    follow = TurnFollow("hi", sent)
    said = [follow.hear(n, i * gap) for i, n in enumerate(notices)]
    return [line for line in said if line is not None]


@pytest.mark.parametrize(
    ("notices", "lines"),
    [
        # The run's turn: its start, its moves, its end.
        (
            [
                began(),
                update(TurnStarted("r1")),
                update(TextDelta("m1", "hel")),
                update(TextDelta("m1", "lo")),
                finished(),
            ],
            ["turn started", "answer: 3 characters", "answer: 5 characters", "turn completed"],
        ),
        # Another prompt's turn (before the run's, on the same route) says nothing.
        (
            [began("other", "a0"), update(TextDelta("m0", "x"), "a0"), finished(attempt="a0")],
            [],
        ),
        # Queued behind it, then its own turn.
        (
            [InputQueued(KEY, 1, "hi", 1), began()],
            ["queued (1 ahead)", "turn started"],
        ),
        # Steered into the running turn: that turn is the run's.
        (
            [InputSteered(KEY, "a7", "hi"), finished("interrupted", "a7")],
            ["steered into the running turn", "turn interrupted"],
        ),
        # A tool and an approval, named.
        (
            [
                began(),
                update(ToolStarted("x1", "command", "make")),
                update(ApprovalRequested("p1", "command", "make")),
                update(ApprovalResolved("p1", "decline", "policy")),
                update(ToolCompleted("x1", "declined")),
            ],
            [
                "turn started",
                "tool: make",
                "approval asked: make",
                "approval decline by policy",
                "tool declined: make",
            ],
        ),
    ],
)
def test_the_lines_a_turn_says(notices: list[RouteNotice], lines: list[str]) -> None:
    assert heard(notices) == lines


def test_throttled_lines_go_at_most_every_interval_and_forced_ones_always() -> None:
    deltas = [update(TextDelta("m1", "x")) for _ in range(10)]
    notices: list[RouteNotice] = [began(), *deltas, finished()]
    gap = PROGRESS_EVERY / 4  # four deltas per interval
    lines = heard(notices, gap=gap)
    assert lines[0] == "turn started" and lines[-1] == "turn completed"
    # The first delta at once (the start did not count), then one an interval.
    assert lines[1:-1] == ["answer: 1 characters", "answer: 5 characters", "answer: 9 characters"]


@pytest.mark.parametrize(
    ("notices", "sent", "done"),
    [
        ([began(), finished()], None, True),  # the host's stream says itself when it is over
        ([began(), finished()], 2, False),  # the route has not gone idle yet
        ([began(), finished(), RouteIdle(KEY, 1)], 2, False),  # an idle before our input
        ([began(), finished(), RouteIdle(KEY, 2)], 2, True),
        ([began(), RouteIdle(KEY, 3)], 2, False),  # idle, but the turn's end is not heard
        ([began("other", "a0"), finished(attempt="a0"), RouteIdle(KEY, 2)], 2, False),
    ],
)
def test_when_a_run_is_done(notices: list[RouteNotice], sent: int | None, done: bool) -> None:
    follow = TurnFollow("hi", sent)
    for notice in notices:
        follow.hear(notice, 0.0)
    assert follow.done is done


def test_a_refusal_before_the_turn_is_the_tools_error_and_after_it_is_nothing() -> None:
    follow = TurnFollow("hi", 1)
    with pytest.raises(ToolRefused, match="no agent"):
        follow.hear(RouteReply(KEY, "no agent", "error"), 0.0)
    follow = TurnFollow("hi", 1)
    follow.hear(began(), 0.0)
    assert follow.hear(RouteReply(KEY, "later", "error"), 1.0) is None
    assert follow.hear(RouteReply(KEY, "fine", "info"), 2.0) is None


def test_the_outcome_reports_the_turn_and_its_resolved_approvals() -> None:
    follow = TurnFollow("hi", 1)
    for notice in [
        began(),
        update(ApprovalRequested("p1", "command", "make")),
        update(ApprovalResolved("p1", "decline", "policy")),
        update(ApprovalRequested("p2", "file_change", "edit a.py")),  # never resolved
        update(ApprovalResolved("p3", "cancel", "runtime")),  # its request not heard
        update(ApprovalResolved("p4", "accept", "user"), attempt="a0"),  # another turn's
        finished("failed", error=TurnError("boom", "unknown", False)),
    ]:
        follow.hear(notice, 0.0)
    assert follow.outcome("t1") == RunOutcome(
        "t1",
        "a1",
        "failed",
        "the answer",
        "boom",
        (
            {"id": "p1", "title": "make", "decision": "decline", "by": "policy"},
            {"id": "p3", "decision": "cancel", "by": "runtime"},
        ),
    )


def test_without_its_end_the_outcome_says_the_turn_runs() -> None:
    follow = TurnFollow("hi", 1)
    follow.hear(began(), 0.0)
    assert follow.outcome("t1") == RunOutcome("t1", "a1", None, None)
    assert TurnFollow("hi").outcome("t1") == RunOutcome("t1", None, None, None)
