"""What the platform's answers to a connection attempt mean: pure classifiers, tested by table.

Endpoint discovery, ``POST {domain}/callback/ws/endpoint`` with ``{"AppID", "AppSecret"}``::

    HTTP 200, code 0                  -> Endpoint(url, ClientConfig)
    HTTP not 200                      -> transient (server side)
    code 1 (busy), 1000040343         -> transient
    any other code (bad credentials)  -> fatal: retrying cannot help

The WebSocket handshake, when the server refuses it, says why in the response headers
``handshake-status``, ``handshake-msg`` and ``handshake-autherrcode``: status 514 with
autherrcode 1000040350 (connection limit exceeded) and status 403 are fatal; every other
refusal is transient. Reasons quote the platform's message, never the request.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass

__all__ = ["ENDPOINT_PATH", "Endpoint", "Refusal", "endpoint_outcome", "handshake_outcome"]

ENDPOINT_PATH = "/callback/ws/endpoint"
_BUSY = (1, 1000040343)
_FORBIDDEN = 403
_AUTH_FAILED = 514
_CONNECTION_LIMIT = 1000040350


@dataclass(frozen=True, slots=True)
class Endpoint:
    url: str
    client_config: object
    """The raw ``ClientConfig`` object (``ClientConfig.merged`` validates it)."""


@dataclass(frozen=True, slots=True)
class Refusal:
    reason: str
    fatal: bool


def _message(body: object) -> str:
    if isinstance(body, Mapping):
        msg = body.get("msg")
        if isinstance(msg, str) and msg:
            return msg[:300]
    return "no message"


def endpoint_outcome(status: int, body: bytes) -> Endpoint | Refusal:
    """The meaning of the endpoint call's answer (HTTP ``status`` and raw ``body``)."""
    try:
        parsed: object = json.loads(body) if body else None
    except ValueError:
        parsed = None
    if status != 200:
        return Refusal(f"endpoint call: HTTP {status} ({_message(parsed)})", fatal=False)
    if not isinstance(parsed, Mapping):
        return Refusal("endpoint call: the answer is not a JSON object", fatal=False)
    code = parsed.get("code")
    if code != 0:
        fatal = code not in _BUSY
        verdict = "refused" if fatal else "busy"
        return Refusal(f"endpoint call {verdict}: code {code}: {_message(parsed)}", fatal=fatal)
    data = parsed.get("data")
    url = data.get("URL") if isinstance(data, Mapping) else None
    if not isinstance(url, str) or not url:
        return Refusal("endpoint call: the answer has no data.URL", fatal=False)
    assert isinstance(data, Mapping)
    return Endpoint(url, data.get("ClientConfig"))


def handshake_outcome(status: int, headers: Mapping[str, str]) -> Refusal:
    """The meaning of a refused WebSocket handshake (``headers`` with lower-case names)."""
    declared = headers.get("handshake-status")
    message = headers.get("handshake-msg") or "no message"
    try:
        code = int(declared) if declared is not None else status
    except ValueError:
        code = status
    auth = headers.get("handshake-autherrcode")
    fatal = code == _FORBIDDEN or (code == _AUTH_FAILED and auth == str(_CONNECTION_LIMIT))
    detail = f"status {code}" + (f", autherrcode {auth}" if auth else "")
    verdict = "refused" if fatal else "failed"
    return Refusal(f"WebSocket handshake {verdict} ({detail}): {message[:300]}", fatal=fatal)
