"""Events as stream-json objects: every event round-trips; bad objects are named precisely."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from robota.core.events import (
    EVENT_TYPES,
    ApprovalRequested,
    EventFormatError,
    FileChange,
    PlanEntry,
    PlanUpdated,
    RuntimeEvent,
    TextDelta,
    ToolStarted,
    TurnCompleted,
    TurnError,
    Usage,
    event_from_json,
    event_to_json,
)

text = st.text(max_size=30)
maybe_text = st.none() | text
maybe_int = st.none() | st.integers(min_value=0, max_value=10**9)
changes = st.tuples(
    st.builds(FileChange, text, st.sampled_from(["add", "delete", "update", "move"]), maybe_text)
)
usage = st.builds(Usage, maybe_int, maybe_int, maybe_int, maybe_int, maybe_int)


def events() -> st.SearchStrategy[RuntimeEvent]:
    """Every event type with every field drawn from its whole domain."""
    return st.one_of(
        [
            st.builds(cls)
            if cls not in (ToolStarted, PlanUpdated, TurnCompleted, ApprovalRequested)
            else st.nothing()
            for cls in EVENT_TYPES.values()
        ]
        + [
            st.builds(ToolStarted, changes=changes | st.just(())),
            st.builds(
                PlanUpdated,
                st.lists(
                    st.builds(
                        PlanEntry, text, st.sampled_from(["pending", "in_progress", "completed"])
                    ),
                    max_size=4,
                ).map(tuple),
            ),
            st.builds(
                TurnCompleted,
                error=st.none() | st.builds(TurnError),
                usage=st.none() | usage,
            ),
            st.builds(ApprovalRequested),
        ]
    )


@given(events())
def test_every_event_round_trips_through_json_text(event: RuntimeEvent) -> None:
    line = json.dumps(event_to_json(event))
    assert event_from_json(json.loads(line)) == event


def test_the_type_comes_first_and_absent_optionals_are_left_out() -> None:
    encoded = event_to_json(TextDelta("m1", "hi"))
    assert list(encoded) == ["type", "item_id", "text"]
    done = TurnCompleted("t1", "failed", TurnError("boom", "timeout", retryable=True))
    assert event_to_json(done) == {
        "type": "turn_completed",
        "turn_id": "t1",
        "status": "failed",
        "error": {"message": "boom", "category": "timeout", "retryable": True},
    }


@pytest.mark.parametrize(
    ("obj", "message"),
    [
        ([], "expected an object, found an array"),
        ({"type": "nope"}, "type: expected one of turn_started"),
        ({"type": "text_delta", "text": "x"}, "text_delta.item_id: missing"),
        ({"type": "text_delta", "item_id": 5, "text": "x"}, "item_id: expected a string"),
        ({"type": "text_delta", "item_id": "m", "text": "x", "extra": 1}, "unknown field 'extra'"),
        (
            {"type": "text_delta", "item_id": "m", "text": "x", "phase": "middle"},
            "phase: expected one of ['commentary', 'final'], found 'middle'",
        ),
        (
            {"type": "turn_completed", "turn_id": "t", "status": "completed", "usage": []},
            "usage: expected an object, found an array",
        ),
        (
            {"type": "tool_completed", "tool_id": "t", "status": "completed", "exit_code": True},
            "exit_code: expected an integer, found a boolean",
        ),
        (
            {"type": "plan", "entries": [{"content": "a", "status": "done"}]},
            "plan.entries[0].status: expected one of",
        ),
    ],
)
def test_bad_objects_name_the_field_and_the_problem(obj: Any, message: str) -> None:
    with pytest.raises(EventFormatError, match=None) as raised:
        event_from_json(obj)
    assert message in str(raised.value)
