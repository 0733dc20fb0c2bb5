"""What a card's actor does with its ``TurnCard``, on whichever kind of actor it runs.

``CardShell`` feeds the pure ``TurnCard`` and carries out its effects: card requests go to the
``CardDelivery`` service (their outcomes to ``reply_to``), store ops to the ``StoreClient``
(acknowledged into the log, never waited for), notices to the engine's ``notify``; the card's
next deadline becomes one pending ``Timers`` wake-up told to ``wake_to``. On the way out it
submits the view's snapshot. It never does I/O and never blocks, so the same shell runs in a
thread (``CardActor``) and on the trio loop (the card host's ``LoopCard``).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..events import RuntimeEvent
from ..kernel import TimerHandle, Timers
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

__all__ = ["CardShell", "CardWiring", "StoreAck"]

logger = logging.getLogger("robota.core.cards")

_OUTCOMES = (CardShown, CardSkipped, CardFailed, FinalSent, FinalFailed)


@dataclass(frozen=True, slots=True)
class _Wake:
    """A timer went off; only the latest one scheduled counts."""

    seq: int


@dataclass(frozen=True, slots=True)
class CardWiring:
    """What the cards of one host (or one actor) share: the store their writes and restore
    reads go to, the timers of their wake-ups, the update discipline and the clocks."""

    store: StoreClient
    timers: Timers
    policy: CardPolicy | None = None
    clock: Callable[[], float] = time.monotonic
    """Monotonic: the update discipline."""
    wall: Callable[[], float] = time.time
    """Epoch seconds: elapsed time, token expiry, store timestamps."""
    token: Callable[[], str] = new_token


class CardShell:
    """One turn's ``TurnCard`` and the effects it asks for; see the module docstring.
    ``reply_to`` gets the delivery outcomes, ``wake_to`` the card's wake-ups (both on the
    loop); ``notify`` the ``CardNotice``s."""

    __slots__ = (
        "_card",
        "_delivery",
        "_notify",
        "_platform",
        "_reply_to",
        "_wake",
        "_wake_at",
        "_wake_seq",
        "_wake_to",
        "_wiring",
        "turn",
    )

    def __init__(  # noqa: PLR0917 (two callers, each naming them all)
        self,
        turn: CardTurn,
        platform: CardPlatform,
        wiring: CardWiring,
        delivery: CardDelivery,
        notify: Callable[[Any], object] | None,
        reply_to: Callable[[CardOutcome], object],
        wake_to: Callable[[Any], object],
    ) -> None:
        self.turn = turn
        self._platform = platform
        self._wiring = wiring
        self._delivery = delivery
        self._notify = notify
        self._reply_to = reply_to
        self._wake_to = wake_to
        self._card: TurnCard | None = None
        self._wake: TimerHandle | None = None
        self._wake_at = 0.0
        self._wake_seq = 0

    @property
    def card(self) -> TurnCard | None:
        """The state machine, once ``start`` built it."""
        return self._card

    def start(self, restored: Restored) -> None:
        wiring = self._wiring
        self._card = TurnCard(
            self.turn,
            self._platform,
            policy=wiring.policy,
            clock=wiring.clock,
            wall=wiring.wall,
            token=wiring.token,
            restored=restored,
        )
        self._execute(self._card.start())

    def receive(self, message: Any) -> bool:
        """Handle one of the card's messages; ``False`` for anything else."""
        card = self._card
        assert card is not None  # start() built it, or the incarnation crashed
        if isinstance(message, _Wake):
            if message.seq != self._wake_seq:
                return True  # superseded by a later wake-up
            self._wake = None
            effects = card.wake()
        elif isinstance(message, _OUTCOMES):
            effects = card.outcome(message)
        elif isinstance(message, RuntimeEvent | UserSteer):
            effects = card.event(message)
        else:
            return False
        self._execute(effects)
        return True

    def exit(self) -> None:
        """The incarnation ends: no more wake-ups, and the view's snapshot saved."""
        if self._wake is not None:
            self._wiring.timers.cancel(self._wake)
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
            self._wiring.store.submit(snapshot, StoreAck(self.turn.turn_id, snapshot))

    def _execute(self, effects: list[Effect]) -> None:
        for effect in effects:
            if isinstance(effect, ShowCard | DeliverFinal):
                self._delivery.submit(effect, self._reply_to)
            elif isinstance(effect, SaveTurnSnapshot | RetireCardActions):
                self._wiring.store.submit(effect, StoreAck(self.turn.turn_id, effect))
            elif self._notify is not None:
                try:
                    self._notify(effect)
                except Exception:
                    logger.exception("card %s: notify raised", self.turn.turn_id)
        self._arm()

    def _arm(self) -> None:
        """Keep exactly one wake-up pending, at the card's next deadline."""
        card = self._card
        deadline = card.next_wake() if card is not None else None
        if deadline is None:
            if self._wake is not None:
                self._wiring.timers.cancel(self._wake)
                self._wake = None
            return
        if self._wake is not None and self._wake.pending and self._wake_at <= deadline:
            return  # an earlier wake-up is coming; it re-arms for this one
        if self._wake is not None:
            self._wiring.timers.cancel(self._wake)
        self._wake_seq += 1
        self._wake_at = deadline
        delay = max(0.0, deadline - self._wiring.clock())
        self._wake = self._wiring.timers.schedule(delay, self._wake_to, _Wake(self._wake_seq))


class StoreAck:
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
