"""Hypothesis strategies for plausible turns: RuntimeEvent sequences a real agent could send.

A turn starts, then interleaves messages, reasoning, tools (started, streamed, completed; some
never announced), approvals (asked, answered), steering, plan and usage updates, and usually
ends. Texts include what breaks renderers: backticks, pipes, angle brackets, quotes, CJK,
emoji, very long lines; bursts of many tools push the cards past their page budgets.
"""

from __future__ import annotations

from collections.abc import Sequence

from hypothesis import strategies as st

from robota.core.events import (
    ApprovalRequested,
    ApprovalResolved,
    FileChange,
    PlanEntry,
    PlanUpdated,
    ReasoningDelta,
    RuntimeEvent,
    TextDelta,
    ToolCompleted,
    ToolStarted,
    ToolUpdated,
    TurnCompleted,
    TurnError,
    TurnStarted,
    Usage,
    UsageUpdated,
)
from robota.core.presentation import TurnView, UserSteer

Input = RuntimeEvent | UserSteer

_ALPHABET = st.sampled_from(
    [
        *"abc xyz 019\n\n|-`*_#<>&\"'\\",
        *["中", "文", "😀", "```", "| a | b |\n|---|---|\n| 1 | 2 |\n", "\t", "é"],
    ]
)
_BIG = [
    "x" * 9000,
    "中" * 4000,
    '"quoted" \\ ' * 800,
    "line\n" * 3000,
    "```\ncode\n```\n" * 300,
    "| h | i |\n|---|---|\n" + "| 1 | 2 |\n" * 400,
]
_COMMANDS = [
    "/bin/bash -lc 'echo hi && ls'",
    '/bin/zsh -lc "pytest -q"',
    "/usr/bin/env sh -c 'cat a.txt'",
    "sh -c 'make test'",
    'powershell.exe -NoProfile -Command "Get-ChildItem"',
    "git status",
    "python - <<'EOF'\nprint(1)\nEOF",
]


def texts(max_size: int = 60) -> st.SearchStrategy[str]:
    small = st.lists(_ALPHABET, max_size=max_size).map("".join)
    return st.one_of(small, small, small, st.sampled_from(_BIG))


@st.composite
def turns(  # noqa: PLR0915 - one branch per kind of event reads best as one dispatch
    draw: st.DrawFn, max_steps: int = 40, finish: bool | None = None, max_burst: int = 120
) -> list[Input]:
    events: list[Input] = [TurnStarted("turn-1")]
    tools: list[str] = []
    open_tools: list[str] = []
    messages: list[str] = []
    approvals: list[str] = []
    steps = draw(st.integers(0, max_steps))
    for step in range(steps):
        action = draw(
            st.sampled_from(
                [
                    "text",
                    "text",
                    "reason",
                    "tool",
                    "tool",
                    "output",
                    "output",
                    "complete",
                    "complete",
                    "burst",
                    "approve",
                    "resolve",
                    "steer",
                    "plan",
                    "usage",
                    "ghost",
                ]
            )
        )
        if action == "text":
            if messages and draw(st.booleans()):
                item = messages[-1]
            else:
                item = f"msg-{step}"
                messages.append(item)
            phase = draw(st.sampled_from([None, None, "commentary", "final"]))
            events.append(TextDelta(item, draw(texts()), phase))
        elif action == "reason":
            events.append(ReasoningDelta(f"rsn-{step % 3}", draw(texts()), draw(st.integers(0, 2))))
        elif action == "tool":
            tool = f"call-{step}"
            tools.append(tool)
            open_tools.append(tool)
            kind = draw(st.sampled_from(["command", "file_change", "mcp", "read", "other"]))
            command = draw(st.sampled_from(_COMMANDS)) if kind == "command" else None
            changes = (
                tuple(FileChange(f"src/f{i}.py", "update", draw(texts())) for i in range(3))
                if kind == "file_change"
                else ()
            )
            events.append(
                ToolStarted(
                    tool,
                    kind,
                    draw(texts(30)) or kind,
                    command=command,
                    cwd=draw(st.sampled_from([None, "/work/<cwd>"])),
                    changes=changes,
                    status=draw(st.sampled_from(["pending", "in_progress"])),
                )
            )
        elif action == "output" and open_tools:
            tool = draw(st.sampled_from(open_tools))
            events.append(ToolUpdated(tool, output_delta=draw(texts())))
        elif action == "complete" and open_tools:
            tool = draw(st.sampled_from(open_tools))
            open_tools.remove(tool)
            status = draw(st.sampled_from(["completed", "completed", "failed", "declined"]))
            output = draw(st.one_of(st.none(), texts()))
            events.append(ToolCompleted(tool, status, output, draw(st.sampled_from([None, 0, 1]))))
        elif action == "burst":
            count = draw(st.integers(min(5, max_burst), max_burst))
            big = draw(st.sampled_from(_BIG))
            for i in range(count):
                tool = f"burst-{step}-{i}"
                tools.append(tool)
                events.append(ToolStarted(tool, "command", "run", command=_COMMANDS[i % 6]))
                events.append(ToolCompleted(tool, "failed" if i % 7 == 0 else "completed", big, 0))
        elif action == "approve":
            approval = f"apv-{step}"
            approvals.append(approval)
            target = draw(st.sampled_from([None, *tools])) if tools else None
            events.append(
                ApprovalRequested(
                    approval,
                    "command",
                    draw(texts(30)) or "run it",
                    tool_id=target,
                    command=draw(st.sampled_from([None, *_COMMANDS])),
                    reason=draw(st.one_of(st.none(), texts(30))),
                )
            )
        elif action == "resolve" and approvals:
            approval = draw(st.sampled_from(approvals))
            decision = draw(st.sampled_from(["accept", "accept_for_session", "decline", "cancel"]))
            events.append(ApprovalResolved(approval, decision))
        elif action == "steer":
            events.append(UserSteer(draw(texts()) or "please also check"))
        elif action == "plan":
            entries = draw(
                st.lists(
                    st.builds(
                        PlanEntry,
                        texts(40),
                        st.sampled_from(["pending", "in_progress", "completed"]),
                    ),
                    max_size=25,
                )
            )
            events.append(PlanUpdated(tuple(entries)))
        elif action == "usage":
            events.append(UsageUpdated(Usage(total_tokens=draw(st.integers(0, 10**7)))))
        elif action == "ghost":
            # An update for a tool nobody announced: the view must still show it.
            events.append(ToolUpdated(f"ghost-{step}", output_delta="boo", title="ghost"))
    done = draw(st.booleans()) if finish is None else finish
    if done:
        status = draw(st.sampled_from(["completed", "completed", "interrupted", "failed"]))
        error = (
            TurnError(draw(texts(80)) or "boom", "upstream_5xx", retryable=True)
            if status == "failed"
            else None
        )
        final = draw(st.sampled_from([None, *messages])) if messages else None
        events.append(
            TurnCompleted(
                "turn-1",
                status,
                error=error,
                final_item_id=final,
                final_text=draw(st.one_of(st.none(), texts())),
            )
        )
    return events


def reduce(events: Sequence[Input], view: TurnView | None = None) -> TurnView:
    view = view or TurnView()
    for event in events:
        view.apply(event)
    return view
