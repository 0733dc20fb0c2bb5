"""What the Feishu transport raises. No message ever quotes the app secret: errors carry the
platform's code and message, the call's method and path, never a request body."""

from __future__ import annotations

from robota.core import RobotaError

__all__ = [
    "ApiError",
    "ConnectionRefused",
    "FeishuError",
    "FrameError",
    "RegistrationFailed",
    "TooLarge",
]


class FeishuError(RobotaError):
    """An error of the Feishu/Lark transport."""


class FrameError(FeishuError, ValueError):
    """Bytes that are not a well-formed pbbp2 frame."""


class ApiError(FeishuError):
    """A REST call failed: HTTP status and the platform's ``code`` / ``msg``."""

    def __init__(self, call: str, *, status: int, code: int | None, msg: str) -> None:
        self.call = call
        self.status = status
        self.code = code
        self.msg = msg
        super().__init__(f"{call}: HTTP {status}, code {code}: {msg}")


class TooLarge(FeishuError):
    """A download went past its limit; ``size`` is what was seen (declared or read)."""

    def __init__(self, size: int, limit: int) -> None:
        self.size = size
        self.limit = limit
        super().__init__(f"{size} bytes or more, over the limit of {limit}")


class ConnectionRefused(FeishuError):
    """The platform refused the long connection for good: bad credentials at endpoint
    discovery, a forbidden or over-limit handshake, or reconnects exhausted. Retrying the
    same way would fail the same way, so the connection stops instead of looping."""


class RegistrationFailed(FeishuError):
    """The one-click app registration cannot go on (``robota init``); the message says why in
    words a person can act on."""

    def __init__(self, kind: str, reason: str) -> None:
        self.kind = kind
        """``denied``, ``expired``, ``unsupported``, ``network`` or ``invalid`` (a malformed
        answer)."""
        self.reason = reason
        super().__init__(reason)
