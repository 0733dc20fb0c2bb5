"""The engine's route notices as host messages: one table, every notice kind."""

from __future__ import annotations

from typing import Any

import pytest

from robota.core.engine import (
    InputQueued,
    InputSteered,
    RouteIdle,
    RouteReply,
    TaskOpened,
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
    TextDelta,
    ToolCompleted,
    ToolStarted,
    ToolUpdated,
    TurnCompleted,
    TurnError,
    TurnStarted,
)
from robota.core.surfaces import HOST_TYPES, MAX_TURNS_FOLLOWED, TurnDrivers, host_message

R = "serve:s1"


def update(event: object) -> TurnUpdate:
    return TurnUpdate(R, "t1", "a1", event)  # type: ignore[arg-type]


TABLE: list[tuple[object, dict[str, Any] | None]] = [
    (
        TurnBegan(R, "t1", "a1", "hello", restricted=True),
        {"type": "user_message", "prompt": "hello", "turnId": "a1", "restricted": True},
    ),
    (
        InputSteered(R, "a1", "and then"),
        {"type": "user_message", "prompt": "and then", "turnId": "a1", "steered": True},
    ),
    (
        InputQueued(R, 3, "later", ahead=1),
        {"type": "user_message", "prompt": "later", "queued": True, "ahead": 1},
    ),
    (
        update(TextDelta("i1", "wörld", phase="final")),
        {"type": "text_delta", "text": "wörld", "itemId": "i1", "phase": "final"},
    ),
    (update(ReasoningDelta("r1", "hmm")), {"type": "thinking", "text": "hmm", "itemId": "r1"}),
    (
        update(ToolStarted("c1", "command", "ls", command="ls -la")),
        {
            "type": "tool_start",
            "toolId": "c1",
            "kind": "command",
            "title": "ls",
            "command": "ls -la",
            "turnId": "a1",
        },
    ),
    (
        update(ToolCompleted("c1", "completed", exit_code=0)),
        {"type": "tool_end", "toolId": "c1", "state": "completed", "exitCode": 0, "turnId": "a1"},
    ),
    (
        update(ApprovalRequested("ap1", "command", "run ls", command="ls", decisions=("accept",))),
        {
            "type": "permission_request",
            "id": "ap1",
            "kind": "command",
            "title": "run ls",
            "command": "ls",
            "cwd": None,
            "reason": None,
            "decisions": ["accept"],
            "turnId": "a1",
        },
    ),
    (
        update(ApprovalResolved("ap1", "decline", by="user", answerer="surface:2")),
        {
            "type": "prompt_resolved",
            "id": "ap1",
            "result": "decline",
            "by": "user",
            "answerer": "surface:2",
        },
    ),
    (
        TurnFinished(R, "t1", "a1", "completed", "done"),
        {"type": "complete", "result": "done", "turnId": "a1"},
    ),
    (
        TurnFinished(R, "t1", "a1", "interrupted", "half"),
        {"type": "interrupted", "result": "half", "turnId": "a1"},
    ),
    (
        TurnFinished(R, "t1", "a1", "failed", None, error=TurnError("boom", "upstream_5xx", True)),
        {"type": "error", "message": "boom", "category": "upstream_5xx", "turnId": "a1"},
    ),
    (
        TurnFinished(R, "t1", "a1", "failed", None),
        {"type": "error", "message": "the turn failed", "category": None, "turnId": "a1"},
    ),
    (
        RouteReply(R, "no such command", "error"),
        {"type": "command_result", "text": "no such command", "level": "error"},
    ),
    # what a surface shows nothing for
    (TaskOpened(R, "t1", "codex-acp", "/w", "r1", resumed=False), None),
    (RouteIdle(R, inputs=2), None),
    (update(TurnStarted("turn-1")), None),
    (update(TurnCompleted("turn-1", "completed")), None),
    (update(ToolUpdated("c1", output_delta="x")), None),
    (update(PlanUpdated((PlanEntry("a", "pending"),))), None),
    ("not a notice", None),
]


@pytest.mark.parametrize(("notice", "expected"), TABLE)
def test_a_notice_maps_to_its_host_message(notice: object, expected: object) -> None:
    assert host_message(notice) == expected


