"""The turn view reducer: what each event does, the snapshot round trip, and its cost."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from robota.core.events import (
    ApprovalRequested,
    ApprovalResolved,
    FileChange,
    PlanEntry,
    PlanUpdated,
    ReasoningDelta,
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
from robota.core.presentation import (
    SNAPSHOT_VERSION,
    Approval,
    ErrorNote,
    Message,
    Reasoning,
    Steer,
    ToolCall,
    TurnView,
    UserSteer,
)

from ..support.turn_streams import reduce, turns


def test_messages_accumulate_and_the_final_one_is_not_commentary() -> None:
    view = reduce(
        [
            TurnStarted("t"),
            TextDelta("m1", "Looking "),
            TextDelta("m1", "around."),
            ToolStarted("c1", "command", "ls", command="ls"),
            TextDelta("m2", "Done: "),
            TextDelta("m2", "42"),
            TurnCompleted("t", "completed", final_item_id="m2"),
        ]
    )
    first, _, last = view.activities
    assert isinstance(first, Message) and first.text == "Looking around."
    assert isinstance(last, Message) and last.text == "Done: 42"
    assert not view.is_final(first)
    assert view.is_final(last)
    assert view.final_text == "Done: 42"
    assert view.status == "completed" and view.terminal


def test_without_a_final_item_the_last_message_is_the_answer() -> None:
    view = reduce([TextDelta("a", "one"), TextDelta("b", "two"), TurnCompleted("t", "completed")])
    assert view.final_item_id == "b"
    assert view.final_text == "two"


def test_final_text_of_the_completion_is_authoritative() -> None:
    view = reduce([TextDelta("a", "partial"), TurnCompleted("t", "completed")])
    assert view.final_text == "partial"
    done = TurnCompleted("t", "completed", final_item_id="a", final_text="full")
    view = reduce([TextDelta("a", "partial"), done])
    assert view.final_text == "full"


def test_reasoning_parts_and_the_current_title() -> None:
    view = reduce(
        [
            ReasoningDelta("r1", "**Reading the code**\n\nI will look at", 0),
            ReasoningDelta("r1", " the tests.", 0),
            ReasoningDelta("r1", "## Running tests", 1),
        ]
    )
    parts = [a for a in view.activities if isinstance(a, Reasoning)]
    assert [p.title for p in parts] == ["Reading the code", "Running tests"]
    assert view.current_title == "Running tests"


def test_tool_lifecycle() -> None:
    view = reduce(
        [
            ToolStarted("c", "command", "pytest", command="/bin/bash -lc pytest", cwd="/w"),
            ToolUpdated("c", output_delta="collected 3\n"),
            ToolUpdated("c", output_delta="..F\n", changes=(FileChange("a.py", "update"),)),
            ToolCompleted("c", "failed", exit_code=1),
        ]
    )
    tool = view.tool("c")
    assert tool is not None
    assert (tool.status, tool.exit_code, tool.cwd) == ("failed", 1, "/w")
    assert tool.output == "collected 3\n..F\n"
    assert tool.changes == (FileChange("a.py", "update"),)
    # The completion's output, when given, replaces the streamed one.
    view.apply(ToolCompleted("c", "completed", output="all good"))
    assert tool.output == "all good"


def test_updates_for_unknown_tools_still_show() -> None:
    view = reduce([ToolUpdated("ghost", output_delta="x"), ToolCompleted("ghost2", "completed")])
    assert [a.tool_id for a in view.activities if isinstance(a, ToolCall)] == ["ghost", "ghost2"]


def test_output_keeps_a_byte_capped_tail() -> None:
    view = TurnView(output_cap=100)
    view.apply(ToolStarted("c", "command", "yes"))
    for i in range(1000):
        view.apply(ToolUpdated("c", output_delta=f"line {i:04d} é\n"))
    tool = view.tool("c")
    assert tool is not None
    assert len(tool.output.encode()) <= 100
    assert tool.output.endswith("line 0999 é\n")
    total = sum(len(f"line {i:04d} é\n".encode()) for i in range(1000))
    assert tool.output_dropped + len(tool.output.encode()) == total


def test_approvals_are_critical_and_resolve() -> None:
    view = TurnView()
    assert view.apply(TurnStarted("t")) == "changed"
    assert view.apply(ApprovalRequested("a1", "command", "rm -rf build")) == "critical"
    assert view.apply(ApprovalRequested("a1", "command", "again")) == "unchanged"
    assert [a.approval_id for a in view.pending_approvals] == ["a1"]
    assert view.apply(ApprovalResolved("a1", "decline")) == "changed"
    assert view.pending_approvals == []
    approval = view.activities[0]
    assert isinstance(approval, Approval) and approval.decision == "decline"
    assert view.apply(ApprovalResolved("a1", "accept")) == "unchanged"


def test_open_approvals_are_cancelled_when_the_turn_ends() -> None:
    view = reduce([ApprovalRequested("a1", "command", "x"), TurnCompleted("t", "interrupted")])
    approval = view.activities[0]
    assert isinstance(approval, Approval)
    assert (approval.decision, approval.by) == ("cancel", "runtime")
    assert view.pending_approvals == []


def test_steering_plan_usage_and_error() -> None:
    plan = (PlanEntry("read", "completed"), PlanEntry("fix", "in_progress"))
    error = TurnError("model overloaded", "overloaded", retryable=True)
    view = reduce(
        [
            UserSteer("also update the docs"),
            PlanUpdated(plan),
            UsageUpdated(Usage(total_tokens=10)),
            TurnCompleted("t", "failed", error=error, usage=Usage(total_tokens=99)),
        ]
    )
    steer, note = view.activities
    assert isinstance(steer, Steer) and steer.text == "also update the docs"
    assert isinstance(note, ErrorNote) and note.category == "overloaded"
    assert view.plan == plan
    assert view.usage == Usage(total_tokens=99)
    assert view.status == "failed"


def test_terminal_state_is_final() -> None:
    view = reduce([TurnStarted("t"), TurnCompleted("t", "completed")])
    assert view.apply(TurnCompleted("t", "failed")) == "unchanged"
    assert view.apply(TurnStarted("t2")) == "unchanged"
    assert view.status == "completed"


def test_versions_grow_with_every_change() -> None:
    view = TurnView()
    view.apply(TextDelta("m", "a"))
    message = view.activities[0]
    before = message.version
    view.apply(UsageUpdated(Usage(total_tokens=1)))
    assert message.version == before < view.version
    view.apply(TextDelta("m", "b"))
    assert message.version == view.version


def test_snapshot_refuses_other_versions() -> None:
    data = TurnView().to_json()
    assert data["v"] == SNAPSHOT_VERSION
    data["v"] = SNAPSHOT_VERSION + 1
    with pytest.raises(ValueError, match="version"):
        TurnView.from_json(data)


@settings(max_examples=150, deadline=None)
@given(turns(), st.data())
def test_snapshot_round_trip_continues_identically(events: list, data: st.DataObject) -> None:
    """Restoring at any point and applying the rest gives the same view as never stopping."""
    cut = data.draw(st.integers(0, len(events)))
    straight = reduce(events)
    restored = TurnView.from_json(json.loads(json.dumps(reduce(events[:cut]).to_json())))
    reduce(events[cut:], restored)
    assert restored.to_json() == straight.to_json()
    assert restored.final_text == straight.final_text
    assert restored.current_title == straight.current_title
    assert [a.approval_id for a in restored.pending_approvals] == [
        a.approval_id for a in straight.pending_approvals
    ]


def _turn_of(tools: int) -> list[Any]:
    """A turn of ``tools`` commands, each with output deltas and some text: 10 events each."""
    events: list[Any] = [TurnStarted("t")]
    for i in range(tools):
        events.append(ToolStarted(f"c{i}", "command", "x", command="ls"))
        events.extend(ToolUpdated(f"c{i}", output_delta="out\n" * 50) for _ in range(5))
        events.extend(TextDelta(f"m{i // 10}", "word ") for _ in range(3))
        events.append(ToolCompleted(f"c{i}", "completed", exit_code=0))
    return events


def _cpu_to_apply(events: list[Any]) -> float:
    """The least CPU time of three views each applying ``events``."""
    spent = []
    for _ in range(3):
        view = TurnView()
        started = time.process_time()
        for event in events:
            view.apply(event)
        spent.append(time.process_time() - started)
    return min(spent)


def test_applying_is_constant_time_per_event() -> None:
    """Four times the events cost about four times the time, not sixteen: no O(n) per event.
    A ratio of the same work measured side by side, so the machine's speed and load cancel."""
    small, large = _turn_of(2000), _turn_of(8000)
    assert (len(small), len(large)) == (20_001, 80_001)
    ratio = _cpu_to_apply(large) / _cpu_to_apply(small)
    assert ratio < 8.0, ratio  # linear: ~4; O(n) per event: ~16
