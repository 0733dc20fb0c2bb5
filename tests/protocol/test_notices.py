"""An attached surface's frames: every notice survives the wire unchanged, every request a
surface may send maps to the engine's, and a wrong frame names what was wrong (tables)."""

from __future__ import annotations

from typing import Any

import pytest

from robota.core.engine import (
    AnswerApproval,
    ForkTask,
    InputQueued,
    InputSteered,
    Interrupt,
    NewTask,
    RouteIdle,
    RouteReply,
    TaskOpened,
    TurnBegan,
    TurnFinished,
    TurnUpdate,
    UserInput,
    UseTask,
)
from robota.core.events import (
    ApprovalRequested,
    ApprovalResolved,
    TextDelta,
    ToolStarted,
    TurnCompleted,
    TurnError,
    Usage,
)
from robota.core.protocol import (
    WireError,
    decode_frame,
    encode_frame,
    frame_to_request,
    notice_from_json,
    notice_to_json,
    request_to_frame,
)

R = "session:0123456789ab"
NOTICES = [
    TaskOpened(R, "t1", "codex-acp", "/w", "remote-1", resumed=True, agent_version="0.16"),
    TurnBegan(R, "t1", "a1", "hello", recovery=True),
    TurnUpdate(R, "t1", "a1", TextDelta("i1", "wörld")),
    TurnUpdate(R, "t1", "a1", ApprovalRequested("ap1", "command", "run ls", tool_id="c1")),
    TurnUpdate(R, "t1", "a1", ToolStarted("c1", "command", "ls", command="ls -la")),
    TurnUpdate(
        R, "t1", "a1", TurnCompleted("turn-1", "failed", TurnError("boom", "upstream_5xx", True))
    ),
    InputSteered(R, "a1", "and then"),
    InputQueued(R, 3, "later", ahead=1),
    TurnFinished(R, "t1", "a1", "completed", "done", usage=Usage(input_tokens=3), duration_ms=9),
    TurnFinished(R, "t1", "a2", "failed", None, error=TurnError("x", "unknown", False, "E1")),
    RouteReply(R, "renamed", "info"),
    RouteReply(R, "approval ap1 was already answered by ws:1", "error", surface="attach:2"),
    TurnUpdate(R, "t1", "a1", ApprovalResolved("ap1", "decline", answerer="attach:1")),
    RouteIdle(R, inputs=4),
]


@pytest.mark.parametrize("notice", NOTICES, ids=lambda n: type(n).__name__)
def test_every_notice_survives_the_wire(notice: Any) -> None:
    line = encode_frame({"type": "notice", "seq": 1, "notice": notice_to_json(notice)})
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    assert notice_from_json(decode_frame(line)["notice"]) == notice


@pytest.mark.parametrize(
    ("obj", "message"),
    [
        ([], "expected an object"),
        ({"kind": "Nope"}, "notice.kind: expected one of"),
        ({"kind": "RouteIdle", "route_key": 3}, "notice.route_key: expected a string"),
        ({"kind": "RouteIdle", "route_key": R, "extra": 1}, "unknown field 'extra'"),
        ({"kind": "TurnUpdate", "route_key": R, "task_id": "t", "attempt_id": "a"}, "found null"),
        (
            {"kind": "TurnBegan", "route_key": R, "task_id": "t", "attempt_id": "a"},
            "prompt: missing",
        ),
    ],
)
def test_a_wrong_notice_names_what_is_wrong(obj: object, message: str) -> None:
    with pytest.raises(WireError, match=message):
        notice_from_json(obj)


@pytest.mark.parametrize(
    ("request_", "frame"),
    [
        (UserInput("hi /there"), {"type": "submit", "prompt": "hi /there"}),
        (Interrupt(), {"type": "abort"}),
        (
            AnswerApproval("ap1", "accept_for_session"),
            {"type": "permission-response", "id": "ap1", "result": "accept_for_session"},
        ),
    ],
)
def test_a_surfaces_requests_map_both_ways(request_: Any, frame: dict[str, Any]) -> None:
    assert request_to_frame(request_) == frame
    assert frame_to_request(frame) == request_


@pytest.mark.parametrize("request_", [NewTask(), UseTask("t1"), ForkTask("t1")])
def test_choosing_another_task_is_not_carried(request_: Any) -> None:
    assert request_to_frame(request_) is None


@pytest.mark.parametrize(
    ("line", "message"),
    [
        (b"not json", "not JSON"),
        (b"[1]", "string 'type'"),
        (b'{"type": 1}', "string 'type'"),
        (b'{"type": "submit"}', "submit.prompt: expected a string"),
        (b'{"type": "permission-response", "id": 1, "result": "accept"}', "id: expected a string"),
        (b'{"type": "permission-response", "id": "a", "result": "yes"}', "result: expected one of"),
        (b'{"type": "shutdown"}', "unknown frame type 'shutdown'"),
    ],
)
def test_a_wrong_frame_names_what_is_wrong(line: bytes, message: str) -> None:
    with pytest.raises(WireError, match=message):
        frame_to_request(decode_frame(line))
