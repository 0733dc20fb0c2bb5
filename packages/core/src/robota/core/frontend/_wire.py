"""A route's notices and a surface's requests as JSON frames, sans-IO: what an attached
terminal and a background session say over the session's control socket.

One JSON object per line (UTF-8, ``\\n``), at most ``MAX_FRAME`` bytes. From the session::

    {"type": "hello", "protocol": 1, "mode": "drive" | "observe", "id": ..., "name": ...}
    {"type": "notice", "seq": 7, "notice": {"kind": "TurnBegan", "route_key": ..., ...}}
    {"type": "protocol_error", "message": "..."}

From the surface (the S4 vocabulary's names)::

    {"type": "submit", "prompt": "..."}                  a line typed (prompt, steer, command)
    {"type": "abort"}                                    interrupt the running turn
    {"type": "permission-response", "id": "...", "result": "accept" | ...}

A notice is the engine's dataclass in the events' JSON form (``dataclass_to_json``), its class
under ``kind``; ``TurnUpdate``'s event is ``event_to_json``'s. Decoding checks every field, so a
peer of another version fails with the field's path, never with a half-built notice.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, get_args

from .._errors import RobotaError
from ..engine import (
    AnswerApproval,
    FrontEndRequest,
    InputQueued,
    InputSteered,
    Interrupt,
    RouteIdle,
    RouteNotice,
    RouteReply,
    TaskOpened,
    TurnBegan,
    TurnFinished,
    TurnUpdate,
    UserInput,
)
from ..events import (
    ApprovalDecision,
    EventFormatError,
    dataclass_from_json,
    dataclass_to_json,
    event_from_json,
    event_to_json,
)

__all__ = [
    "MAX_FRAME",
    "WIRE_PROTOCOL",
    "WireError",
    "decode_frame",
    "encode_frame",
    "frame_to_request",
    "notice_from_json",
    "notice_to_json",
    "request_to_frame",
]

WIRE_PROTOCOL = 1
MAX_FRAME = 1024 * 1024
"""The longest frame either side reads (1 MiB); a longer one ends that connection."""

_NOTICES: dict[str, type[Any]] = {
    cls.__name__: cls
    for cls in (
        TaskOpened,
        TurnBegan,
        TurnUpdate,
        InputSteered,
        InputQueued,
        TurnFinished,
        RouteReply,
        RouteIdle,
    )
}
_DECISIONS = frozenset(get_args(ApprovalDecision))


class WireError(RobotaError, ValueError):
    """A frame that is not one of the carrier's; the message says what was wrong."""


def encode_frame(frame: dict[str, Any]) -> bytes:
    return json.dumps(frame, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"


def decode_frame(line: bytes) -> dict[str, Any]:
    """One line to its frame (an object with a string ``type``), or ``WireError``."""
    try:
        frame = json.loads(line)
    except ValueError:
        raise WireError("the frame is not JSON") from None
    if not isinstance(frame, dict) or not isinstance(frame.get("type"), str):
        raise WireError("a frame is a JSON object with a string 'type'")
    return frame


def notice_to_json(notice: RouteNotice) -> dict[str, Any]:
    fields = dataclass_to_json(notice)
    if isinstance(notice, TurnUpdate):
        fields["event"] = event_to_json(notice.event)
    return {"kind": type(notice).__name__, **fields}


def notice_from_json(obj: object) -> RouteNotice:
    if not isinstance(obj, dict):
        raise WireError("notice: expected an object")
    kind = obj.get("kind")
    cls = _NOTICES.get(kind) if isinstance(kind, str) else None
    if cls is None:
        raise WireError(f"notice.kind: expected one of {', '.join(_NOTICES)}, found {kind!r}")
    fields = {k: v for k, v in obj.items() if k != "kind"}
    try:
        if cls is TurnUpdate:
            event = event_from_json(fields.pop("event", None))
            rest = dataclass_from_json(_UpdateHead, fields, "notice")
            return TurnUpdate(rest.route_key, rest.task_id, rest.attempt_id, event)
        notice: RouteNotice = dataclass_from_json(cls, fields, "notice")
    except EventFormatError as error:
        raise WireError(str(error)) from None
    return notice


def request_to_frame(request: FrontEndRequest) -> dict[str, Any] | None:
    """The frame a surface sends for ``request``; ``None`` for what a surface may not ask of
    a session it attached to (choosing another task: ``NewTask``, ``UseTask``, ``ForkTask``)."""
    if isinstance(request, UserInput):
        return {"type": "submit", "prompt": request.text}
    if isinstance(request, Interrupt):
        return {"type": "abort"}
    if isinstance(request, AnswerApproval):
        result = request.decision
        return {"type": "permission-response", "id": request.approval_id, "result": result}
    return None


def frame_to_request(frame: dict[str, Any]) -> FrontEndRequest:
    """A surface's frame to the engine's request, or ``WireError`` naming the field."""
    kind = frame["type"]
    if kind == "submit":
        prompt = frame.get("prompt")
        if not isinstance(prompt, str):
            raise WireError("submit.prompt: expected a string")
        return UserInput(prompt)
    if kind == "abort":
        return Interrupt()
    if kind == "permission-response":
        approval_id, result = frame.get("id"), frame.get("result")
        if not isinstance(approval_id, str):
            raise WireError("permission-response.id: expected a string")
        for decision in get_args(ApprovalDecision):
            if result == decision:
                return AnswerApproval(approval_id, decision)
        raise WireError(f"permission-response.result: expected one of {sorted(_DECISIONS)}")
    raise WireError(f"unknown frame type {kind!r}: submit, abort or permission-response")


@dataclass(frozen=True, slots=True)
class _UpdateHead:
    """``TurnUpdate`` without its event, for decoding its other fields."""

    route_key: str
    task_id: str
    attempt_id: str
