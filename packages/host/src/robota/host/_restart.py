"""The safe restart's decisions, as a pure state machine (no clock, no I/O: both injected).

A restart is *scheduled* (``request``), under a schedule id that names this one schedule: a
cancel naming an older id (a stale card's button) cancels nothing. While it is pending, every
request joins it (its route is enrolled, its reason kept per route) and a forced request makes
it forced. The host asks ``decide`` whenever something may have changed; the restart *goes*
once

1. no turn runs,
2. no final answer waits to be delivered, and
3. ``quiet`` seconds (15) passed without an inbound message, counted from the latest of the
   schedule's own request and the last inbound (a new message resets the window);

a forced restart goes at once. Once it went, it is irreversible: cancel refuses, and further
requests are told the restart is under way (they are still enrolled: the new host notes them).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Literal

__all__ = ["QUIET", "Go", "Idle", "RestartCore", "Schedule", "Wait"]

QUIET = 15.0
"""Seconds without an inbound message a safe restart waits for."""


@dataclass(frozen=True, slots=True)
class Schedule:
    id: str
    force: bool
    requested_at: float
    routes: dict[str, str | None] = field(default_factory=dict)
    """Enrolled route keys, in the order they asked, each with the reason it gave."""
    reason: str | None = None
    """The first reason given (the CLI's ``--reason``)."""


@dataclass(frozen=True, slots=True)
class Idle:
    """Nothing is scheduled."""


@dataclass(frozen=True, slots=True)
class Wait:
    schedule: Schedule
    why: Literal["turns", "finals", "quiet"]
    until: float | None
    """When the quiet window ends (``why == "quiet"``); ``None``: when something changes."""


@dataclass(frozen=True, slots=True)
class Go:
    schedule: Schedule


Decision = Idle | Wait | Go


class RestartCore:
    """See the module docstring. Times are seconds on one monotonic clock."""

    def __init__(self, new_id: Callable[[], str], *, quiet: float = QUIET) -> None:
        self._new_id = new_id
        self.quiet = quiet
        self.pending: Schedule | None = None
        self.going = False
        """The pending schedule went: the host is being replaced."""
        self.last_inbound: float | None = None

    def request(
        self, *, route: str | None, force: bool, reason: str | None, now: float
    ) -> Schedule:
        """Schedule a restart, or join the pending one; the schedule as it now stands."""
        schedule = self.pending
        if schedule is None:
            schedule = Schedule(self._new_id(), force, now, {}, reason)
        else:
            schedule = replace(
                schedule,
                force=schedule.force or force,
                reason=schedule.reason if schedule.reason is not None else reason,
                routes=dict(schedule.routes),
            )
        if route is not None and route not in schedule.routes:
            schedule.routes[route] = reason
        self.pending = schedule
        return schedule

    def cancel(self, schedule_id: str) -> bool:
        """Cancel the pending schedule if it is ``schedule_id`` and has not gone yet."""
        if self.pending is None or self.going or self.pending.id != schedule_id:
            return False
        self.pending = None
        return True

    def inbound(self, now: float) -> None:
        """A message came in (any route): the quiet window starts again."""
        self.last_inbound = now if self.last_inbound is None else max(self.last_inbound, now)

    def decide(self, now: float, *, turns_running: int, finals_pending: int) -> Decision:
        schedule = self.pending
        if schedule is None:
            return Idle()
        if self.going or schedule.force:
            self.going = True
            return Go(schedule)
        if turns_running > 0:
            return Wait(schedule, "turns", None)
        if finals_pending > 0:
            return Wait(schedule, "finals", None)
        since = schedule.requested_at
        if self.last_inbound is not None:
            since = max(since, self.last_inbound)
        if now - since < self.quiet:
            return Wait(schedule, "quiet", since + self.quiet)
        self.going = True
        return Go(schedule)
