"""JSON-RPC framing, sans-IO: bytes in, classified messages out; messages in, bytes out.

Both protocols robota speaks (Codex App Server and ACP) are newline-delimited JSON-RPC over the
agent's stdio. The App Server omits ``"jsonrpc": "2.0"``; ACP agents send it; both are accepted.
Ids are integers (often starting at 0, so never tested for truthiness) or strings (codex-acp
sends UUIDs), and are echoed back exactly.

Lines are large: qwen's first ``available_commands_update`` is one ~560 KB line, so the decoder
accepts lines up to ``max_line`` (16 MiB by default). A longer line, or one that is not a JSON
object of a known shape, becomes a ``Malformed`` item carrying its first bytes, and decoding goes
on with the next line: one bad line never costs the connection.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

__all__ = [
    "DEFAULT_MAX_LINE",
    "LineDecoder",
    "Malformed",
    "Notification",
    "Request",
    "Response",
    "encode",
    "line_of",
    "notification_line",
    "request_line",
]

DEFAULT_MAX_LINE = 16 * 1024 * 1024

RequestId = int | str


@dataclass(frozen=True, slots=True)
class Request:
    id: RequestId
    method: str
    params: Any


@dataclass(frozen=True, slots=True)
class Notification:
    method: str
    params: Any


@dataclass(frozen=True, slots=True)
class Response:
    id: RequestId
    result: Any = None
    error: dict[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class Malformed:
    """A line that was skipped; ``head`` is its first bytes, for the log."""

    reason: str
    head: bytes
    overlong: bool = False


Message = Request | Notification | Response | Malformed


def _valid_id(value: object) -> bool:
    return (isinstance(value, int) and not isinstance(value, bool)) or isinstance(value, str)


def classify(raw: bytes) -> Message:
    """One line to one message. Shape decides: id+method request, method notification, id
    response."""
    head = raw[:120]
    try:
        obj = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as decode_error:
        return Malformed(f"not JSON: {decode_error}", head)
    if not isinstance(obj, dict):
        return Malformed(f"not a JSON object but {type(obj).__name__}", head)
    method = obj.get("method")
    has_id = "id" in obj and obj["id"] is not None
    if method is not None:
        if not isinstance(method, str):
            return Malformed("method is not a string", head)
        if has_id:
            if not _valid_id(obj["id"]):
                return Malformed("id is neither an integer nor a string", head)
            return Request(obj["id"], method, obj.get("params"))
        return Notification(method, obj.get("params"))
    if has_id:
        if not _valid_id(obj["id"]):
            return Malformed("id is neither an integer nor a string", head)
        error = obj.get("error")
        if error is not None and not isinstance(error, dict):
            return Malformed("error is not an object", head)
        if error is None and "result" not in obj:
            return Malformed("response has neither result nor error", head)
        return Response(obj["id"], obj.get("result"), error)
    return Malformed("neither a request, a notification nor a response", head)


class LineDecoder:
    """Accumulates bytes and yields one message per complete line."""

    def __init__(self, max_line: int = DEFAULT_MAX_LINE) -> None:
        self.max_line = max_line
        self._buffer = bytearray()
        self._discarding = False
        self._discard_head = b""

    def feed(self, data: bytes | bytearray) -> list[Message]:
        out: list[Message] = []
        start = 0
        while True:
            newline = data.find(b"\n", start)
            if newline < 0:
                self._take(data[start:], out)
                return out
            self._take(data[start:newline], out)
            out.extend(self._end_line())
            start = newline + 1

    def _take(self, chunk: bytes | bytearray, out: list[Message]) -> None:
        if self._discarding or not chunk:
            return
        self._buffer += chunk
        if len(self._buffer) > self.max_line:
            self._discard_head = bytes(self._buffer[:120])
            self._buffer.clear()
            self._discarding = True
            out.append(
                Malformed(f"line longer than {self.max_line} bytes", self._discard_head, True)
            )

    def _end_line(self) -> list[Message]:
        if self._discarding:
            self._discarding = False
            return []
        line = bytes(self._buffer).strip()
        self._buffer.clear()
        if not line:
            return []
        return [classify(line)]


def encode(message: dict[str, Any]) -> bytes:
    """One message to one line. Compact, UTF-8, newline-terminated; never contains a raw
    newline because JSON escapes them inside strings."""
    return json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"


def request_line(request_id: int, method: str, params: Any, *, jsonrpc_field: bool) -> bytes:
    """A request as a connection writes it: the one framing of every request."""
    message: dict[str, Any] = {"id": request_id, "method": method}
    if params is not None:
        message["params"] = params
    return line_of(message, jsonrpc_field=jsonrpc_field)


def notification_line(method: str, params: Any, *, jsonrpc_field: bool) -> bytes:
    """A notification as a connection writes it."""
    message: dict[str, Any] = {"method": method}
    if params is not None:
        message["params"] = params
    return line_of(message, jsonrpc_field=jsonrpc_field)


def line_of(message: dict[str, Any], *, jsonrpc_field: bool) -> bytes:
    """``message`` framed as a line, with ``"jsonrpc": "2.0"`` first where the protocol (ACP)
    wants it."""
    if jsonrpc_field:
        message = {"jsonrpc": "2.0", **message}
    return encode(message)
