"""The card renderer as a pykka actor: one thread per turn, the thin shell around ``TurnCard``.

``CardActor`` runs a ``CardShell`` (what the card does with its effects) in a thread of its own,
under any supervisor: tests and tools that want a card in a tree of their own use it. The card
host runs the same shell on the trio loop instead (``LoopCard``), so an open turn costs no
thread. It never does I/O itself beyond one blocking read at start.

Crash and restart: on the way out (stop or crash) it submits the view's snapshot; the next
incarnation's first act is ``RestoreTurn``, a read queued behind that save, so it continues
from the exact view its predecessor had, with the ledger's card message id, the approval tokens
still live in the store, and the ledger's word on whether the answer is already out (then it
sends nothing and only reports). Only the message whose handling crashed is lost, as for every
actor; events still queued reach the successor through the stable address. The first
incarnation of a ``fresh`` turn skips the read: nothing of it can be stored yet.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pykka

from ..kernel import Actor, Address, ExitReason, Timers
from ..store import StoreClient
from ._core import CardPolicy, Restored, TurnCard, new_token
from ._delivery import CardDelivery
from ._messages import CardOutcome, CardTurn
from ._platforms import CardPlatform
from ._reads import RestoreTurn
from ._shell import CardShell, CardWiring

__all__ = ["CardActor"]


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
        self._store = store
        self._address = address
        self._restore_timeout = restore_timeout
        wiring = CardWiring(store, timers, policy, clock, wall, token)
        self._shell = CardShell(
            turn, platform, wiring, delivery, notify, self._reply_to, self.actor_ref.tell
        )

    def __repr__(self) -> str:
        return f"<CardActor turn={self.turn.turn_id!r}>"

    @property
    def card(self) -> TurnCard | None:
        """The state machine (for tests and diagnostics; read it from the actor's thread)."""
        return self._shell.card

    # -- the actor's hooks ---------------------------------------------------------------------

    def started(self) -> None:
        if self._fresh:
            restored = Restored()
        else:
            restored = self._store.write_sync(
                RestoreTurn(self.turn.turn_id), timeout=self._restore_timeout
            )
        self._shell.start(restored)

    def receive(self, message: Any) -> Any:
        if not self._shell.receive(message):
            return super().receive(message)
        return None

    def terminated(self, reason: ExitReason) -> None:
        del reason
        self._shell.exit()

    def _reply_to(self, outcome: CardOutcome) -> None:
        if self._address is not None:
            self._address.tell(outcome)
            return
        try:
            self.actor_ref.tell(outcome)
        except pykka.ActorDeadError:
            pass  # this incarnation is gone; its successor learns the state from the ledger
