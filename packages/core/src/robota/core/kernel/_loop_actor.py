"""Actors on the trio loop: state that decides, without a thread of its own, and restarted after
a crash without a supervisor task of its own.

An actor thread costs a stack and, once it allocates, a glibc arena of its own; a one-child
supervisor costs a trio task, a nursery, a channel and some sixty objects. For children that
come and go by the hundred (a chat transport's turn cards, ``docs/architecture/threads.md``
§2) that is what a burst leaves behind in the heap. So:

* ``LoopActor`` has ``Actor``'s hooks (``started``, ``receive``, ``terminated``) and its crash
  semantics: an exception in ``started`` or ``receive`` (``RequestCrash`` included) ends the
  incarnation as ``Crashed``; ``stop`` ends it as ``Stopped`` once the messages queued before it
  are handled. Its messages are handled on the trio thread in the order told, a slice at a time
  (one drain posted per burst, as ``Coalescer`` does). Callers hold an ``Address`` as for any
  actor: it is the address's incarnation while it runs (``tell`` raises
  ``pykka.ActorDeadError`` once it ended), and the tells still queued when it ends are rescued
  to the front of the address's stash. ``receive`` must not block: it runs on the loop; a start
  that needs a read first ``hold``s its inbox, asks (``soon`` brings the answer back to the
  loop) and ``resume``s, or ``crash``es.
* ``LoopChild`` is one such actor behind one stable address, as a ``Supervisor`` cell with
  ``Restart.TRANSIENT`` is for a thread: restarted after a crash with ``Backoff`` (the delay is a
  ``Timers`` timer, not a task), given up after more than ``intensity`` crashes within
  ``period`` seconds (``on_exit`` gets ``SupervisorFailed``); a normal stop is final. Either
  way the address is closed and ``on_exit`` told once.

Everything but ``LoopActor.tell`` happens on the trio thread.
"""

from __future__ import annotations

import enum
import logging
import threading
from collections import deque
from collections.abc import Callable
from typing import Any

import pykka
import trio

from .._errors import CrashRequested, SupervisorFailed
from ._actor import Crashed, ExitReason, RequestCrash, Stopped, terminate
from ._address import Address, DeadLetters
from ._bridge import LoopPort
from ._supervisor import Backoff
from ._timers import TimerHandle, Timers

__all__ = ["LoopActor", "LoopChild"]

logger = logging.getLogger("robota.core.kernel")

_SLICE = 64
"""Messages one drain handles before it lets the loop run other callbacks."""


class _Stop:
    """The stop request, queued behind what was told before it."""

    __slots__ = ()


_STOP = _Stop()

OnExit = Callable[["LoopActor", ExitReason], object]