def test_every_mapped_type_is_of_the_host_vocabulary() -> None:
    mapped = {m["type"] for _, m in TABLE if m is not None}
    assert mapped <= set(HOST_TYPES)
    # what the stream and the adapter add: hello, messages, pending, protocol_error, resume_gap
    assert set(HOST_TYPES) - mapped == {
        "hello",
        "messages",
        "pending",
        "protocol_error",
        "resume_gap",
    }


def drivers_of(notices: list[object]) -> list[tuple[str, object]]:
    """Each message's type and ``driverId`` ("-": not stamped), as one session's stream says."""
    drivers = TurnDrivers()
    said = []
    for notice in notices:
        message = host_message(notice)
        assert message is not None
        stamped = drivers.stamp(notice, message)
        said.append((stamped["type"], stamped.get("driverId", "-")))
    return said


def finished(attempt: str) -> TurnFinished:
    return TurnFinished(R, "t1", attempt, "completed", "done", None, None, "turn-1", 5)


@pytest.mark.parametrize(
    ("notices", "said"),
    [
        (  # a client's turn: every message of it names the client
            [
                TurnBegan(R, "t1", "a1", "hi", message_id="surface:2"),
                update(TextDelta("i1", "x", phase="final")),
                update(ToolStarted("c1", "command", "ls", command="ls")),
                update(ApprovalRequested("p1", "command", "ls", decisions=("accept",))),
                finished("a1"),
            ],
            [
                ("user_message", "surface:2"),
                ("text_delta", "surface:2"),
                ("tool_start", "surface:2"),
                ("permission_request", "surface:2"),
                ("complete", "surface:2"),
            ],
        ),
        (  # another client steers it, a third queues: each input names its own
            [
                TurnBegan(R, "t1", "a1", "hi", message_id="surface:2"),
                InputSteered(R, "a1", "and", message_id="surface:5"),
                InputQueued(R, 3, "later", 0, message_id="attach:1"),
                update(TextDelta("i1", "x")),
                finished("a1"),
                TurnBegan(R, "t1", "a2", "later", message_id="attach:1"),
                finished("a2"),
            ],
            [
                ("user_message", "surface:2"),
                ("user_message", "surface:5"),
                ("user_message", "attach:1"),
                ("text_delta", "surface:2"),
                ("complete", "surface:2"),
                ("user_message", "attach:1"),
                ("complete", "attach:1"),
            ],
        ),
        (  # no surface began it, or robota continued it after a restart, or a chat's message
            [
                TurnBegan(R, "t1", "a1", "hi"),
                finished("a1"),
                TurnBegan(R, "t1", "a2", "hi", recovery=True, message_id="surface:2"),
                update(ReasoningDelta("r1", "hmm")),
                finished("a2"),
                TurnBegan(R, "t1", "a3", "hi", message_id="om_123"),
                InputSteered(R, "a3", "and"),
                finished("a3"),
            ],
            [
                ("user_message", None),
                ("complete", None),
                ("user_message", None),
                ("thinking", None),
                ("complete", None),
                ("user_message", None),
                ("user_message", None),
                ("complete", None),
            ],
        ),
        (  # a command's result is no turn's
            [RouteReply(R, "model: default", "info")],
            [("command_result", "-")],
        ),
        (  # an end whose beginning this process never saw
            [finished("a9"), update(TextDelta("i1", "x"))],
            [("complete", None), ("text_delta", None)],
        ),
    ],
)
def test_driver_ids_name_whose_input_began_each_turn(
    notices: list[object], said: list[tuple[str, object]]
) -> None:
    assert drivers_of(notices) == said


def test_the_turns_followed_are_bounded() -> None:
    drivers = TurnDrivers()
    for n in range(MAX_TURNS_FOLLOWED + 10):
        notice = TurnBegan(R, "t1", f"a{n}", "hi", message_id="surface:1")
        drivers.stamp(notice, {"type": "user_message"})
    assert drivers.stamp(finished("a0"), {"type": "complete"})["driverId"] is None  # forgotten
    last = f"a{MAX_TURNS_FOLLOWED + 9}"
    assert drivers.stamp(finished(last), {"type": "complete"})["driverId"] == "surface:1"
