"""The control protocol, sans-IO: the envelope of requests and replies, and one connection's
decoding on the host's side.

One request or reply per line, each a JSON object (UTF-8, ``\\n``-terminated)::

    request   {"id": 7, "type": "task.send", "task": "3", "text": "hi"}
    success   {"id": 7, "ok": true, "result": {...}}
    failure   {"id": 7, "ok": false, "error": {"code": "bad_request", "message": "...",
                                              "field": "text"}}

``id`` is an integer or a string, chosen by the client and echoed exactly; a failure that
cannot be tied to a request (the line was not JSON, was too long, or had no usable ``id``)
carries ``"id": null``. ``type`` names a registered request type; every other key of the
request is one of that type's fields (see ``_requests``). The handler's return value is
``result``, kept under its own key so that no result can shadow the envelope. ``field`` is
present only when one field is to blame.

Error codes are stable (clients branch on them); ``ErrorCode`` lists the protocol's own, and a
handler may refuse with a code of its own (``not_found``, say) through ``HandlerError``.

Nothing here does I/O: ``ServerConnection`` turns bytes into ``Call`` items (dispatch these)
and ``Failure`` items (send these back as they are), so that a bad line never costs the
connection and the whole decision is tested without a socket.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from ._describe import describe_json
from ._errors import ControlError
from ._lines import LineSplitter, Overlong

if TYPE_CHECKING:
    from ._requests import RequestRegistry

__all__ = [
    "MAX_LINE",
    "MalformedReply",
    "Call",
    "ErrorCode",
    "Failure",
    "Ok",
    "Reply",
    "RequestId",
    "ServerConnection",
    "decode_reply",
    "encode_reply",
    "encode_request",
]

MAX_LINE = 1024 * 1024
"""The longest request line a host reads (1 MiB); longer ones are refused with ``too_large``."""

RequestId = int | str


class ErrorCode(StrEnum):
    BAD_JSON = "bad_json"
    """The line is not a JSON text (or not UTF-8)."""
    TOO_LARGE = "too_large"
    """The line is longer than ``MAX_LINE``; it was skipped up to its newline."""
    BAD_REQUEST = "bad_request"
    """JSON, but not a request: not an object, no usable ``id``/``type``, or bad fields."""
    UNKNOWN_TYPE = "unknown_type"
    """``type`` names no request this host serves."""
    FORBIDDEN = "forbidden"
    """The peer is another user; the connection is closed after this reply."""
    BUSY = "busy"
    """The host already serves its maximum of connections; this one is closed."""
    IDLE = "idle_timeout"
    """Nothing arrived for the idle timeout; the connection is closed after this reply."""
    INTERNAL = "internal"
    """The handler failed; the host logged the traceback and keeps serving."""


@dataclass(frozen=True, slots=True)
class Ok:
    id: RequestId
    result: Any


@dataclass(frozen=True, slots=True)
class Failure:
    id: RequestId | None
    code: str
    message: str
    field: str | None = None


Reply = Ok | Failure


@dataclass(frozen=True, slots=True)
class Call:
    """A valid request: ``request`` is an instance of its registered type."""

    id: RequestId
    request: object


def _valid_id(value: object) -> bool:
    return (isinstance(value, int) and not isinstance(value, bool)) or isinstance(value, str)


def _no_constants(name: str) -> object:
    raise ValueError(f"{name} is not JSON")


def _loads(line: bytes) -> object:
    """Strict JSON: NaN and Infinity, which Python would accept, are refused."""
    return json.loads(line.decode("utf-8"), parse_constant=_no_constants)


def _head(line: bytes) -> str:
    text = line[:60].decode("utf-8", "replace")
    return repr(text) + ("..." if len(line) > 60 else "")


class ServerConnection:
    """The host's side of one connection: bytes in, ``Call`` and ``Failure`` items out."""

    def __init__(self, registry: RequestRegistry, *, max_line: int = MAX_LINE) -> None:
        self._registry = registry
        self._lines = LineSplitter(max_line)

    def receive(self, data: bytes | bytearray) -> list[Call | Failure]:
        return [item for line in self._lines.feed(data) if (item := self._decode(line))]

    def end_of_input(self) -> list[Call | Failure]:
        """The peer closed its side: a last line without its newline is still a request."""
        return [item for line in self._lines.close() if (item := self._decode(line))]

    def _decode(self, line: bytes | Overlong) -> Call | Failure | None:
        if isinstance(line, Overlong):
            return Failure(
                None,
                ErrorCode.TOO_LARGE,
                f"request line longer than {line.limit} bytes (began {_head(line.head)}); "
                "skipped up to its newline",
            )
        line = line.strip()
        if not line:
            return None
        try:
            obj = _loads(line)
        except ValueError as error:  # JSONDecodeError and UnicodeDecodeError both are
            return Failure(None, ErrorCode.BAD_JSON, f"not JSON ({error}): {_head(line)}")
        if not isinstance(obj, dict):
            return Failure(
                None,
                ErrorCode.BAD_REQUEST,
                f"a request must be a JSON object, found {describe_json(obj)}",
            )
        return self._request(obj)

    def _request(self, obj: dict[str, Any]) -> Call | Failure:
        if "id" not in obj:
            return Failure(None, ErrorCode.BAD_REQUEST, "missing field 'id'", "id")
        request_id = obj["id"]
        if not _valid_id(request_id):
            return Failure(
                None,
                ErrorCode.BAD_REQUEST,
                f"field 'id' must be an integer or a string, found {describe_json(request_id)}",
                "id",
            )
        type_name = obj.get("type")
        if not isinstance(type_name, str):
            found = "nothing" if "type" not in obj else describe_json(type_name)
            return Failure(
                request_id,
                ErrorCode.BAD_REQUEST,
                f"field 'type' must be a string naming the request, found {found}",
                "type",
            )
        fields = {k: v for k, v in obj.items() if k not in ("id", "type")}
        # The registry's module is the host's: a client decoding replies never loads it.
        from ._requests import Refused  # noqa: PLC0415

        try:
            return Call(request_id, self._registry.build(type_name, fields))
        except Refused as refused:
            return Failure(request_id, refused.code, refused.message, refused.field)


