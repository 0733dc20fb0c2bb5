"""What a surface's client may say, sans-IO: one JSON text frame to one typed message.

The client vocabulary (robota agent-cli's host protocol)::

    {"type": "submit", "prompt": "..."}                       a line typed: prompt, steer, /cmd
    {"type": "command", "name": "new" | "switch" | ..., "args": {...}}
    {"type": "abort"}                                         stop the running turn
    {"type": "permission-response", "id": "...", "result": "accept" | ...}
    {"type": "get-messages"}  {"type": "get-pending"}
    {"type": "resume", "lastSeq": 41}                         what came after seq 41
    {"type": "ack", "seq": 41}                                everything up to 41 arrived

``parse_client_frame`` checks every field it reads and raises ``SurfaceProtocolError`` naming
the field (``submit.prompt: expected a string``): the adapter answers ``protocol_error`` with
that message and the connection stays usable. Unknown fields are ignored (a newer client may
send more); an unknown ``type`` is refused, since acting on a guess would be worse.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import get_args

from ..events import ApprovalDecision
from ..protocol import ProtocolError, check_seq, loads_strict, shown

__all__ = [
    "CLIENT_TYPES",
    "MAX_FRAME",
    "Abort",
    "Ack",
    "ClientFrame",
    "Command",
    "GetMessages",
    "GetPending",
    "PermissionResponse",
    "Resume",
    "Submit",
    "SurfaceProtocolError",
    "parse_client_frame",
]

MAX_FRAME = 1024 * 1024
"""The longest frame a host reads (1 MiB); a longer one closes that connection (1009)."""

_DECISIONS: tuple[ApprovalDecision, ...] = get_args(ApprovalDecision)


class SurfaceProtocolError(ProtocolError):
    """A client frame that is not one of the vocabulary's; the message names what was wrong
    (``field`` its path, when one field was)."""


@dataclass(frozen=True, slots=True)
class Submit:
    prompt: str


@dataclass(frozen=True, slots=True)
class Command:
    name: str
    args: dict[str, object] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Abort:
    pass


@dataclass(frozen=True, slots=True)
class PermissionResponse:
    id: str
    result: ApprovalDecision


@dataclass(frozen=True, slots=True)
class GetMessages:
    pass


@dataclass(frozen=True, slots=True)
class GetPending:
    pass


@dataclass(frozen=True, slots=True)
class Resume:
    last_seq: int


@dataclass(frozen=True, slots=True)
class Ack:
    seq: int


ClientFrame = (
    Submit | Command | Abort | PermissionResponse | GetMessages | GetPending | Resume | Ack
)

CLIENT_TYPES = (
    "submit",
    "command",
    "abort",
    "permission-response",
    "get-messages",
    "get-pending",
    "resume",
    "ack",
)


def parse_client_frame(data: str | bytes) -> ClientFrame:
    """One text frame to its message, or ``SurfaceProtocolError`` naming what was wrong."""
    if len(data) > MAX_FRAME:
        raise SurfaceProtocolError(f"the frame is longer than {MAX_FRAME} bytes")
    try:
        frame = loads_strict(data)
    except ValueError:  # UnicodeDecodeError is one
        raise SurfaceProtocolError("the frame is not JSON") from None
    if not isinstance(frame, dict):
        raise SurfaceProtocolError("a frame is a JSON object with a string 'type'")
    kind = frame.get("type")
    if not isinstance(kind, str):
        raise SurfaceProtocolError("type: expected a string", "type")
    if kind == "submit":
        prompt = frame.get("prompt")
        if not isinstance(prompt, str):
            raise SurfaceProtocolError("submit.prompt: expected a string", "submit.prompt")
        if not prompt.strip():
            raise SurfaceProtocolError("submit.prompt: empty", "submit.prompt")
        return Submit(prompt)
    if kind == "command":
        name, args = frame.get("name"), frame.get("args", {})
        if not isinstance(name, str) or not name:
            raise SurfaceProtocolError("command.name: expected a non-empty string", "command.name")
        if args is None:
            args = {}
        if not isinstance(args, dict):
            raise SurfaceProtocolError("command.args: expected an object", "command.args")
        return Command(name, dict(args))
    if kind == "abort":
        return Abort()
    if kind == "permission-response":
        approval_id, result = frame.get("id"), frame.get("result")
        if not isinstance(approval_id, str) or not approval_id:
            raise SurfaceProtocolError(
                "permission-response.id: expected a non-empty string", "permission-response.id"
            )
        for decision in _DECISIONS:
            if result == decision:
                return PermissionResponse(approval_id, decision)
        raise SurfaceProtocolError(
            f"permission-response.result: expected one of {', '.join(_DECISIONS)}, "
            f"found {shown(result)}",
            "permission-response.result",
        )
    if kind == "get-messages":
        return GetMessages()
    if kind == "get-pending":
        return GetPending()
    if kind == "resume":
        return Resume(_seq(frame, "resume", "lastSeq"))
    if kind == "ack":
        return Ack(_seq(frame, "ack", "seq"))
    raise SurfaceProtocolError(
        f"unknown frame type {shown(kind)}: expected one of {', '.join(CLIENT_TYPES)}", "type"
    )


def _seq(frame: dict[str, object], kind: str, key: str) -> int:
    try:
        return check_seq(frame.get(key), f"{kind}.{key}")  # the protocol's, as every carrier's
    except ProtocolError as error:
        raise SurfaceProtocolError(str(error), error.path) from None
