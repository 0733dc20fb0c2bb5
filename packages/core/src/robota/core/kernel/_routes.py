"""The route directory: many routes, few of them active (Orleans-style virtual actors).

Every conversation a person can have with robota (a terminal, a private chat, a group timeline, a
topic thread, a WebSocket client) is a route with a key. The directory maps keys to actors:

* the first message for a key activates its ``RouteActor``, which loads the state last saved for
  it in its own thread (``restore``), so a slow store never blocks the caller or the directory;
* a sweep asks actors idle for ``idle_after`` seconds to passivate, and those that say they are
  ``settled`` (nothing in flight) after only ``quiet_after`` seconds (``passivation_due``): the
  actor handles every message queued before the request, saves its state, and stops; once a
  wave of passivations is over, the sweeper calls ``after_passivations`` (the engine's: give
  the freed heap back to the system);
* a message that arrives while a route passivates waits in the route's address and wakes the next
  incarnation as soon as the save is done, so nothing sent is lost;
* a route actor that crashes is started again on its next message (or at once, when messages are
  waiting) from the state it last saved, after its own backoff.

A thread is spent only on active routes; a known but passive route costs one dictionary entry
and whatever its saved state takes in the ``RouteStates`` store.
"""

from __future__ import annotations

import copy
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

import trio

from ._actor import Actor, Binding, Crashed, ExitReason, launch
from ._address import Address, DeadLetters
from ._supervisor import Backoff

__all__ = [
    "MemoryRouteStates",
    "RouteActor",
    "RouteDirectory",
    "RouteStates",
    "passivation_due",
]

logger = logging.getLogger("robota.core.routes")

S = TypeVar("S")


class RouteStates(Protocol[S]):
    """Where a passivated route's state lives between incarnations. Both calls may block."""

    def load(self, key: str) -> S | None: ...

    def save(self, key: str, state: S) -> None: ...


class MemoryRouteStates(Generic[S]):
    """``RouteStates`` in a dictionary: for tests and for routes whose state need not outlive
    the process. States are deep-copied both ways, as a real store would serialise them, so an
    incarnation can never mutate what its successor will load."""

    def __init__(self) -> None:
        self._states: dict[str, S] = {}
        self._lock = threading.Lock()

    def load(self, key: str) -> S | None:
        with self._lock:
            return copy.deepcopy(self._states.get(key))

    def save(self, key: str, state: S) -> None:
        with self._lock:
            self._states[key] = copy.deepcopy(state)

    def __len__(self) -> int:
        return len(self._states)


def passivation_due(
    idle_for: float, *, settled: bool, idle_after: float, quiet_after: float | None
) -> bool:
    """Whether an active route idle for ``idle_for`` seconds is to passivate: any route after
    ``idle_after``, a settled one after ``quiet_after`` already (``None``: never sooner)."""
    if idle_for >= idle_after:
        return True
    return settled and quiet_after is not None and idle_for >= quiet_after


@dataclass(frozen=True, slots=True)
class _Passivate:
    save: Callable[[Any], None]


class RouteActor(Actor, Generic[S]):
    """Base class of route actors, constructed with their route key.

    Subclasses implement ``restore`` (called in the actor's thread, before the first message,
    with the state last saved for the key or ``None``) and ``snapshot`` (called through a message
    when the route passivates). Routes that must survive a crash also persist as they go.

    ``settled`` is the actor's own word (set in its thread, read by the directory's sweep) that
    nothing of it is in flight, so it may passivate after the directory's short
    ``quiet_after``; it stays ``False`` for a route that never says so.
    """

    def __init__(self, key: str) -> None:
        super().__init__()
        self.key = key
        self._states: RouteStates[S] | None = None
        self.settled = False

    def restore(self, state: S | None) -> None:
        """Take over the state a previous incarnation saved (``None`` for a new route)."""

    def snapshot(self) -> S:
        raise NotImplementedError

    def on_start(self) -> None:
        states = self._states
        if states is not None:
            try:
                self.restore(states.load(self.key))
            except Exception as error:
                self._exit(Crashed(error))
                raise
        super().on_start()

    def on_receive(self, message: Any) -> Any:
        if isinstance(message, _Passivate):
            message.save(self.snapshot())
            self.stop()
            return None
        return super().on_receive(message)


