"""The terminal renderer: plain lines, optional colour and width."""

from __future__ import annotations

from hypothesis import given, settings

from robota.core.events import (
    ApprovalRequested,
    PlanEntry,
    PlanUpdated,
    ReasoningDelta,
    TextDelta,
    ToolCompleted,
    ToolStarted,
    ToolUpdated,
    TurnStarted,
)
from robota.core.presentation import UserSteer, render_terminal

from ..support.turn_streams import Input, reduce, turns

EVENTS: list[Input] = [
    TurnStarted("t"),
    ReasoningDelta("r", "**Running the tests**"),
    ToolStarted("c1", "command", "t", command="/bin/zsh -lc 'pytest -q'"),
    ToolUpdated("c1", output_delta="".join(f"line {i}\n" for i in range(10))),
    ToolStarted("c2", "command", "t", command="ls"),
    ToolCompleted("c2", "failed", output="no such file\n", exit_code=2),
    UserSteer("skip the slow ones"),
    TextDelta("m", "Working on it.\nSecond line."),
    PlanUpdated((PlanEntry("run tests", "in_progress"), PlanEntry("fix", "pending"))),
    ApprovalRequested("a", "command", "Run rm", command="/bin/bash -lc 'rm x'", cwd="/w"),
]


def test_layout() -> None:
    lines = render_terminal(reduce(EVENTS), agent="codex", elapsed=3)
    assert lines == [
        "codex · waiting for approval · 3s · 2 tools",
        "  Running the tests",
        "… Running the tests",
        "  ⏳ pytest -q",
        "      │ … 7 more lines",
        "      │ line 7",
        "      │ line 8",
        "      │ line 9",
        "  ❌ ls  (exit 2)",
        "> you: skip the slow ones",
        "",
        "Working on it.",
        "Second line.",
        "",
        "Plan",
        "  [>] run tests",
        "  [ ] fix",
        "",
        "Approval needed: Run rm",
        "  $ rm x",
        "  in /w",
        "  [a] allow once  [s] allow for this session  [d] decline  [c] cancel the turn",
    ]


def test_expanded_tools_show_all_their_output() -> None:
    lines = render_terminal(reduce(EVENTS), agent="codex", expanded={"c1", "c2"})
    assert "      │ line 0" in lines
    assert "      │ no such file" in lines


def test_width_and_color() -> None:
    lines = render_terminal(reduce(EVENTS), agent="codex", width=20, color=True)
    assert any(line.startswith("\x1b[") for line in lines)
    plain = render_terminal(reduce(EVENTS), agent="codex", width=20)
    assert all(len(line) <= 20 for line in plain)
    assert not any("\x1b" in line for line in plain)


def test_control_characters_from_agents_are_neutralised() -> None:
    view = reduce([TextDelta("m", "evil \x1b[2J clear")])
    assert "\x1b" not in "".join(render_terminal(view, agent="a"))


@settings(max_examples=60, deadline=None)
@given(turns())
def test_any_turn_renders(events: list[Input]) -> None:
    lines = render_terminal(reduce(events), agent="a", width=80)
    assert all(len(line) <= 80 and "\n" not in line for line in lines)
