"""Timers: tell an actor (or call a function on the loop) after a delay, from any thread.

Actors never sleep: an actor that wants to act later (a card update in 2 s, a retry after a
backoff) asks ``Timers`` to tell it a message then, and goes on with its inbox. ``Timers`` is a
trio ``Service``, so it lives in a supervision tree like any other child:

* ``schedule(delay, target, message)`` is thread-safe and never blocks; it returns a
  ``TimerHandle``. ``target`` is an ``Address`` (told ``message``) or a callable (called with
  ``message`` on the trio thread, inside a guard: an error there is logged, never raised into
  the loop).
* ``cancel(handle)`` is thread-safe; ``True`` means the timer had not fired and never will.
* one trio task owns a heap of deadlines and sleeps until the earliest; a new earlier timer
  moves that sleep's deadline, so there is no polling and no task per timer.

Delays, not deadlines, cross threads: a deadline is a reading of trio's clock, which only the
trio thread can take, so the delay is turned into a deadline when the loop takes the timer in
(microseconds after ``schedule``). A timer never fires before its delay has passed; under
trio's ``MockClock`` it fires in virtual time like any trio sleep.

Bounded: at most ``limit`` timers may be pending (``schedule`` raises ``TimerLimitExceeded``
beyond, because an actor that schedules without bound is a bug to surface, not to absorb), and
cancelled timers are swept out of the heap once they make up most of it. A burst of due timers
is delivered in slices with checkpoints between them, so it cannot hold the loop.

Stopping the service keeps the pending timers; nothing fires while it is stopped, and when it
runs again (a supervisor's restart) the overdue ones fire at once.
"""

from __future__ import annotations

import enum
import heapq
import itertools
import logging
import math
import threading
from collections.abc import Callable
from typing import Any

import pykka
import trio

from .._errors import KernelError
from ._address import Address
from ._bridge import LoopPort

__all__ = ["TimerHandle", "TimerLimitExceeded", "Timers"]

logger = logging.getLogger("robota.core.timers")

_SLICE = 256
"""Timers delivered between two checkpoints of the loop."""


class TimerLimitExceeded(KernelError):
    """More timers were scheduled than ``Timers.limit`` allows to be pending at once."""


class _State(enum.Enum):
    PENDING = "pending"
    FIRED = "fired"
    CANCELLED = "cancelled"


class TimerHandle:
    """One scheduled timer; pass it to ``Timers.cancel``. Compared by identity."""

    __slots__ = ("_message", "_owner", "_state", "_target", "delay")

    def __init__(
        self,
        owner: Timers,
        delay: float,
        target: Address | Callable[[Any], object],
        message: Any,
    ) -> None:
        self._owner = owner
        self.delay = delay
        self._target = target
        self._message = message
        self._state = _State.PENDING

    @property
    def pending(self) -> bool:
        return self._state is _State.PENDING

    @property
    def fired(self) -> bool:
        return self._state is _State.FIRED

    @property
    def cancelled(self) -> bool:
        return self._state is _State.CANCELLED

    def __repr__(self) -> str:
        return f"<TimerHandle {self.delay:g} s {self._state.value}>"