def _dumps(obj: object) -> bytes:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()


def encode_reply(reply: Reply) -> bytes:
    """One reply, one line. Raises ``TypeError``/``ValueError`` when an ``Ok`` result is not
    JSON-serialisable (the server turns that into an ``internal`` failure)."""
    if isinstance(reply, Ok):
        return _dumps({"id": reply.id, "ok": True, "result": reply.result}) + b"\n"
    error: dict[str, str] = {"code": str(reply.code), "message": reply.message}
    if reply.field is not None:
        error["field"] = reply.field
    return _dumps({"id": reply.id, "ok": False, "error": error}) + b"\n"


def encode_request(request_id: RequestId, type_name: str, fields: Mapping[str, Any]) -> bytes:
    """One request, one line (the client's side). Fields may not use the envelope's keys."""
    clash = {"id", "type"} & set(fields)
    if clash:
        raise ValueError(f"request fields may not be named {sorted(clash)}")
    return _dumps({"id": request_id, "type": type_name, **fields}) + b"\n"


class MalformedReply(ControlError, ValueError):
    """A line the client read is not a control reply; the message says why."""


def decode_reply(line: bytes) -> Reply:
    """A reply line as the client reads it; ``MalformedReply`` names what is wrong with it."""
    obj = _loads(line)
    if not isinstance(obj, dict):
        raise MalformedReply(f"a reply must be a JSON object, found {describe_json(obj)}")
    reply_id = obj.get("id")
    if reply_id is not None and not _valid_id(reply_id):
        raise MalformedReply(f"reply id must be an integer, a string or null, not {reply_id!r}")
    ok = obj.get("ok")
    if ok is True:
        if reply_id is None:
            raise MalformedReply("a successful reply must carry its request's id")
        return Ok(reply_id, obj.get("result"))
    if ok is not False:
        raise MalformedReply(f"reply field 'ok' must be a boolean, found {describe_json(ok)}")
    error = obj.get("error")
    if not isinstance(error, dict):
        found = describe_json(error)
        raise MalformedReply(f"a failed reply needs an 'error' object, found {found}")
    code, message, field = error.get("code"), error.get("message"), error.get("field")
    if not isinstance(code, str) or not isinstance(message, str):
        raise MalformedReply("a reply's error needs a string 'code' and a string 'message'")
    if field is not None and not isinstance(field, str):
        found = describe_json(field)
        raise MalformedReply(f"a reply's error field must be a string, found {found}")
    return Failure(reply_id, code, message, field)
