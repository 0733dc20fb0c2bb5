"""Pending confirmations of ``admin-confirm`` intents: ask, then the sender's next word decides.

When an admin invokes an ``admin-confirm`` intent, the bot asks in the request's thread for
``Y`` / ``yes`` / ``confirm`` / ``确认`` within ``CONFIRM_SECONDS`` (15 minutes). The same sender's
next message in that thread resolves it: a confirmation word runs the intent, anything else
cancels it (and is consumed: "no, wait" must not become a prompt of the intent it refused).
Other senders' messages in the thread are not answers. A pending confirmation that outlives its
window is cancelled and the thread is told so, by ``sweep`` or by the late answer itself (which
then goes on as an ordinary message: the sender may have moved on).

Pure and persistable: the state is the tuple of ``Pending`` records, times come from the caller
(seconds, any epoch), so a restarted host restores the same decisions.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

__all__ = [
    "CONFIRM_SECONDS",
    "CONFIRM_WORDS",
    "Cancelled",
    "Confirmations",
    "Confirmed",
    "Expired",
    "Pending",
    "is_confirmation",
]

CONFIRM_SECONDS = 15 * 60
CONFIRM_WORDS = frozenset({"y", "yes", "confirm", "确认"})
_TRAILING = re.compile("[\\s.!\u3002\uff01]+$")  # and the ideographic/fullwidth ones


@dataclass(frozen=True, slots=True)
class Pending:
    thread: str
    sender: str
    intent: str
    args: str
    """What the intent runs with once confirmed (kept in the store like any prompt)."""
    asked_at: float

    def expired(self, now: float, window: float = CONFIRM_SECONDS) -> bool:
        return now - self.asked_at >= window


@dataclass(frozen=True, slots=True)
class Confirmed:
    pending: Pending


@dataclass(frozen=True, slots=True)
class Cancelled:
    pending: Pending


@dataclass(frozen=True, slots=True)
class Expired:
    """Cancelled by time; the thread is told, and a late answer goes on as a message."""

    pending: Pending


def is_confirmation(text: str) -> bool:
    return _TRAILING.sub("", text.strip()).casefold() in CONFIRM_WORDS


class Confirmations:
    """The pending confirmations of one team, keyed by (thread, sender)."""

    def __init__(self, pending: Iterable[Pending] = (), window: float = CONFIRM_SECONDS) -> None:
        self._window = window
        self._pending = {(p.thread, p.sender): p for p in pending}

    @property
    def pending(self) -> tuple[Pending, ...]:
        return tuple(self._pending.values())

    def ask(self, pending: Pending) -> Cancelled | None:
        """Record ``pending``; one it replaces (same thread and sender) is cancelled."""
        replaced = self._pending.pop((pending.thread, pending.sender), None)
        self._pending[pending.thread, pending.sender] = pending
        return Cancelled(replaced) if replaced is not None else None

    def answer(
        self, thread: str, sender: str, text: str, now: float
    ) -> Confirmed | Cancelled | Expired | None:
        """What ``sender``'s message in ``thread`` does; ``None``: it answers nothing."""
        pending = self._pending.pop((thread, sender), None)
        if pending is None:
            return None
        if pending.expired(now, self._window):
            return Expired(pending)
        return Confirmed(pending) if is_confirmation(text) else Cancelled(pending)

    def sweep(self, now: float) -> list[Expired]:
        """Cancel every confirmation whose window has passed, oldest first."""
        expired = sorted(
            (p for p in self._pending.values() if p.expired(now, self._window)),
            key=lambda p: p.asked_at,
        )
        for pending in expired:
            del self._pending[pending.thread, pending.sender]
        return [Expired(p) for p in expired]