class Timers:
    """A trio service that tells messages when their delay has passed. See the module docs."""

    def __init__(self, *, limit: int = 100_000) -> None:
        if limit < 1:
            raise ValueError(f"limit must be >= 1, got {limit}")
        self.limit = limit
        self._lock = threading.Lock()
        self._incoming: list[TimerHandle] = []
        self._pending = 0
        self._intake_posted = False
        self._port: LoopPort | None = None
        # Trio thread only:
        self._heap: list[tuple[float, int, TimerHandle]] = []
        self._dead_in_heap = 0
        self._order = itertools.count()
        self._sleep: trio.CancelScope | None = None
        self._running = False

    def __repr__(self) -> str:
        return f"<Timers pending={self._pending}>"

    @property
    def pending(self) -> int:
        """Timers scheduled and neither fired nor cancelled."""
        return self._pending

    # -- any thread ----------------------------------------------------------------------------

    def schedule(
        self,
        delay: float,
        target: Address | Callable[[Any], object],
        message: Any = None,
    ) -> TimerHandle:
        """Tell ``message`` to ``target`` once ``delay`` seconds have passed. Never blocks."""
        if not delay >= 0 or math.isinf(delay):  # also refuses NaN
            raise ValueError(f"delay must be a finite number >= 0, got {delay!r}")
        handle = TimerHandle(self, float(delay), target, message)
        with self._lock:
            if self._pending >= self.limit:
                raise TimerLimitExceeded(
                    f"{self._pending} timers pending; the limit is {self.limit}"
                )
            self._pending += 1
            self._incoming.append(handle)
            port = self._port
            post = port is not None and not self._intake_posted
            if post:
                self._intake_posted = True
        if post and port is not None and not port.post(self._intake):
            with self._lock:
                self._intake_posted = False  # the run is over; the next run takes it in
        return handle

    def cancel(self, handle: TimerHandle) -> bool:
        """Stop ``handle`` from firing; ``False`` if it already fired or was cancelled."""
        if handle._owner is not self:
            raise ValueError("this timer belongs to another Timers")
        with self._lock:
            if handle._state is not _State.PENDING:
                return False
            handle._state = _State.CANCELLED
            self._pending -= 1
            self._dead_in_heap += 1  # an over-count when it was still incoming: harmless
        handle._target = _nowhere
        handle._message = None  # let go of what the message holds at once
        return True

    # -- the trio side -------------------------------------------------------------------------

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        if self._running:
            raise RuntimeError("this Timers is already running")
        self._running = True
        try:
            with self._lock:
                self._port = LoopPort()
                self._intake_posted = False
            self._intake()
            task_status.started()
            while True:
                await self._fire_due()
                deadline = self._heap[0][0] if self._heap else math.inf
                with trio.CancelScope(deadline=deadline) as sleep:
                    self._sleep = sleep
                    await trio.sleep_forever()
                self._sleep = None
        finally:
            self._sleep = None
            with self._lock:
                self._port = None
            self._running = False

    def _intake(self) -> None:
        """Trio thread: turn the delays of newly scheduled timers into deadlines."""
        with self._lock:
            batch, self._incoming = self._incoming, []
            self._intake_posted = False
        now = trio.current_time()
        for handle in batch:
            if handle._state is _State.PENDING:
                heapq.heappush(self._heap, (now + handle.delay, next(self._order), handle))
        sleep = self._sleep
        if sleep is not None and self._heap and self._heap[0][0] < sleep.deadline:
            sleep.deadline = self._heap[0][0]

    async def _fire_due(self) -> None:
        heap = self._heap
        delivered = 0
        while heap and heap[0][0] <= trio.current_time():
            _, _, handle = heapq.heappop(heap)
            with self._lock:
                if handle._state is not _State.PENDING:
                    self._dead_in_heap = max(0, self._dead_in_heap - 1)
                    continue
                handle._state = _State.FIRED
                self._pending -= 1
            target, message = handle._target, handle._message
            handle._target, handle._message = _nowhere, None
            _deliver(target, message)
            delivered += 1
            if delivered % _SLICE == 0:
                await trio.lowlevel.checkpoint()
        self._sweep()

    def _sweep(self) -> None:
        """Drop cancelled timers once they are most of the heap (they would wait there until
        their deadline otherwise, and an actor that reschedules often cancels a lot)."""
        if self._dead_in_heap <= 64 or self._dead_in_heap * 2 < len(self._heap):
            return
        with self._lock:
            self._heap = [entry for entry in self._heap if entry[2]._state is _State.PENDING]
            self._dead_in_heap = 0
        heapq.heapify(self._heap)


def _nowhere(message: Any) -> None:
    """The target of a timer that fired or was cancelled: holds nothing alive."""


def _deliver(target: Address | Callable[[Any], object], message: Any) -> None:
    if isinstance(target, Address):
        target.tell(message)  # never raises: a dead address sends it to dead letters
        return
    try:
        target(message)
    except pykka.ActorDeadError:
        # A raw ref's actor stopped before its timer fired; its successor schedules anew.
        logger.debug("timer for a stopped actor dropped (%s)", type(message).__qualname__)
    except Exception:
        logger.exception("timer target %r raised; the loop keeps running", target)
