"""The card update discipline as a pure policy: no clock, no timer, no I/O.

The card actor owns one ``UpdateThrottle`` per card and drives it with its own clock readings
(``now``, seconds on any monotonic scale)::

    throttle.offer(view.version, critical=change == "critical", terminal=view.terminal, now=t)
    ...                                   # schedule a wake-up at throttle.next_deadline()
    if throttle.due(t):
        version = throttle.begin(t)       # the update is in flight; render the view now
        payload = render(view)
        if throttle.unchanged(payload_hash(payload)):
            throttle.skipped()            # same content as on screen: nothing to send
        else:
            ...send...; throttle.sent(payload_hash(payload), t2)   # or throttle.failed(t2, ...)

Rules:

* **Spacing.** An update goes out at least ``interval`` (2 s) after the previous attempt, or
  ``critical_interval`` (500 ms) when anything offered since was critical (a new approval, the
  terminal state). The first update goes out at once.
* **Coalescing.** Only the latest offered version is kept: offers while waiting (or while an
  update is in flight) replace each other, and the next update renders the latest state.
* **Unchanged skip.** The caller hashes what it rendered; the same hash as the last content
  sent is not sent again and does not count as an attempt for spacing.
* **Backoff.** A failed send is retried after 2, 4, 8, 16, then every 30 s (or the platform's
  ``retry_after`` when longer), with the latest state; a success resets the series. A
  non-transient failure drops that content (sending it again fails the same way) without
  backoff; the next offered state goes out on the normal schedule.
* **Terminal.** Once the terminal state is offered it is never dropped: a failed terminal
  update, transient or not, is retried with backoff until one is sent (or found unchanged);
  ``flushed`` tells the caller when it may send the final answer.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from .._errors import RobotaError

__all__ = ["BACKOFF", "ThrottleError", "UpdateThrottle", "payload_hash"]

BACKOFF: tuple[float, ...] = (2.0, 4.0, 8.0, 16.0, 30.0)


class ThrottleError(RobotaError, RuntimeError):
    """The throttle was driven out of order (e.g. ``sent`` with no update in flight)."""


def payload_hash(payload: Any) -> str:
    """A stable hash of a JSON-able payload (key order does not matter)."""
    data = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.blake2b(data.encode("utf-8"), digest_size=16).hexdigest()


@dataclass(slots=True)
class _Pending:
    version: int
    critical: bool
    terminal: bool


class UpdateThrottle:
    def __init__(
        self,
        *,
        interval: float = 2.0,
        critical_interval: float = 0.5,
        backoff: tuple[float, ...] = BACKOFF,
    ) -> None:
        self.interval = interval
        self.critical_interval = critical_interval
        self.backoff = backoff
        self._pending: _Pending | None = None
        self._in_flight: _Pending | None = None
        self._last_attempt: float | None = None
        self._last_hash: str | None = None
        self._failures = 0
        self._retry_at: float | None = None
        self._terminal_offered = False
        self._flushed = False
        self._attempt_started = 0.0

    # -- state ----------------------------------------------------------------------------------

    @property
    def pending_version(self) -> int | None:
        return self._pending.version if self._pending is not None else None

    @property
    def in_flight(self) -> bool:
        return self._in_flight is not None

    @property
    def flushed(self) -> bool:
        """The terminal state is on screen: the final answer may go out now."""
        return self._flushed

    @property
    def failures(self) -> int:
        """Consecutive failed sends (0 after a success)."""
        return self._failures

    # -- the protocol ---------------------------------------------------------------------------

    def offer(
        self, version: int, *, critical: bool = False, terminal: bool = False, now: float
    ) -> None:
        """A new state of the view exists. ``now`` is accepted for symmetry and logging; the
        deadline depends only on the last attempt."""
        del now
        if self._flushed:
            return  # the terminal card is out; nothing after it is shown
        terminal = terminal or self._terminal_offered
        self._terminal_offered = terminal
        previous = self._pending
        if previous is not None:
            critical = critical or previous.critical
            version = max(version, previous.version)
        self._pending = _Pending(version, critical or terminal, terminal)

    def next_deadline(self) -> float | None:
        """When the pending update may go out; ``None`` when nothing waits (or one is in
        flight: its outcome decides)."""
        pending = self._pending
        if pending is None or self._in_flight is not None:
            return None
        deadline = (
            0.0
            if self._last_attempt is None
            else self._last_attempt
            + (self.critical_interval if pending.critical else self.interval)
        )
        if self._retry_at is not None:
            deadline = max(deadline, self._retry_at)
        return deadline

    def due(self, now: float) -> bool:
        deadline = self.next_deadline()
        return deadline is not None and now >= deadline

    def begin(self, now: float) -> int:
        """Take the pending update: the caller renders this version now and sends it."""
        if not self.due(now):
            raise ThrottleError("begin() while no update is due")
        assert self._pending is not None
        self._in_flight, self._pending = self._pending, None
        self._attempt_started = now
        return self._in_flight.version

    def unchanged(self, content_hash: str) -> bool:
        """Whether this content is what the last successful update showed."""
        return content_hash == self._last_hash

    def skipped(self) -> None:
        """The in-flight update rendered unchanged content and was not sent."""
        flight = self._take_flight()
        if flight.terminal:
            self._flushed = True
            self._pending = None

    def sent(self, content_hash: str, now: float) -> None:
        flight = self._take_flight()
        self._last_attempt = self._attempt_started
        self._last_hash = content_hash
        self._failures = 0
        self._retry_at = None
        del now
        if flight.terminal:
            self._flushed = True
            self._pending = None

    def failed(self, now: float, *, transient: bool, retry_after: float | None = None) -> None:
        """The send failed. ``transient``: rate limits, 5xx, timeouts (worth retrying)."""
        flight = self._take_flight()
        self._last_attempt = self._attempt_started
        if not (transient or flight.terminal):
            return  # this content is refused; the next state goes out on the normal schedule
        self._failures += 1
        delay = self.backoff[min(self._failures, len(self.backoff)) - 1]
        if retry_after is not None:
            delay = max(delay, retry_after)
        self._retry_at = now + delay
        # Put it back unless something newer is waiting (latest state wins either way).
        if self._pending is None:
            self._pending = flight
        else:
            self._pending.critical = self._pending.critical or flight.critical
            self._pending.terminal = self._pending.terminal or flight.terminal

    def _take_flight(self) -> _Pending:
        flight = self._in_flight
        if flight is None:
            raise ThrottleError("no update is in flight")
        self._in_flight = None
        return flight
