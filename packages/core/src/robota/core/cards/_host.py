"""The card host: one card actor per turn, each under a small supervisor of its own.

A kernel ``Supervisor`` has a fixed list of children; turns come and go. ``CardHost`` is a trio
``Service`` that gives each turn a one-child supervisor (the card actor, restarted after a crash
with a short backoff) and runs it in its own nursery:

* ``open(turn, platform, delivery, notify=...)`` is thread-safe and returns the actor's stable
  ``Address`` at once (on the host's loop its actor starts at once too, elsewhere on the
  loop's next turn); events told to it before the actor runs wait in the address's stash
  (``stash_limit``, generous: a turn streams fast while its actor restarts);
* when the actor reports the turn settled (``FinalAnswerDelivered`` or ``FinalAnswerFailed``)
  its supervisor is stopped and the turn forgotten; ``close(turn_id)`` stops one early;
* a card actor that keeps crashing trips its supervisor's intensity: the engine hears
  ``FinalAnswerFailed`` and the turn is forgotten;
* stopping the host stops every card actor, and each saves its snapshot on the way out.
"""

from __future__ import annotations

import logging
import threading
import time
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import trio

from .._errors import SupervisorFailed
from ..kernel import Address, Backoff, ChildSpec, LoopPort, Restart, Supervisor, Timers
from ..store import StoreClient
from ._actor import CardActor
from ._core import CardPolicy
from ._delivery import CardDelivery
from ._messages import CardTurn, FinalAnswerDelivered, FinalAnswerFailed
from ._platforms import CardPlatform

__all__ = ["CardHost"]

logger = logging.getLogger("robota.core.cards")

CARD_BACKOFF = Backoff(base=0.05, cap=2.0, reset_after=10.0)
"""A card actor restarts fast: the turn keeps streaming into its stash meanwhile."""


@dataclass(slots=True, weakref_slot=True)
class _Entry:
    turn_id: str
    supervisor: Supervisor
    address: Address
    notify: Callable[[Any], object] | None
    delivery: CardDelivery
    fresh: bool
    stop_requested: bool = False


class CardHost:
    """Runs the card actors of open turns; see the module docstring."""

    def __init__(
        self,
        *,
        store: StoreClient,
        timers: Timers,
        policy: CardPolicy | None = None,
        backoff: Backoff = CARD_BACKOFF,
        intensity: int = 5,
        period: float = 60.0,
        stash_limit: int = 10_000,
        clock: Callable[[], float] = time.monotonic,
        wall: Callable[[], float] = time.time,
    ) -> None:
        self._store = store
        self._timers = timers
        self._policy = policy
        self._backoff = backoff
        self._intensity = intensity
        self._period = period
        self._stash_limit = stash_limit
        self._clock = clock
        self._wall = wall
        self._lock = threading.Lock()
        self._turns: dict[str, _Entry] = {}
        self._waiting: list[_Entry] = []
        self._port: LoopPort | None = None
        self._nursery: trio.Nursery | None = None

    def __repr__(self) -> str:
        return f"<CardHost turns={len(self._turns)}>"

    @property
    def open_turns(self) -> list[str]:
        with self._lock:
            return list(self._turns)

    # -- any thread ----------------------------------------------------------------------------

    def open(
        self,
        turn: CardTurn,
        platform: Callable[[], CardPlatform],
        delivery: CardDelivery,
        *,
        notify: Callable[[Any], object] | None = None,
    ) -> Address:
        """The card actor of ``turn``, started if it is not running yet.

        ``platform`` makes a fresh platform for each incarnation (renderers keep caches a
        crash should not carry over). ``notify`` gets the ``CardNotice``s; it is called on the
        actor's thread and must not block. Opening an open turn returns its address."""
        with self._lock:
            entry = self._turns.get(turn.turn_id)
            if entry is not None:
                return entry.address
            entry = self._entry(turn, platform, delivery, notify)
            self._turns[turn.turn_id] = entry
            self._waiting.append(entry)
            port = self._port
        if port is not None and port.here():
            self._start_waiting()  # a turn's card waits for no loop turn: its first render
        elif port is not None:
            port.post(self._start_waiting)
        return entry.address

    def close(self, turn_id: str) -> None:
        """Stop a turn's card actor now (it saves its snapshot); a no-op for unknown turns."""
        with self._lock:
            entry = self._turns.get(turn_id)
            port = self._port
        if entry is not None and port is not None:
            port.post(self._stop, entry)

    # -- the trio side -------------------------------------------------------------------------

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        try:
            async with trio.open_nursery() as nursery:
                self._nursery = nursery
                with self._lock:
                    self._port = LoopPort()
                self._start_waiting()
                task_status.started()
                await trio.sleep_forever()
        finally:
            with self._lock:
                self._port = None
                # Turns not started yet start with the next run; the rest are gone.
                self._turns = {e.turn_id: e for e in self._waiting}
            self._nursery = None

    def _start_waiting(self) -> None:
        nursery = self._nursery
        if nursery is None:
            return
        with self._lock:
            waiting, self._waiting = self._waiting, []
        for entry in waiting:
            if entry.fresh:  # before its actor can ask to show it
                entry.delivery.expect_new(entry.turn_id)
            nursery.start_soon(self._supervise, entry)

    async def _supervise(self, entry: _Entry) -> None:
        try:
            if not entry.stop_requested:
                await entry.supervisor.run()
        except SupervisorFailed as error:
            logger.exception("card host: the card of turn %s keeps crashing", entry.turn_id)
            if entry.notify is not None:
                try:
                    entry.notify(FinalAnswerFailed(entry.turn_id, f"card renderer failed: {error}"))
                except Exception:
                    logger.exception("card host: notify raised")
        finally:
            with self._lock:
                if self._turns.get(entry.turn_id) is entry:
                    del self._turns[entry.turn_id]

    def _stop(self, entry: _Entry) -> None:
        entry.stop_requested = True
        entry.supervisor.stop()

    def _entry(
        self,
        turn: CardTurn,
        platform: Callable[[], CardPlatform],
        delivery: CardDelivery,
        notify: Callable[[Any], object] | None,
    ) -> _Entry:
        def settled(notice: Any) -> None:
            try:
                if notify is not None:
                    notify(notice)
            finally:
                if isinstance(notice, FinalAnswerDelivered | FinalAnswerFailed):
                    with self._lock:
                        port = self._port
                    settling = entry_ref()  # alive: the host holds it while its card runs
                    if port is not None and settling is not None:
                        port.post(self._stop, settling)

        incarnations = 0
        address: Address | None = None  # set below; named here, not the supervisor: no cycle

        def card() -> CardActor:
            nonlocal incarnations
            incarnations += 1
            return CardActor(
                turn,
                platform(),
                delivery=delivery,
                store=self._store,
                timers=self._timers,
                notify=settled,
                address=address,
                policy=self._policy,
                clock=self._clock,
                wall=self._wall,
                # A successor restores what its predecessor saved.
                fresh=turn.fresh and incarnations == 1,
            )

        supervisor = Supervisor(
            f"card {turn.turn_id}",
            [ChildSpec("card", card, restart=Restart.TRANSIENT, stash_limit=self._stash_limit)],
            backoff=self._backoff,
            intensity=self._intensity,
            period=self._period,
        )
        address = supervisor.address("card")
        entry = _Entry(turn.turn_id, supervisor, address, notify, delivery, turn.fresh)
        entry_ref = weakref.ref(entry)
        return entry
