"""Stable addresses: the handle callers hold instead of a raw pykka ``ActorRef``.

An actor incarnation comes and goes (crash, restart, passivation); its ``Address`` stays. While no
incarnation is attached, messages wait in a bounded stash and reach the next incarnation in the
order they were sent. Tells still queued in a dead incarnation's inbox are rescued to the front of
the stash, because pykka would otherwise drop them. What does not fit, or arrives after the address
is closed for good, goes to the dead-letter log with its type.

Every state change happens under one lock, and so does every hand-off to an incarnation's inbox:
that is what keeps "rescued, then stashed, then new" in order across threads.
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from collections.abc import Callable, Iterable
from typing import Any, Protocol

import pykka

__all__ = ["Address", "DeadLetters", "Incarnation", "Mailbox"]

logger = logging.getLogger("robota.core.kernel")


class Incarnation(Protocol):
    """What an ``Address`` hands messages to: a pykka ``ActorRef`` (an actor on its thread) or
    a ``LoopActor``'s ref (an actor on the trio loop). ``tell`` raises
    ``pykka.ActorDeadError`` once that incarnation is gone."""

    def tell(self, message: Any) -> None: ...


class Mailbox(Protocol):
    """What callers tell messages to: an ``Address`` (an actor on its thread) or a
    ``LoopMailbox`` (state kept on the trio loop). ``tell`` never blocks and never raises."""

    def tell(self, message: object) -> None: ...


class DeadLetters:
    """Where undeliverable messages go: a log line naming the address and the message type.

    Only the type is logged, never the message, because messages carry user text and secrets.
    ``count`` and ``recent`` exist so tests and ``robota doctor`` can see that letters died.
    """

    def __init__(self, keep: int = 100) -> None:
        self._lock = threading.Lock()
        self.count = 0
        self.recent: deque[tuple[str, str, str]] = deque(maxlen=keep)

    def post(self, address: str, message: object, why: str) -> None:
        kind = type(message).__qualname__
        with self._lock:
            self.count += 1
            self.recent.append((address, kind, why))
        logger.warning(
            "dead letter", extra={"address": address, "message_type": kind, "reason": why}
        )


class Address:
    """The stable handle of one supervised child or route.

    ``tell`` never blocks and never raises: a live incarnation gets the message in its inbox, a
    missing one gets it stashed, a closed address sends it to dead letters.
    """

    __slots__ = ("_closed", "_dead_letters", "_lock", "_ref", "_stash", "name", "stash_limit")

    def __init__(
        self, name: str, *, stash_limit: int = 1000, dead_letters: DeadLetters | None = None
    ) -> None:
        if stash_limit < 0:
            raise ValueError(f"stash_limit must be >= 0, got {stash_limit}")
        self.name = name
        self.stash_limit = stash_limit
        self._dead_letters = dead_letters if dead_letters is not None else DeadLetters()
        self._lock = threading.Lock()
        self._ref: Incarnation | None = None
        self._stash: deque[object] = deque()
        self._closed = False

    def __repr__(self) -> str:
        state = "closed" if self._closed else ("up" if self._ref is not None else "down")
        return f"<Address {self.name!r} {state} stash={len(self._stash)}>"

    # -- the caller's side -------------------------------------------------------------------

    def tell(self, message: object) -> None:
        """Deliver ``message`` to the current incarnation, or keep it for the next one."""
        with self._lock:
            if self._closed:
                self._dead_letters.post(self.name, message, "address closed")
                return
            if self._ref is not None:
                try:
                    self._ref.tell(message)
                except pykka.ActorDeadError:
                    # The incarnation died between its last exit report and now; keep the
                    # message for the next one instead of losing it.
                    self._ref = None
                else:
                    return
            self._stash_locked(message)

    @property
    def is_up(self) -> bool:
        """Whether an incarnation is attached right now."""
        return self._ref is not None

    @property
    def is_closed(self) -> bool:
        return self._closed

    @property
    def stashed(self) -> int:
        """How many messages wait for the next incarnation."""
        return len(self._stash)

    # -- the kernel's side -------------------------------------------------------------------

    def _attach(self, ref: Incarnation) -> None:
        """Make ``ref`` the current incarnation, handing it the stash first, in order."""
        with self._lock:
            if self._closed:
                return
            while self._stash:
                ref.tell(self._stash.popleft())
            self._ref = ref

    def _suspend(self) -> None:
        """Stop handing messages to the current incarnation; they wait in the stash.

        Used before a requested stop: what is already in the inbox is processed before the stop
        message, what arrives later waits for the next incarnation.
        """
        with self._lock:
            self._ref = None

    def _detach(self, ref: Incarnation, drain_inbox: Callable[[], Iterable[object]]) -> None:
        """Incarnation ``ref`` ended: rescue what is still in its inbox to the front of the stash.

        ``drain_inbox`` runs under the lock, after the address stopped delivering to it, so no
        message can slip into the dead inbox after the rescue.
        """
        with self._lock:
            if self._ref is not None and self._ref is not ref:
                # An abandoned incarnation finished late; a newer one already serves this
                # address. Its leftovers are older than anything the newer one has seen, but
                # losing them would be worse than delivering them late.
                for message in drain_inbox():
                    self._ref.tell(message)
                return
            self._ref = None
            rescued = list(drain_inbox())
            if self._closed:
                for message in rescued:
                    self._dead_letters.post(self.name, message, "address closed")
                return
            room = max(self.stash_limit - len(rescued), 0)
            while len(self._stash) > room:
                # The rescued messages are older than the stashed ones, so the newest give way.
                self._dead_letters.post(self.name, self._stash.pop(), "stash full")
            for message in rescued[self.stash_limit :]:
                self._dead_letters.post(self.name, message, "stash full")
            self._stash.extendleft(reversed(rescued[: self.stash_limit]))

    def _close(self) -> None:
        """No incarnation will come again: the stash and later messages are dead letters."""
        with self._lock:
            self._closed = True
            self._ref = None
            while self._stash:
                self._dead_letters.post(self.name, self._stash.popleft(), "address closed")

    def _reopen(self) -> None:
        with self._lock:
            self._closed = False

    def _stash_locked(self, message: object) -> None:
        if len(self._stash) >= self.stash_limit:
            self._dead_letters.post(self.name, message, "stash full")
        else:
            self._stash.append(message)
