"""The engine's notices, and the attach carrier's frames, as JSON messages, sans-IO.

A notice is the engine's dataclass in the events' JSON form (``dataclass_to_json``), its class
under ``kind``; ``TurnUpdate``'s event is ``event_to_json``'s. This is the one encoding of
engine notices that leaves a process: the attach carrier sends it as it is, the mesh will, and
the WebSocket's host messages (``robota.core.surfaces``) are a view made from the same notices.

The attach carrier (a terminal attached to a background session over the session's control
socket, ``_framing``'s lines at most ``MAX_FRAME`` bytes) opens with the envelope's request
``{"id": 1, "type": "session.attach", "generation": ..., "mode": ..., "protocol": 2,
"last_seq": 41}`` (``protocol`` and ``last_seq`` optional) and then speaks frames. From the
session::

    {"type": "hello", "protocol": 2, "seq": 57, "mode": "drive" | "observe", "id": ...}
    {"type": "notice", "seq": 42, "notice": {"kind": "TurnBegan", "route_key": ..., ...}}
    {"type": "resume_gap", "lastSeq": 3, "firstSeq": 9, "latestSeq": 57}
    {"type": "protocol_error", "message": "...", "field": "submit.prompt"}

``seq`` numbers the session's notices (``_seq``), whoever is attached: a terminal that comes
back with ``last_seq`` gets the notices after it that it may see (those said to another
terminal alone are skipped), or ``resume_gap``. A note to one terminal alone carries the seq
of the last notice published (a peer's resume point stays right). A peer that says no
``protocol`` (version 1) gets ``hello`` without ``seq`` and the live stream. From the
terminal (the WebSocket client's names for the same requests)::

    {"type": "submit", "prompt": "..."}                  a line typed (prompt, steer, command)
    {"type": "abort"}                                    interrupt the running turn
    {"type": "permission-response", "id": "...", "result": "accept" | ...}

Decoding checks every field and raises ``WireError`` (a ``ProtocolError``) naming the field's
path, so a peer of another version fails with the field, never with a half-built notice.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, get_args

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
from ._framing import MAX_FRAME, WireError, decode_frame, encode_frame
from ._json import ProtocolError, expected

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
"""The attach frames' first version: what a terminal that says no ``protocol`` speaks."""

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


def notice_to_json(notice: RouteNotice) -> dict[str, Any]:
    fields = dataclass_to_json(notice)
    if isinstance(notice, TurnUpdate):
        fields["event"] = event_to_json(notice.event)
    return {"kind": type(notice).__name__, **fields}


def notice_from_json(obj: object) -> RouteNotice:
    if not isinstance(obj, dict):
        raise _wire(expected("notice", "an object", obj, by_kind=True))
    kind = obj.get("kind")
    cls = _NOTICES.get(kind) if isinstance(kind, str) else None
    if cls is None:
        raise _wire(expected("notice.kind", f"one of {', '.join(_NOTICES)}", kind))
    fields = {k: v for k, v in obj.items() if k != "kind"}
    try:
        if cls is TurnUpdate:
            event = event_from_json(fields.pop("event", None))
            rest = dataclass_from_json(_UpdateHead, fields, "notice")
            return TurnUpdate(rest.route_key, rest.task_id, rest.attempt_id, event)
        notice: RouteNotice = dataclass_from_json(cls, fields, "notice")
    except EventFormatError as error:
        raise WireError(str(error), "notice") from None
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
            raise _wire(expected("submit.prompt", "a string", prompt, by_kind=True))
        return UserInput(prompt)
    if kind == "abort":
        return Interrupt()
    if kind == "permission-response":
        approval_id, result = frame.get("id"), frame.get("result")
        if not isinstance(approval_id, str):
            raise _wire(expected("permission-response.id", "a string", approval_id, by_kind=True))
        for decision in get_args(ApprovalDecision):
            if result == decision:
                return AnswerApproval(approval_id, decision)
        where = "permission-response.result"
        raise _wire(expected(where, f"one of {', '.join(sorted(_DECISIONS))}", result))
    raise WireError(
        f"unknown frame type {kind!r}: expected submit, abort or permission-response", "type"
    )


def _wire(error: ProtocolError) -> WireError:
    """``expected``'s error as the attach carrier's."""
    return WireError(str(error), error.path)


@dataclass(frozen=True, slots=True)
class _UpdateHead:
    """``TurnUpdate`` without its event, for decoding its other fields."""

    route_key: str
    task_id: str
    attempt_id: str
