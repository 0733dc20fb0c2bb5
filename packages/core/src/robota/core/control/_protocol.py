"""The control protocol, sans-IO: its format, its error codes and one connection's decoding
on the host's side (the envelope both sides write, and the client reads, is the protocol's:
``robota.core.protocol``; a request line is at most its ``MAX_LINE``, 1 MiB, longer ones are
refused with ``too_large``).

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

from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING

from ..protocol import (
    BAD_JSON,
    BAD_REQUEST,
    MAX_LINE,
    TOO_LARGE,
    Failure,
    LineSplitter,
    Overlong,
    Request,
    RequestId,
    decode_request,
)

if TYPE_CHECKING:
    from ._requests import RequestRegistry

__all__ = ["MAX_LINE", "Call", "ErrorCode", "ServerConnection"]


class ErrorCode(StrEnum):
    BAD_JSON = BAD_JSON
    """The line is not a JSON text (or not UTF-8)."""
    TOO_LARGE = TOO_LARGE
    """The line is longer than ``MAX_LINE``; it was skipped up to its newline."""
    BAD_REQUEST = BAD_REQUEST
    """JSON, but not a request: not an object, no usable ``id``/``type``, or bad fields."""
    UNKNOWN_TYPE = "unknown_type"
    """``type`` names no request this host serves."""
    FORBIDDEN = "forbidden"
    """The peer is another user (the connection is closed after this reply), or descends
    from an agent's process and asked what only the operator may."""
    BUSY = "busy"
    """The host already serves its maximum of connections; this one is closed."""
    IDLE = "idle_timeout"
    """Nothing arrived for the idle timeout; the connection is closed after this reply."""
    INTERNAL = "internal"
    """The handler failed; the host logged the traceback and keeps serving."""


@dataclass(frozen=True, slots=True)
class Call:
    """A valid request: ``request`` is an instance of its registered type."""

    id: RequestId
    request: object


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
        request = decode_request(line)
        if not isinstance(request, Request):
            return request
        # The registry's module is the host's: a client decoding replies never loads it.
        from ._requests import Refused  # noqa: PLC0415

        try:
            return Call(request.id, self._registry.build(request.type, request.fields))
        except Refused as refused:
            return Failure(request.id, refused.code, refused.message, refused.field)