class LoopActor:
    """Base class of an actor whose messages are handled on the trio loop; see the module
    docstring. Subclasses override ``receive`` and optionally ``started`` and ``terminated``."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._inbox: deque[object] = deque()
        self._port: LoopPort | None = None
        self._scheduled = False
        self._held = False
        self._exited = False
        self._address: Address | None = None
        self._on_exit: OnExit | None = None

    # -- hooks for subclasses ------------------------------------------------------------------

    def started(self) -> None:
        """Runs on the loop before the first message. Raising here is a crash."""

    def receive(self, message: Any) -> None:
        """Handle one message, on the loop. Raising here is a crash."""
        raise TypeError(f"{type(self).__name__} does not handle {type(message).__qualname__}")

    def terminated(self, reason: ExitReason) -> None:
        """Runs on the loop as the incarnation ends, stopped or crashed. Errors are logged."""

    # -- any thread ----------------------------------------------------------------------------

    def tell(self, message: Any) -> None:
        """Queue ``message`` for this incarnation (an actor's own timers and replies use it; a
        caller holds the address). Raises ``pykka.ActorDeadError`` once it has ended."""
        with self._lock:
            if self._exited:
                raise pykka.ActorDeadError(f"{self!r} has ended")
            self._inbox.append(message)
            port = self._port
            if self._scheduled or self._held or port is None:
                return
            self._scheduled = True
        if not port.post(self._drain):
            with self._lock:
                self._scheduled = False  # the loop is gone; nothing will handle it

    @property
    def ended(self) -> bool:
        return self._exited

    def soon(self, fn: Callable[..., object], *args: Any) -> None:
        """Call ``fn(*args)`` on this actor's loop, unless the incarnation has ended by then
        (an answer to what it asked, from the thread that answers)."""
        port = self._port
        if port is not None:
            port.post(self._call, fn, args)

    def _call(self, fn: Callable[..., object], args: tuple[Any, ...]) -> None:
        if self._exited:
            return
        try:
            fn(*args)
        except Exception as error:
            self._exit(Crashed(error))

    # -- for subclasses, on the loop -----------------------------------------------------------

    def hold(self) -> None:
        """Handle no message until ``resume`` (they wait in the inbox, a crash included)."""
        with self._lock:
            self._held = True

    def resume(self) -> None:
        """Handle the messages again, those that waited first."""
        with self._lock:
            self._held = False
        self._schedule()

    def crash(self, error: Exception) -> None:
        """End this incarnation now as ``Crashed`` with ``error``."""
        self._exit(Crashed(error))

    # -- the kernel's side (trio thread) -------------------------------------------------------

    def launch(self, on_exit: OnExit, address: Address | None = None) -> None:
        """Run this incarnation on the current trio loop: ``address`` hands it its stash and
        what is told to it from now on; ``on_exit(actor, reason)`` hears how it ended."""
        self._address = address
        self._on_exit = on_exit
        with self._lock:
            self._port = LoopPort()
        if address is not None:
            address._attach(self)
        try:
            self.started()
        except Exception as error:
            self._exit(Crashed(error))
            return
        self._schedule()

    def stop(self) -> None:
        """End as ``Stopped`` once what is queued now is handled; the address keeps later
        tells for whatever comes next."""
        if self._address is not None:
            self._address._suspend()
        try:
            self.tell(_STOP)
        except pykka.ActorDeadError:
            pass  # ended already; its exit was reported

    def stop_now(self) -> None:
        """Handle what is queued, then end as ``Stopped``, before returning (the loop is about
        to end and runs no more drains)."""
        if self._address is not None:
            self._address._suspend()
        while not self._exited:
            with self._lock:
                # Held: nothing can be handled yet; what is queued is rescued to the address.
                message = self._inbox.popleft() if self._inbox and not self._held else _STOP
            self._handle(message)

    def _schedule(self) -> None:
        with self._lock:
            if self._scheduled or self._held or self._exited or not self._inbox:
                return
            self._scheduled = True
            port = self._port
        if port is None or not port.post(self._drain):
            with self._lock:
                self._scheduled = False

    def _drain(self) -> None:
        for _ in range(_SLICE):
            with self._lock:
                if self._exited or self._held or not self._inbox:
                    self._scheduled = False
                    return
                message = self._inbox.popleft()
            self._handle(message)
        with self._lock:
            self._scheduled = False
        self._schedule()

    def _handle(self, message: object) -> None:
        if message is _STOP:
            self._exit(Stopped())
            return
        try:
            _receive(self, message)
        except Exception as error:
            self._exit(Crashed(error))

    def _exit(self, reason: ExitReason) -> None:
        with self._lock:
            if self._exited:
                return
            self._exited = True
        terminate(self, reason)
        if self._address is not None:
            self._address._detach(self, self._leftovers)
        on_exit, self._on_exit = self._on_exit, None
        if on_exit is not None:
            on_exit(self, reason)

    def _leftovers(self) -> list[object]:
        with self._lock:
            left = [m for m in self._inbox if m is not _STOP]
            self._inbox.clear()
        return left


def _receive(actor: LoopActor, message: object) -> None:
    if isinstance(message, RequestCrash):
        raise CrashRequested(message.reason)
    actor.receive(message)


class _Phase(enum.Enum):
    IDLE = "idle"
    RUNNING = "running"
    STOPPING = "stopping"
    CLOSED = "closed"


class LoopChild:
    """One ``LoopActor`` behind a stable address, restarted after a crash; see the module
    docstring. ``factory`` makes each incarnation; ``on_exit`` hears the end once: ``Stopped``,
    or ``SupervisorFailed`` when it kept crashing (it is called on the loop, must not block)."""

    __slots__ = (
        "__weakref__",
        "_actor",
        "_backoff",
        "_factory",
        "_failures",
        "_incarnation",
        "_intensity",
        "_on_exit",
        "_period",
        "_phase",
        "_restarts",
        "_started_at",
        "_timer",
        "_timers",
        "address",
        "name",
    )

    def __init__(
        self,
        name: str,
        factory: Callable[[], LoopActor],
        *,
        timers: Timers,
        on_exit: Callable[[Stopped | SupervisorFailed], object] | None = None,
        backoff: Backoff | None = None,
        intensity: int = 5,
        period: float = 60.0,
        stash_limit: int = 1000,
        dead_letters: DeadLetters | None = None,
    ) -> None:
        if intensity < 0 or period <= 0:
            raise ValueError("intensity must be >= 0 and period > 0")
        self.name = name
        self.address = Address(name, stash_limit=stash_limit, dead_letters=dead_letters)
        self._factory = factory
        self._timers = timers
        self._on_exit = on_exit
        self._backoff = backoff if backoff is not None else Backoff()
        self._intensity = intensity
        self._period = period
        self._phase = _Phase.IDLE
        self._actor: LoopActor | None = None
        self._incarnation = 0
        self._failures: deque[float] = deque()
        self._restarts = 0
        self._started_at = 0.0
        self._timer: TimerHandle | None = None

    def __repr__(self) -> str:
        return f"<LoopChild {self.name!r} {self._phase.value} incarnation={self._incarnation}>"

    @property
    def incarnation(self) -> int:
        """How many times the actor has been started (1 after the first start)."""
        return self._incarnation

    @property
    def running(self) -> bool:
        """Started and not ended for good (an incarnation runs, or a restart is due)."""
        return self._phase is _Phase.RUNNING

    @property
    def ended(self) -> bool:
        """Ended for good: stopped, or given up after too many crashes."""
        return self._phase is _Phase.CLOSED

    def start(self) -> None:
        """Start the first incarnation on the current trio loop."""
        if self._phase is not _Phase.IDLE:
            raise RuntimeError(f"{self!r} was started already")
        self._phase = _Phase.RUNNING
        self._launch()

    def stop(self, *, now: bool = False) -> None:
        """Stop for good once what is queued is handled; ``now``: before returning (the loop
        is ending). A no-op once stopping or ended."""
        if self._phase is _Phase.IDLE:
            self._finish(Stopped())
            return
        if self._phase is not _Phase.RUNNING:
            return
        self._phase = _Phase.STOPPING
        actor = self._actor
        if actor is None:  # between a crash and its restart
            if self._timer is not None:
                self._timers.cancel(self._timer)
                self._timer = None
            self._finish(Stopped())
        elif now:
            actor.stop_now()
        else:
            actor.stop()

    def _launch(self) -> None:
        self._timer = None
        self._incarnation += 1
        self._started_at = trio.current_time()
        try:
            actor = self._factory()
        except Exception as error:
            logger.exception("%s: the factory raised", self.name)
            self._exited(None, Crashed(error))
            return
        self._actor = actor
        actor.launch(self._exited, self.address)

    def _exited(self, actor: LoopActor | None, reason: ExitReason) -> None:
        if actor is not self._actor:
            return  # not the current incarnation's (cannot happen on one thread; cheap to check)
        self._actor = None
        if self._phase is not _Phase.RUNNING or isinstance(reason, Stopped):
            self._finish(Stopped())
            return
        logger.error(
            "%s crashed: %s: %s",
            self.name,
            type(reason.error).__name__,
            reason.error,
            exc_info=reason.error,
            extra={"child": self.name, "incarnation": self._incarnation},
        )
        now = trio.current_time()
        self._failures.append(now)
        while self._failures and self._failures[0] < now - self._period:
            self._failures.popleft()
        if len(self._failures) > self._intensity:
            self._finish(
                SupervisorFailed(self.name, len(self._failures), self._period, reason.error)
            )
            return
        if now - self._started_at >= self._backoff.reset_after:
            self._restarts = 0
        self._restarts += 1
        self._timer = self._timers.schedule(self._backoff.delay(self._restarts), self._restart)

    def _restart(self, _: object) -> None:
        if self._phase is _Phase.RUNNING and self._actor is None:
            self._launch()

    def _finish(self, reason: Stopped | SupervisorFailed) -> None:
        self._phase = _Phase.CLOSED
        self.address._close()
        on_exit, self._on_exit = self._on_exit, None
        self._factory = _no_factory
        if on_exit is not None:
            on_exit(reason)


def _no_factory() -> LoopActor:
    raise RuntimeError("this child has ended")
