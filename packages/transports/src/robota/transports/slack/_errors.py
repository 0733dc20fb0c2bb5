"""What the Slack transport raises. No message ever quotes a token: errors carry the Web API
method, the HTTP status and Slack's ``error`` code, never a request."""

from __future__ import annotations

from robota.core import RobotaError

__all__ = ["AUTH_ERRORS", "ApiError", "ConnectionRefused", "RateLimited", "SlackError", "TooLarge"]

AUTH_ERRORS = frozenset(
    {
        "invalid_auth",
        "not_authed",
        "account_inactive",
        "token_revoked",
        "token_expired",
        "not_allowed_token_type",
        "missing_scope",
    }
)
"""``error`` codes that say the token itself is refused: the same call can only fail again."""


class SlackError(RobotaError):
    """An error of the Slack transport."""


class ApiError(SlackError):
    """A Web API call failed: its method, HTTP status (0: no answer) and Slack's ``error``."""

    def __init__(self, method: str, *, status: int, error: str) -> None:
        self.method = method
        self.status = status
        self.error = error
        super().__init__(f"{method}: HTTP {status}, error {error}")

    @property
    def fatal(self) -> bool:
        """The token is refused (``invalid_auth``, ``not_authed``, ...)."""
        return self.error in AUTH_ERRORS


class RateLimited(ApiError):
    """HTTP 429 (or ``ratelimited``) on a call told not to wait: ``after`` seconds to wait."""

    def __init__(self, method: str, *, status: int, error: str, after: float) -> None:
        super().__init__(method, status=status, error=error)
        self.after = after


class ConnectionRefused(SlackError):
    """Socket Mode stopped for good: the app token refused (``invalid_auth``, ``not_authed``,
    ...) or Socket Mode turned off for the app (``link_disabled``). Retrying the same way would
    fail the same way, so the connection stops instead of looping."""


class TooLarge(SlackError):
    """A download went past its limit; ``size`` is what was seen (declared or read)."""

    def __init__(self, size: int, limit: int) -> None:
        self.size = size
        self.limit = limit
        super().__init__(f"{size} bytes, more than {limit}")
