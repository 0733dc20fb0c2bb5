"""The terminal renderer: plain lines, optional colour and width."""

from __future__ import annotations

from typing import Any

import pytest
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


# An expanded output is cleaned whole and then cut into lines: each line of it as one line was.
_OUTPUT = "a\tb\r\nc\x07d\x00\n\x1b[31mred\rX\n\nlast line is long"
OUTPUT_LINES = [
    (
        {},
        [
            "      │ a    b",
            "      │ c\ufffdd\ufffd",
            "      │ \ufffd[31mredX",
            "      │ ",
            "      │ last line is long",
        ],
    ),
    (
        {"width": 12},
        ["      │ a  …", "      │ c\ufffdd\ufffd", "      │ \ufffd[3…", "      │ ", "      │ las…"],
    ),
    (
        {"color": True},
        [
            f"\x1b[2m{line}\x1b[0m"
            for line in [
                "      │ a    b",
                "      │ c\ufffdd\ufffd",
                "      │ \ufffd[31mredX",
                "      │ ",
                "      │ last line is long",
            ]
        ],
    ),
]


@pytest.mark.parametrize(("options", "expected"), OUTPUT_LINES)
def test_an_expanded_output_is_one_clean_line_per_line(
    options: dict[str, Any], expected: list[str]
) -> None:
    view = reduce(
        [
            TurnStarted("t"),
            ToolStarted("c", "command", "t", command="ls"),
            ToolUpdated("c", output_delta=_OUTPUT),
        ]
    )
    lines = render_terminal(view, agent="a", expanded="all", **options)
    start = next(i for i, line in enumerate(lines) if "│" in line)
    assert lines[start:] == expected


@settings(max_examples=60, deadline=None)
@given(turns())
def test_any_turn_renders(events: list[Input]) -> None:
    lines = render_terminal(reduce(events), agent="a", width=80)
    assert all(len(line) <= 80 and "\n" not in line for line in lines)
