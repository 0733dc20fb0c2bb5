"""The card renderer on the trio loop: the card host's actor of one turn, without a thread.

``LoopCard`` runs the same ``CardShell`` as ``CardActor`` (what a card does with its
``TurnCard``'s effects, none of them I/O), as a ``LoopActor``: its messages are handled on the
loop the delivery service and the timers already run on, so an open turn costs no thread, no
thread's heap and no supervisor task (issue 28 s.3: a burst of 100 chats ran 100 card threads
and 100 one-child supervisors at once, and their heaps stayed behind).

Its start is the thread actor's without the blocking read: a turn opened again (not ``fresh``)
holds its inbox, submits ``RestoreTurn`` (a read queued behind its predecessor's snapshot save)
and starts from what it returns, then handles what waited, in order; a read that fails or takes
longer than ``restore_timeout`` is a crash, as it is for ``CardActor``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .._errors import RequestTimeout
from ..kernel import Address, ExitReason, LoopActor, TimerHandle
from ._core import Restored
from ._delivery import CardDelivery
from ._messages import CardTurn
from ._platforms import CardPlatform
from ._reads import RestoreTurn
from ._shell import CardShell, CardWiring

__all__ = ["LoopCard"]


class LoopCard(LoopActor):
    """Draws one turn on one platform, on the loop; told what ``CardActor`` is told.
    ``address`` is its stable address (delivery outcomes go there, so those of requests in
    flight when it crashed reach its successor); ``wiring`` is what the host's cards share."""

    def __init__(  # noqa: PLR0917 (one caller, the host, naming them all)
        self,
        turn: CardTurn,
        platform: CardPlatform,
        wiring: CardWiring,
        delivery: CardDelivery,
        address: Address,
        notify: Callable[[Any], object] | None = None,
        *,
        restore_timeout: float = 10.0,
        fresh: bool = False,
    ) -> None:
        super().__init__()
        self._restoring: TimerHandle | None = None
        self._restore_timeout = restore_timeout
        self._store, self._timers = wiring.store, wiring.timers
        self._fresh = fresh
        self.turn = turn
        self._shell: CardShell | None = CardShell(
            turn, platform, wiring, delivery, notify, address.tell, self.tell
        )

    def __repr__(self) -> str:
        return f"<LoopCard turn={self.turn.turn_id!r}>"

    def started(self) -> None:
        shell = self._shell
        assert shell is not None
        if self._fresh:
            shell.start(Restored())
            return
        self.hold()
        self._store.submit(RestoreTurn(self.turn.turn_id), self._read)
        self._restoring = self._timers.schedule(self._restore_timeout, self._timed_out)

    def receive(self, message: Any) -> None:
        shell = self._shell
        if shell is None or not shell.receive(message):
            super().receive(message)

    def terminated(self, reason: ExitReason) -> None:
        del reason
        if self._restoring is not None:
            self._timers.cancel(self._restoring)
            self._restoring = None
        shell, self._shell = self._shell, None  # the shell's callbacks name this actor
        if shell is not None:
            shell.exit()

    # -- the restore read ----------------------------------------------------------------------

    def _read(self, outcome: object) -> None:
        """The writer's thread: the read committed (or failed)."""
        self.soon(self._restored, outcome)

    def _restored(self, outcome: object) -> None:
        if self._restoring is None:
            return  # timed out already
        self._timers.cancel(self._restoring)
        self._restoring = None
        if isinstance(outcome, Exception):
            raise outcome  # a crash, as the thread actor's blocking read would be
        assert isinstance(outcome, Restored) and self._shell is not None
        self._shell.start(outcome)
        self.resume()

    def _timed_out(self, _: object) -> None:
        if self._restoring is None or self.ended:
            return
        self._restoring = None
        self.crash(RequestTimeout(f"RestoreTurn: no ack within {self._restore_timeout:g} s"))
