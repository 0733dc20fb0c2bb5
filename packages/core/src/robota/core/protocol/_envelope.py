"""The request/reply envelope, and the protocol's version (stdlib only)::

    request   {"id": 7, "type": "task.send", "task": "3", "text": "hi"}
    success   {"id": 7, "ok": true, "result": {...}}
    failure   {"id": 7, "ok": false, "error": {"code": "bad_request", "message": "...",
                                              "field": "text"}}

``id`` is an integer or a string, chosen by the asking side and echoed exactly (``null`` on a
failure that cannot be tied to a request); ``type`` names the request, every other key is one
of its fields; the result sits under its own key, so no result shadows the envelope. The
control socket speaks it (``robota.core.control``: its request types and error codes, the
host's decoding), the attach carrier opens with it (``session.attach``), the mesh will.

It lives apart from the notices' encoding (``_notices``, which needs the engine) so that a
``robota task`` command loads only this and the framing: a short-lived process pays for every
module it imports on each call.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ._framing import Overlong
from ._json import ProtocolError, describe_json, dumps, loads_strict
from ._record import Record

__all__ = [
    "BAD_JSON",
    "BAD_REQUEST",
    "PROTOCOL_VERSION",
    "Failure",
    "MalformedReply",
    "Ok",
    "Reply",
    "Request",
    "RequestId",
    "TOO_LARGE",
    "decode_reply",
    "decode_request",
    "encode_reply",
    "encode_request",
    "valid_id",
]

PROTOCOL_VERSION = 2
"""The vocabulary's version, one for every carrier. A peer says its own where a conversation
opens (the attach carrier's ``session.attach{protocol}`` and ``hello{protocol}``) and both
speak the lower one; a peer that says none speaks 1 (the attach frames before ``seq`` was the
session's and resumable). The WebSocket keeps its own dialect number (``SURFACE_PROTOCOL``,
still 1: its wire is unchanged)."""

RequestId = int | str

BAD_JSON = "bad_json"
"""The envelope's error code for a line that is no JSON text (or no UTF-8)."""
BAD_REQUEST = "bad_request"
"""The envelope's error code for JSON that is no request (``field`` names what is wrong)."""
TOO_LARGE = "too_large"
"""The envelope's error code for a line longer than the reader's bound (skipped)."""


class Request(Record):
    """A request as the envelope reads it: its id, its type's name, its other fields (which
    the serving side checks against its type, ``robota.core.control``'s registry)."""

    __slots__ = ("fields", "id", "type")
    __match_args__ = ("id", "type", "fields")

    id: RequestId
    type: str
    fields: dict[str, Any]

    def __init__(self, id: RequestId, type: str, fields: dict[str, Any]) -> None:
        object.__setattr__(self, "id", id)
        object.__setattr__(self, "type", type)
        object.__setattr__(self, "fields", fields)


class Ok(Record):
    __slots__ = ("id", "result")
    __match_args__ = ("id", "result")

    id: RequestId
    result: Any

    def __init__(self, id: RequestId, result: Any) -> None:
        object.__setattr__(self, "id", id)
        object.__setattr__(self, "result", result)


class Failure(Record):
    __slots__ = ("code", "field", "id", "message")
    __match_args__ = ("id", "code", "message", "field")

    id: RequestId | None
    code: str
    message: str
    field: str | None

    def __init__(
        self,
        id: RequestId | None,
        code: str,
        message: str,
        field: str | None = None,
    ) -> None:
        object.__setattr__(self, "id", id)
        object.__setattr__(self, "code", code)
        object.__setattr__(self, "message", message)
        object.__setattr__(self, "field", field)


Reply = Ok | Failure


def valid_id(value: object) -> bool:
    return (isinstance(value, int) and not isinstance(value, bool)) or isinstance(value, str)


def encode_reply(reply: Reply) -> bytes:
    """One reply, one line. Raises ``TypeError``/``ValueError`` when an ``Ok`` result is not
    JSON-serialisable (the server turns that into an ``internal`` failure)."""
    if isinstance(reply, Ok):
        return dumps({"id": reply.id, "ok": True, "result": reply.result}) + b"\n"
    error: dict[str, str] = {"code": str(reply.code), "message": reply.message}
    if reply.field is not None:
        error["field"] = reply.field
    return dumps({"id": reply.id, "ok": False, "error": error}) + b"\n"


def encode_request(request_id: RequestId, type_name: str, fields: Mapping[str, Any]) -> bytes:
    """One request, one line (the client's side). Fields may not use the envelope's keys."""
    clash = {"id", "type"} & set(fields)
    if clash:
        raise ValueError(f"request fields may not be named {sorted(clash)}")
    return dumps({"id": request_id, "type": type_name, **fields}) + b"\n"


class MalformedReply(ProtocolError):
    """A line the asking side read is not a reply; the message says why."""


def decode_reply(line: bytes) -> Reply:
    """A reply line as the client reads it; ``MalformedReply`` names what is wrong with it."""
    obj = loads_strict(line)
    if not isinstance(obj, dict):
        raise MalformedReply(f"a reply must be a JSON object, found {describe_json(obj)}")
    reply_id = obj.get("id")
    if reply_id is not None and not valid_id(reply_id):
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


def _head(line: bytes) -> str:
    text = line[:60].decode("utf-8", "replace")
    return repr(text) + ("..." if len(line) > 60 else "")


def decode_request(line: bytes | Overlong) -> Request | Failure | None:
    """A request line as the serving side reads it (``None`` for a blank one), or the
    ``Failure`` to send back (tied to the request's id when that much was readable): a bad or
    overlong line never costs the connection."""
    if isinstance(line, Overlong):
        return Failure(
            None,
            TOO_LARGE,
            f"request line longer than {line.limit} bytes (began {_head(line.head)}); "
            "skipped up to its newline",
        )
    line = line.strip()
    if not line:
        return None
    try:
        obj = loads_strict(line)
    except ValueError as error:  # JSONDecodeError and UnicodeDecodeError both are
        return Failure(None, BAD_JSON, f"not JSON ({error}): {_head(line)}")
    if not isinstance(obj, dict):
        found = describe_json(obj)
        return Failure(None, BAD_REQUEST, f"a request must be a JSON object, found {found}")
    if "id" not in obj:
        return Failure(None, BAD_REQUEST, "missing field 'id'", "id")
    request_id = obj["id"]
    if not valid_id(request_id):
        found = describe_json(request_id)
        message = f"field 'id' must be an integer or a string, found {found}"
        return Failure(None, BAD_REQUEST, message, "id")
    type_name = obj.get("type")
    if not isinstance(type_name, str):
        found = "nothing" if "type" not in obj else describe_json(type_name)
        message = f"field 'type' must be a string naming the request, found {found}"
        return Failure(request_id, BAD_REQUEST, message, "type")
    fields = {k: v for k, v in obj.items() if k not in ("id", "type")}
    return Request(request_id, type_name, fields)
