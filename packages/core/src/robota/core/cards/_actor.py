"""The card renderer actor: one per turn, the thin shell around ``TurnCard``.

It owns the turn's ``TurnCard`` and carries out its effects: card requests go to the
``CardDelivery`` service, store ops to the ``StoreClient`` (acknowledged into the log, never
waited for), notices to the engine's ``notify``; the card's next deadline becomes one pending
``Timers`` wake-up. It never does I/O itself beyond one blocking read at start.

Crash and restart: on the way out (stop or crash) it submits the view's snapshot; the next
incarnation's first act is ``RestoreTurn``, a read queued behind that save, so it continues
from the exact view its predecessor had, with the ledger's card message id, the approval tokens
still live in the store, and the ledger's word on whether the answer is already out (then it
sends nothing and only reports). Only the message whose handling crashed is lost, as for every
actor; events still queued reach the successor through the stable address. The first
incarnation of a ``fresh`` turn skips the read: nothing of it can be stored yet.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pykka

from ..events import RuntimeEvent
from ..kernel import Actor, Address, ExitReason, TimerHandle, Timers
from ..presentation import UserSteer
from ..store import RetireCardActions, SaveTurnSnapshot, StoreClient
from ._core import CardPolicy, Effect, Restored, TurnCard, new_token
from ._delivery import CardDelivery
from ._messages import (
    CardFailed,
    CardOutcome,
    CardShown,
    CardSkipped,
    CardTurn,
    DeliverFinal,
    FinalFailed,
    FinalSent,
    ShowCard,
)
from ._platforms import CardPlatform
from ._reads import RestoreTurn

__all__ = ["CardActor"]

logger = logging.getLogger("robota.core.cards")

_OUTCOMES = (CardShown, CardSkipped, CardFailed, FinalSent, FinalFailed)


@dataclass(frozen=True, slots=True)
class _Wake:
    """A timer went off; only the latest one scheduled counts."""

    seq: int


class CardActor(Actor):
    """Draws one turn on one platform. Tell it the turn's ``RuntimeEvent``s and ``UserSteer``s.

    ``address`` is the actor's own stable address, when the caller has it: delivery outcomes are
    sent there, so those of requests in flight when it crashed reach its successor. ``notify``
    gets the ``CardNotice``s (an ``Address.tell``; called on the actor's thread, must not
    block). The clocks are injectable for tests: ``clock`` is monotonic (the update
    discipline), ``wall`` is epoch seconds (elapsed time, token expiry, store timestamps).
    """

    def __init__(
        self,
        turn: CardTurn,
        platform: CardPlatform,
        *,
        delivery: CardDelivery,
        store: StoreClient,
        timers: Timers,
        notify: Callable[[Any], object] | None = None,
        address: Address | None = None,
        policy: CardPolicy | None = None,
        clock: Callable[[], float] = time.monotonic,
        wall: Callable[[], float] = time.time,
        token: Callable[[], str] = new_token,
        restore_timeout: float = 10.0,
        fresh: bool = False,
    ) -> None:
        super().__init__()
        self.turn = turn
        self._fresh = fresh
        self._platform = platform
        self._delivery = delivery
        self._store = store
        self._timers = timers
        self._notify = notify
        self._address = address
        self._policy = policy
        self._clock = clock
        self._wall = wall
        self._token = token
        self._restore_timeout = restore_timeout
        self._card: TurnCard | None = None
        self._wake: TimerHandle | None = None
        self._wake_at = 0.0
        self._wake_seq = 0

    def __repr__(self) -> str:
        return f"<CardActor turn={self.turn.turn_id!r}>"

    @property
    def card(self) -> TurnCard | None:
        """The state machine (for tests and diagnostics; read it from the actor's thread)."""
        return self._card

    # -- the actor's hooks ---------------------------------------------------------------------

    def started(self) -> None:
        if self._fresh:
            restored = Restored()
        else:
            restored = self._store.write_sync(
                RestoreTurn(self.turn.turn_id), timeout=self._restore_timeout
            )
        self._card = TurnCard(
            self.turn,
            self._platform,
            policy=self._policy,
            clock=self._clock,
            wall=self._wall,
            token=self._token,
            restored=restored,
        )
        self._execute(self._card.start())

    def receive(self, message: Any) -> Any:
        card = self._card
        assert card is not None  # started() built it, or the incarnation crashed
        if isinstance(message, _Wake):
            if message.seq != self._wake_seq:
                return None  # superseded by a later wake-up
            self._wake = None
            effects = card.wake()
        elif isinstance(message, _OUTCOMES):
            effects = card.outcome(message)
        elif isinstance(message, RuntimeEvent | UserSteer):
            effects = card.event(message)
        else:
            return super().receive(message)
        self._execute(effects)
        return None

    def terminated(self, reason: ExitReason) -> None:
        del reason
        if self._wake is not None:
            self._timers.cancel(self._wake)
            self._wake = None
        card = self._card
        if card is None:
            return
        try:
            snapshot = card.snapshot()
        except Exception:
            # A view broken by the crash that ended us: the last saved snapshot stands.
            logger.exception("card %s: cannot snapshot the view on exit", self.turn.turn_id)
            return
        if snapshot is not None:
            self._store.submit(snapshot, _StoreAck(self.turn.turn_id, snapshot))

    # -- effects -------------------------------------------------------------------------------

    def _execute(self, effects: list[Effect]) -> None:
        for effect in effects:
            if isinstance(effect, ShowCard | DeliverFinal):
                self._delivery.submit(effect, self._reply_to)
            elif isinstance(effect, SaveTurnSnapshot | RetireCardActions):
                self._store.submit(effect, _StoreAck(self.turn.turn_id, effect))
            elif self._notify is not None:
                try:
                    self._notify(effect)
                except Exception:
                    logger.exception("card %s: notify raised", self.turn.turn_id)
        self._arm()

    def _reply_to(self, outcome: CardOutcome) -> None:
        if self._address is not None:
            self._address.tell(outcome)
            return
        try:
            self.actor_ref.tell(outcome)
        except pykka.ActorDeadError:
            pass  # this incarnation is gone; its successor learns the state from the ledger

    def _arm(self) -> None:
        """Keep exactly one wake-up pending, at the card's next deadline."""
        card = self._card
        deadline = card.next_wake() if card is not None else None
        if deadline is None:
            if self._wake is not None:
                self._timers.cancel(self._wake)
                self._wake = None
            return
        if self._wake is not None and self._wake.pending and self._wake_at <= deadline:
            return  # an earlier wake-up is coming; it re-arms for this one
        if self._wake is not None:
            self._timers.cancel(self._wake)
        self._wake_seq += 1
        self._wake_at = deadline
        delay = max(0.0, deadline - self._clock())
        self._wake = self._timers.schedule(delay, self.actor_ref.tell, _Wake(self._wake_seq))


class _StoreAck:
    """Logs a failed store write of the card; success needs no answer."""

    __slots__ = ("_op", "_turn_id")

    def __init__(self, turn_id: str, op: object) -> None:
        self._turn_id = turn_id
        self._op = type(op).__name__

    def __call__(self, outcome: object) -> None:
        if isinstance(outcome, BaseException):
            logger.warning(
                "card %s: %s failed: %s: %s",
                self._turn_id,
                self._op,
                type(outcome).__name__,
                outcome,
            )