class _Entry:
    __slots__ = ("actor", "address", "crashes", "incarnation", "last_crash", "last_used", "state")

    def __init__(self, address: Address) -> None:
        self.address = address
        self.actor: RouteActor[Any] | None = None
        self.incarnation = 0
        self.state = "passive"  # passive | active | passivating | backoff
        self.last_used = 0.0
        self.crashes = 0
        self.last_crash = 0.0


class RouteDirectory(Generic[S]):
    """Activates route actors on demand and passivates idle ones. Thread-safe.

    ``run`` (a ``Service``) sweeps every ``sweep_interval`` seconds and passivates every active
    route when cancelled, so the directory can be a supervised child.
    """

    def __init__(
        self,
        factory: Callable[[str], RouteActor[S]],
        states: RouteStates[S],
        *,
        idle_after: float = 600.0,
        quiet_after: float | None = None,
        sweep_interval: float | None = None,
        stash_limit: int = 1000,
        backoff: Backoff | None = None,
        clock: Callable[[], float] = time.monotonic,
        dead_letters: DeadLetters | None = None,
        after_passivations: Callable[[], object] | None = None,
    ) -> None:
        if idle_after <= 0:
            raise ValueError(f"idle_after must be > 0, got {idle_after}")
        if quiet_after is not None and quiet_after <= 0:
            raise ValueError(f"quiet_after must be > 0, got {quiet_after}")
        self._factory = factory
        self._states = states
        self.idle_after = idle_after
        self.quiet_after = quiet_after
        shortest = min(idle_after, quiet_after) if quiet_after is not None else idle_after
        self.sweep_interval = (
            sweep_interval if sweep_interval is not None else min(shortest / 2, 60.0)
        )
        self._after_passivations = after_passivations
        """Called by the sweeper, in a worker thread, once the passivations it asked for are
        done."""
        self._stash_limit = stash_limit
        self._backoff = backoff if backoff is not None else Backoff()
        self._clock = clock
        self._dead_letters = dead_letters if dead_letters is not None else DeadLetters()
        self._lock = threading.RLock()
        self._entries: dict[str, _Entry] = {}
        self._idle = threading.Condition(self._lock)
        self._closed = False
        """Set while ``run`` winds down: messages then wait in stashes, no route activates (a
        route woken during shutdown would act on a half-stopped engine)."""
        self.activations = 0
        self.passivations = 0

    # -- sending -------------------------------------------------------------------------------

    def tell(self, key: str, message: object) -> None:
        """Deliver ``message`` to route ``key``, activating the route if it is passive."""
        with self._lock:
            entry = self._entries.get(key)
            if entry is None:
                entry = self._entries[key] = _Entry(
                    Address(key, stash_limit=self._stash_limit, dead_letters=self._dead_letters)
                )
            entry.last_used = self._clock()
            entry.address.tell(message)
            if entry.state == "passive" and not self._closed:
                self._activate(key, entry)

    def address(self, key: str) -> Address | None:
        with self._lock:
            entry = self._entries.get(key)
            return entry.address if entry is not None else None

    @property
    def known(self) -> int:
        return len(self._entries)

    @property
    def active(self) -> int:
        with self._lock:
            return sum(1 for e in self._entries.values() if e.state != "passive")

    def is_active(self, key: str) -> bool:
        with self._lock:
            entry = self._entries.get(key)
            return entry is not None and entry.state == "active"

    # -- passivation ---------------------------------------------------------------------------

    def sweep(self) -> int:
        """Ask every route idle for ``idle_after`` seconds to passivate. Returns how many."""
        now = self._clock()
        count = 0
        with self._lock:
            for key, entry in self._entries.items():
                if entry.state != "active":
                    continue
                actor = entry.actor
                if passivation_due(
                    now - entry.last_used,
                    settled=actor is not None and actor.settled,
                    idle_after=self.idle_after,
                    quiet_after=self.quiet_after,
                ):
                    self._passivate(key, entry)
                    count += 1
        return count

    def _wave_over(self, since: int) -> bool:
        """Routes passivated since the count was ``since``, and none is passivating now."""
        with self._lock:
            return self.passivations != since and not any(
                e.state == "passivating" for e in self._entries.values()
            )

    def passivate_all(self, timeout: float) -> bool:
        """Passivate every active route and wait until they have saved. Blocks the caller."""
        deadline = time.monotonic() + timeout
        with self._lock:
            for key, entry in self._entries.items():
                if entry.state == "active":
                    self._passivate(key, entry)
            while any(e.state in ("active", "passivating") for e in self._entries.values()):
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                self._idle.wait(remaining)
        return True

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        with self._lock:
            self._closed = False
        task_status.started()
        released = self.passivations
        try:
            while True:
                await trio.sleep(self.sweep_interval)
                self.sweep()
                if self._after_passivations is not None and self._wave_over(released):
                    released = self.passivations
                    await trio.to_thread.run_sync(self._after_passivations)
        finally:
            with self._lock:
                self._closed = True
            with trio.CancelScope(shield=True):
                await trio.to_thread.run_sync(self.passivate_all, 10.0)

    # -- internals (called with the lock held) -------------------------------------------------

    def _activate(self, key: str, entry: _Entry) -> None:
        entry.incarnation += 1
        entry.state = "active"
        self.activations += 1
        incarnation = entry.incarnation
        try:
            actor = self._factory(key)
            actor._states = self._states
        except Exception as error:
            logger.exception("route %s: activation failed", key)
            self._on_exit(key, incarnation, Crashed(error))
            return
        entry.actor = actor
        launch(actor, Binding(entry.address, incarnation, self._reporter(key)))

    def _passivate(self, key: str, entry: _Entry) -> None:
        entry.state = "passivating"
        states = self._states

        def save(state: S) -> None:
            states.save(key, state)

        entry.address.tell(_Passivate(save))
        # Later messages wait for the next incarnation instead of landing behind the stop.
        entry.address._suspend()

    def _reporter(self, key: str) -> Callable[[int, ExitReason], None]:
        def report(incarnation: int, reason: ExitReason) -> None:
            self._on_exit(key, incarnation, reason)

        return report

    def _on_exit(self, key: str, incarnation: int, reason: ExitReason) -> None:
        with self._lock:
            entry = self._entries[key]
            if incarnation != entry.incarnation:
                return
            entry.actor = None
            if isinstance(reason, Crashed):
                logger.error(
                    "route %s crashed: %s",
                    key,
                    reason.error,
                    exc_info=reason.error,
                    extra={"route": key},
                )
                now = self._clock()
                if now - entry.last_crash >= self._backoff.reset_after:
                    entry.crashes = 0
                entry.crashes += 1
                entry.last_crash = now
            else:
                self.passivations += 1
                entry.crashes = 0
            entry.state = "passive"
            self._idle.notify_all()
            if entry.address.stashed and not self._closed:
                delay = self._backoff.delay(entry.crashes) if isinstance(reason, Crashed) else 0
                if delay <= 0:
                    self._activate(key, entry)
                else:
                    entry.state = "backoff"
                    timer = threading.Timer(delay, self._wake, (key, entry.incarnation))
                    timer.daemon = True
                    timer.start()

    def _wake(self, key: str, incarnation: int) -> None:
        with self._lock:
            entry = self._entries[key]
            if entry.incarnation == incarnation and entry.state == "backoff" and not self._closed:
                self._activate(key, entry)
