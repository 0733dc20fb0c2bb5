"""Streamable HTTP's guard: the bearer token's file, its check, and where it may listen.

The token is made here and written once, to a file the caller names (absolute, not there yet,
created exclusively with mode 0600, removed at shutdown): never to argv, stdout or a log. A
request without it, or with another, is answered 401 and logged with the reason and never the
token's text. Only a loopback address may be bound.
"""

from __future__ import annotations

import hmac
import ipaddress
import logging
import os
import secrets
from collections.abc import Awaitable, Callable, MutableMapping
from pathlib import Path
from typing import Any

from ._errors import McpError

__all__ = ["BadTokenFile", "auth_refusal", "bearer_guard", "loopback", "write_token_file"]

logger = logging.getLogger("robota.mcp")

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]


class BadTokenFile(McpError, ValueError):
    """The token file cannot be written as asked (not absolute, already there, ...)."""


def loopback(host: str) -> bool:
    """Whether ``host`` names only this machine (an IP literal of the loopback range, or
    ``localhost``); anything else is refused."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def auth_refusal(header: bytes | None, token: str) -> str | None:
    """Why a request's ``Authorization`` header is refused (``None``: it carries the token)."""
    if header is None or not header.strip():
        return "no Authorization header"
    scheme, _, value = header.strip().partition(b" ")
    if scheme.lower() != b"bearer":
        return "not a bearer token"
    if not hmac.compare_digest(value.strip(), token.encode()):
        return "wrong bearer token"
    return None


def write_token_file(path: Path) -> str:
    """A fresh token, written to ``path`` (absolute, must not exist; created 0600)."""
    if not path.is_absolute():
        raise BadTokenFile(f"--http-token-file {path}: not an absolute path")
    token = secrets.token_urlsafe(32)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    except FileExistsError:
        raise BadTokenFile(f"--http-token-file {path}: already exists") from None
    except OSError as error:
        raise BadTokenFile(f"--http-token-file {path}: {error.strerror}") from None
    with os.fdopen(fd, "w", encoding="ascii") as file:
        file.write(token + "\n")
    return token


def bearer_guard(app: App, token: str) -> App:
    """``app`` behind the token: an HTTP request without it gets 401 and a log line."""

    async def guarded(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            header = next(
                (v for k, v in scope.get("headers", ()) if k.lower() == b"authorization"), None
            )
            reason = auth_refusal(header, token)
            if reason is not None:
                logger.warning(
                    "mcp http: refused %s %s: %s",
                    scope.get("method"),
                    scope.get("path"),
                    reason,
                )
                body = f"unauthorized: {reason}\n".encode()
                await send(
                    {
                        "type": "http.response.start",
                        "status": 401,
                        "headers": [
                            (b"content-type", b"text/plain; charset=utf-8"),
                            (b"www-authenticate", b"Bearer"),
                            (b"content-length", str(len(body)).encode()),
                        ],
                    }
                )
                await send({"type": "http.response.body", "body": body})
                return
        await app(scope, receive, send)

    return guarded
