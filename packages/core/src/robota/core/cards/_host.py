"""The card host: one card per open turn, each on the trio loop and restarted after a crash.

Turns come and go, by the hundred in a burst. ``CardHost`` is a trio ``Service`` that runs each
turn's card as a ``LoopCard`` under a ``LoopChild`` of its own (restarted after a crash with a
short backoff), on the host's loop: an open turn costs no thread and no supervisor task, so the
thread count stays what it was however many cards are open (issue 28 s.3: their threads' heaps
outlived a burst):

* ``open(turn, platform, delivery, notify=...)`` is thread-safe and returns the card's stable
  ``Address`` at once (on the host's loop its card starts at once too, elsewhere on the
  loop's next turn); events told to it before the card runs wait in the address's stash
  (``stash_limit``, generous: a turn streams fast while its card restarts);
* when the card reports the turn settled (``FinalAnswerDelivered`` or ``FinalAnswerFailed``)
  it is stopped and the turn forgotten; ``close(turn_id)`` stops one early;
* a card that keeps crashing trips its child's intensity: the engine hears
  ``FinalAnswerFailed`` and the turn is forgotten;
* stopping the host stops every card, and each saves its snapshot on the way out;
* what is told to a card once its address closed goes to the host's one ``dead_letters``
  (logged, counted), not to a ring of each card's own that nobody reads.
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
from ..kernel import Address, Backoff, DeadLetters, LoopChild, LoopPort, Stopped, Timers
from ..store import StoreClient
from ._core import CardPolicy
from ._delivery import CardDelivery
from ._loop import LoopCard
from ._messages import CardTurn, FinalAnswerDelivered, FinalAnswerFailed
from ._platforms import CardPlatform
from ._reads import LedgerEntry
from ._shell import CardWiring

__all__ = ["CardHost"]

logger = logging.getLogger("robota.core.cards")

CARD_BACKOFF = Backoff(base=0.05, cap=2.0, reset_after=10.0)
"""A card restarts fast: the turn keeps streaming into its stash meanwhile."""


@dataclass(slots=True, weakref_slot=True)
class _Entry:
    turn_id: str
    supervisor: LoopChild
    """What runs the turn's card and restarts it after a crash."""
    address: Address
    delivery: CardDelivery
    fresh: bool
    stop_requested: bool = False


class CardHost:
    """Runs the cards of open turns; see the module docstring."""

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
        dead_letters: DeadLetters | None = None,
        clock: Callable[[], float] = time.monotonic,
        wall: Callable[[], float] = time.time,
    ) -> None:
        self._store = store
        self.dead_letters = dead_letters if dead_letters is not None else DeadLetters()
        """Where every card's undeliverable messages go (a burst opens hundreds of cards)."""
        self._timers = timers
        self._wiring = CardWiring(store, timers, policy, clock, wall)
        self._backoff = backoff
        self._intensity = intensity
        self._period = period
        self._stash_limit = stash_limit
        self._lock = threading.Lock()
        self._turns: dict[str, _Entry] = {}
        self._waiting: list[_Entry] = []
        self._port: LoopPort | None = None

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
        """The card of ``turn``, started if it is not running yet.

        ``platform`` makes a fresh platform for each incarnation (renderers keep caches a
        crash should not carry over). ``notify`` gets the ``CardNotice``s; it is called on the
        host's loop and must not block. Opening an open turn returns its address."""
        with self._lock:
            entry = self._turns.get(turn.turn_id)
            if entry is not None and not entry.supervisor.ended:
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
        """Stop a turn's card now (it saves its snapshot); a no-op for unknown turns."""
        with self._lock:
            entry = self._turns.get(turn_id)
            port = self._port
        if entry is not None and port is not None:
            port.post(self._stop, entry)

    # -- the trio side -------------------------------------------------------------------------

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        try:
            with self._lock:
                self._port = LoopPort()
            self._start_waiting()
            task_status.started()
            await trio.sleep_forever()
        finally:
            with self._lock:
                self._port = None
                waiting = {id(e) for e in self._waiting}
                running = [e for e in self._turns.values() if id(e) not in waiting]
                # Turns not started yet start with the next run; the rest are gone.
                self._turns = {e.turn_id: e for e in self._waiting}
            for entry in running:
                # The loop runs no more drains: each card handles what it was told and saves
                # its snapshot before this returns (the store writer stops after the host).
                entry.stop_requested = True
                entry.supervisor.stop(now=True)

    def _start_waiting(self) -> None:
        if self._port is None:
            return
        with self._lock:
            waiting, self._waiting = self._waiting, []
        for entry in waiting:
            if entry.stop_requested:
                continue  # closed before it started: forgotten already
            if entry.fresh:  # before its card can ask to show it
                entry.delivery.expect_new(entry.turn_id)
            entry.supervisor.start()

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

        def ended(reason: Stopped | SupervisorFailed) -> None:
            if isinstance(reason, SupervisorFailed):
                logger.error(
                    "card host: the card of turn %s keeps crashing",
                    turn.turn_id,
                    exc_info=reason,
                )
                if notify is not None:
                    try:
                        notify(FinalAnswerFailed(turn.turn_id, f"card renderer failed: {reason}"))
                    except Exception:
                        logger.exception("card host: notify raised")
            # Forgotten once what the card wrote on its way out (its snapshot) is committed: a
            # read queued behind it on the same client, so a turn no longer open is saved.
            self._store.submit(LedgerEntry(turn.turn_id), forget)

        def forget(_: object) -> None:  # the writer's thread
            forgotten = entry_ref()
            with self._lock:
                if forgotten is not None and self._turns.get(turn.turn_id) is forgotten:
                    del self._turns[turn.turn_id]

        incarnations = 0
        wiring = self._wiring
        address: Address | None = None  # set below; named here, not the child: no cycle

        def card() -> LoopCard:
            nonlocal incarnations
            incarnations += 1
            assert address is not None
            # A successor restores what its predecessor saved.
            fresh = turn.fresh and incarnations == 1
            return LoopCard(turn, platform(), wiring, delivery, address, settled, fresh=fresh)

        child = LoopChild(
            f"card {turn.turn_id}",
            card,
            timers=self._timers,
            on_exit=ended,
            backoff=self._backoff,
            intensity=self._intensity,
            period=self._period,
            stash_limit=self._stash_limit,
            dead_letters=self.dead_letters,
        )
        address = child.address
        entry = _Entry(turn.turn_id, child, address, delivery, turn.fresh)
        entry_ref = weakref.ref(entry)
        return entry
