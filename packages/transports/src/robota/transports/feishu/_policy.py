"""REST decisions as pure code: what an answer means, when the token is stale, when a PATCH
may go out. No I/O, no clock: callers pass ``now`` (seconds, any monotonic scale).

An answer (HTTP status, the body's ``code``, the ``x-ogw-ratelimit-reset`` header) means::

    HTTP 200 and code 0                          Done
    code 99991663 / 99991664 / 99991665 / 99991668   RefreshToken (once per call; then Fail)
    HTTP 429 or code 99991400                    Retry after the header's seconds (1 s without
                                                 one, 60 s at most)
    code 230020 (update frequency limit)         Retry after the backoff step (2, 4, 8, 16, 30 s)
    HTTP >= 500, or no answer (a network error)  Retry after the backoff step
    anything else                                Fail: the same request would fail again

A call retries ``retries`` times at most, then fails with the last answer.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass

__all__ = [
    "BACKOFF",
    "RATE_LIMITED",
    "TOKEN_INVALID",
    "UPDATE_TOO_FAST",
    "Done",
    "Fail",
    "Outcome",
    "PatchLimiter",
    "RefreshToken",
    "Retry",
    "TokenCache",
    "decide",
]

BACKOFF: tuple[float, ...] = (2.0, 4.0, 8.0, 16.0, 30.0)
TOKEN_INVALID = frozenset({99991663, 99991664, 99991665, 99991668})
RATE_LIMITED = 99991400
UPDATE_TOO_FAST = 230020
_MAX_RATE_WAIT = 60.0


@dataclass(frozen=True, slots=True)
class Done:
    pass


@dataclass(frozen=True, slots=True)
class RefreshToken:
    pass


@dataclass(frozen=True, slots=True)
class Retry:
    after: float


@dataclass(frozen=True, slots=True)
class Fail:
    pass


Outcome = Done | RefreshToken | Retry | Fail


def _reset_seconds(header: str | None) -> float:
    try:
        seconds = float(header) if header is not None else 1.0
    except ValueError:
        return 1.0
    return min(max(seconds, 0.0), _MAX_RATE_WAIT) if math.isfinite(seconds) else 1.0


def decide(
    status: int | None,
    code: int | None,
    *,
    rate_reset: str | None = None,
    retried: int = 0,
    retries: int = 4,
    refreshed: bool = False,
    backoff: tuple[float, ...] = BACKOFF,
) -> Outcome:
    """What to do with one answer. ``status`` is ``None`` when no answer came (network error,
    timeout); ``retried`` counts the retries this call already made."""
    if status == 200 and code == 0:
        return Done()
    if code in TOKEN_INVALID:
        return Fail() if refreshed else RefreshToken()
    if retried >= retries:
        return Fail()
    if status == 429 or code == RATE_LIMITED:
        return Retry(_reset_seconds(rate_reset))
    if code == UPDATE_TOO_FAST or status is None or status >= 500:
        return Retry(backoff[min(retried, len(backoff) - 1)] if backoff else 0.0)
    return Fail()


class TokenCache:
    """The tenant access token, refreshed ``margin`` seconds before it expires (half its
    lifetime for a token that lives shorter than twice the margin)."""

    def __init__(self, margin: float = 600.0) -> None:
        self.margin = margin
        self._token: str | None = None
        self._refresh_at = -math.inf

    def valid(self, now: float) -> str | None:
        """The token, while it is not due for a refresh."""
        return self._token if self._token is not None and now < self._refresh_at else None

    def store(self, token: str, expires_in: float, now: float) -> None:
        self._token = token
        self._refresh_at = now + expires_in - min(self.margin, expires_in / 2)

    def invalidate(self, token: str) -> None:
        """Forget ``token`` (the platform refused it); a newer one already stored stays."""
        if self._token == token:
            self._token = None


class PatchLimiter:
    """At most ``rate`` calls per ``per`` seconds for each key (a message id): Feishu allows
    5 PATCHes per second to one message. ``reserve`` books the earliest allowed start.

    The default window is 1.1 s: requests booked exactly a second apart can reach the platform
    closer together than that (the earlier one delayed on the way), and the platform counts
    arrivals."""

    def __init__(self, rate: int = 5, per: float = 1.1) -> None:
        self.rate = rate
        self.per = per
        self._starts: dict[str, deque[float]] = {}

    def reserve(self, key: str, now: float) -> float:
        """When the next call for ``key`` may start (``>= now``), booked as made then."""
        self.forget_past(now)
        starts = self._starts.setdefault(key, deque(maxlen=self.rate))
        at = now
        if len(starts) == self.rate:
            at = max(now, starts[0] + self.per)
        starts.append(at)
        return at

    def forget_past(self, now: float) -> None:
        """Drop the keys whose last call is more than a window before ``now``: they no longer
        delay anything (a burst's cards would otherwise stay until the next PATCH)."""
        for key in [k for k, s in self._starts.items() if s[-1] <= now - self.per]:
            del self._starts[key]

    def __len__(self) -> int:
        """The keys it holds."""
        return len(self._starts)
