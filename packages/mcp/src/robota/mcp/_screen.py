"""What of a stdio client's lines reaches the SDK, and the answer to what does not, sans-IO.

The SDK's stdio transport drops a line it cannot read as a JSON-RPC message without a word
(it hands the parse error to the session, which only logs it), so a client that sent one
waits for an answer that never comes. Each line is screened here first; what is not one
JSON-RPC 2.0 message is answered as JSON-RPC says, naming what was wrong:

    blank (whitespace only)              nothing: skipped
    not JSON                             -32700 Parse error, id null
    JSON, not an object (a batch too)    -32600 Invalid Request, id null
    an object the protocol does not      -32600 Invalid Request, its id when it has one
    read as a request, notification,     (a string or an integer), else null
    response or error

Everything else goes to the SDK as it came: its own errors (an unknown method, bad params)
are the SDK's to answer. The answer never quotes the line (it may carry a secret).
"""

from __future__ import annotations

import json
from typing import Any, Literal

__all__ = ["INVALID_REQUEST", "PARSE_ERROR", "Screened", "screen_line"]

PARSE_ERROR = -32700
INVALID_REQUEST = -32600

Screened = Literal["pass", "skip"] | dict[str, Any]
"""``pass``: the SDK reads the line; ``skip``: nothing to read; a dict: the error to send."""


def screen_line(line: str) -> Screened:
    """What to do with one line a stdio client sent (see the module docstring)."""
    if not line.strip():
        return "skip"
    try:
        value = json.loads(line)
    except json.JSONDecodeError as error:
        return _error(PARSE_ERROR, f"Parse error: the line is not JSON ({error.msg})", None)
    if not isinstance(value, dict):
        found = "an array (batches are not supported)" if isinstance(value, list) else "not"
        return _error(
            INVALID_REQUEST, f"Invalid Request: a message is one JSON object, this is {found}", None
        )
    problem = _message_problem(value)
    if problem is None:
        return "pass"
    return _error(INVALID_REQUEST, f"Invalid Request: {problem}", _id_of(value))


def _message_problem(message: dict[str, Any]) -> str | None:
    """Why ``message`` is none of JSON-RPC's four kinds, or ``None`` when it is one."""
    if message.get("jsonrpc") != "2.0":
        return "'jsonrpc' must be \"2.0\""
    if "method" in message:
        if not isinstance(message["method"], str):
            return "'method' must be a string"
        if message.get("params") is not None and not isinstance(message["params"], dict):
            return "'params' must be an object"
        if "id" in message and _id_of(message) is None:
            return "'id' must be a string or an integer"
        return None
    if "id" not in message:
        return "it has no 'method' (a request or notification) and no 'id' (a response)"
    if _id_of(message) is None and message["id"] is not None:
        return "'id' must be a string or an integer"
    if ("result" in message) == ("error" in message):
        return "a response has exactly one of 'result' and 'error'"
    return None


def _id_of(message: dict[str, Any]) -> str | int | None:
    found = message.get("id")
    if isinstance(found, str) or (isinstance(found, int) and not isinstance(found, bool)):
        return found
    return None


def _error(code: int, message: str, request_id: str | int | None) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}
