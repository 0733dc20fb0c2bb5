"""Web API decisions as pure code: what an answer means, when a method may be called again,
which progress state goes out. No I/O, no clock: callers pass ``now`` (seconds, any monotonic
scale).

An answer (HTTP status, the body's ``ok`` and ``error``, the ``Retry-After`` header) means::

    HTTP 200 and ok: true                        Done
    HTTP 429, or error ratelimited               Retry after Retry-After's seconds (1 s
                                                 without one, 60 s at most), rate_limited
    HTTP >= 500, no answer (network, timeout),
      or error internal_error / fatal_error /
      service_unavailable / request_timeout      Retry after the backoff step
    anything else (ok: false with its error)     Fail: the same request would fail again

A call retries ``retries`` times at most, then fails with the last answer.

Slack limits by method (``chat.update`` is Tier 3), so a 429 holds back every call of that
method (``RateGate``); and a progress message only ever needs its newest state, so updates
waiting on a limit coalesce (``LatestWins``) instead of queueing.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Generic, TypeVar

__all__ = [
    "BACKOFF",
    "RETRYABLE_ERRORS",
    "Done",
    "Fail",
    "LatestWins",
    "Outcome",
    "RateGate",
    "Retry",
    "decide",
    "retry_after_seconds",
]

BACKOFF: tuple[float, ...] = (1.0, 2.0, 4.0, 8.0, 16.0, 30.0)
RETRYABLE_ERRORS = frozenset(
    {"internal_error", "fatal_error", "service_unavailable", "request_timeout"}
)
_MAX_RATE_WAIT = 60.0
_K = TypeVar("_K")
_V = TypeVar("_V")


@dataclass(frozen=True, slots=True)
class Done:
    pass


@dataclass(frozen=True, slots=True)
class Retry:
    after: float
    rate_limited: bool = False


@dataclass(frozen=True, slots=True)
class Fail:
    pass


Outcome = Done | Retry | Fail


def retry_after_seconds(header: str | None) -> float:
    """``Retry-After`` as seconds: 1 when absent or not a number, within ``[0, 60]``."""
    try:
        seconds = float(header) if header is not None else 1.0
    except ValueError:
        return 1.0
    return min(max(seconds, 0.0), _MAX_RATE_WAIT) if math.isfinite(seconds) else 1.0


def decide(
    status: int | None,
    ok: bool,
    error: str | None,
    *,
    retry_after: str | None = None,
    retried: int = 0,
    retries: int = 4,
    backoff: tuple[float, ...] = BACKOFF,
) -> Outcome:
    """What to do with one answer. ``status`` is ``None`` when no answer came (network error,
    timeout); ``ok`` is the body's ``ok``; ``retried`` counts the retries already made."""
    if status == 200 and ok:
        return Done()
    if retried >= retries:
        return Fail()
    if status == 429 or error == "ratelimited":
        return Retry(retry_after_seconds(retry_after), rate_limited=True)
    if status is None or status >= 500 or (status == 200 and error in RETRYABLE_ERRORS):
        return Retry(backoff[min(retried, len(backoff) - 1)] if backoff else 0.0)
    return Fail()


class RateGate:
    """When each method may be called again after a 429: one hold per method, the later of
    two holds wins."""

    def __init__(self) -> None:
        self._until: dict[str, float] = {}

    def hold(self, method: str, until: float) -> None:
        self._until[method] = max(until, self._until.get(method, -math.inf))

    def ready_at(self, method: str, now: float) -> float:
        """The earliest start of a call of ``method`` (``now`` when not held)."""
        until = self._until.get(method)
        if until is None:
            return now
        if until <= now:
            del self._until[method]
            return now
        return until


class LatestWins(Generic[_K, _V]):
    """The newest state of each key (a message), at most one sender per key.

    ``offer`` stores a state; it returns ``True`` when no one is sending this key, and the
    caller becomes its sender: it calls ``take`` for the newest state until ``take`` returns
    ``None`` (which also ends its turn as sender). A state offered while the sender waits on
    a rate limit replaces the waiting one: the older is never sent (``superseded`` counts
    them). ``put_back`` returns a state whose call was refused for now, unless a newer one
    arrived meanwhile; ``release`` ends a sender's turn early (it was cancelled), leaving the
    waiting state for the next ``offer``."""

    def __init__(self) -> None:
        self._waiting: dict[_K, _V] = {}
        self._sending: set[_K] = set()
        self.superseded = 0

    def offer(self, key: _K, state: _V) -> bool:
        if key in self._waiting:
            self.superseded += 1
        self._waiting[key] = state
        if key in self._sending:
            return False
        self._sending.add(key)
        return True

    def take(self, key: _K) -> _V | None:
        state = self._waiting.pop(key, None)
        if state is None:
            self._sending.discard(key)
        return state

    def put_back(self, key: _K, state: _V) -> None:
        if key in self._waiting:
            self.superseded += 1
        else:
            self._waiting[key] = state

    def release(self, key: _K) -> None:
        self._sending.discard(key)

    def sending(self, key: _K) -> bool:
        return key in self._sending
