"""What a transport implements so cards reach its platform: the ``CardSink`` protocol.

A sink does I/O and nothing else: no throttling, no retries, no ledger. It runs on the trio loop
(inside ``CardDelivery``), one call per turn at a time, and reports failure by raising one of
two typed errors, because the card renderer's policy depends on which it is:

* ``TransientSendError``: worth retrying (rate limits, 5xx, timeouts, a dropped connection);
  ``retry_after`` is the platform's own hint in seconds, if it gave one.
* ``PermanentSendError``: sending the same thing again fails the same way (bad payload, the
  bot left the chat, the message was deleted).

Any other exception is a bug in the sink; it is logged and treated as permanent.

``sent`` on either error lists the message ids of the chunks a ``send_final`` did send before it
failed, so the retry sends only the rest.

A sink whose platform drops no repeated send (it keeps no deduplication key: Slack) is also a
``FinalLookup``: asked which chunks of a final answer it already has before a send that may
repeat one goes out (after a crash between the platform keeping an answer and the ledger's
record of it, or a send whose answer never came); and a ``CardLookup``: asked, in the same
doubt, whether it has the turn's progress card, which is then adopted (edited, never posted
again). Both are given ``since``, the time (this host's clock, epoch seconds) the send was
first claimed: nothing of an earlier try is older, so a long thread is not read from its start
(the sink allows for its platform's clock).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

from .._errors import RobotaError

__all__ = [
    "CardLookup",
    "CardSink",
    "FinalLookup",
    "PermanentSendError",
    "SendError",
    "TransientSendError",
]


class SendError(RobotaError):
    """A sink call failed. Use one of the two subclasses."""

    def __init__(self, message: str, *, sent: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.sent = tuple(sent)


class TransientSendError(SendError):
    def __init__(
        self, message: str, *, retry_after: float | None = None, sent: Sequence[str] = ()
    ) -> None:
        super().__init__(message, sent=sent)
        self.retry_after = retry_after


class PermanentSendError(SendError):
    pass


@runtime_checkable
class CardSink(Protocol):
    """A platform's messages, as the card renderer needs them. Every method runs on the trio
    loop and may take as long as the network does (the caller bounds it with a timeout)."""

    async def send_card(self, route: str, payload: Any, *, key: str) -> str:
        """Post a new progress card on ``route``; return its message id.

        ``key`` is stable for the turn's card across retries and restarts: a platform that
        deduplicates sends (Feishu's ``uuid``) should pass it on, so a retried send after a
        timeout cannot make a second card."""
        ...

    async def update_card(self, message_id: str, payload: Any) -> None:
        """Replace the content of the card ``message_id`` with ``payload``."""
        ...

    async def send_final(
        self, route: str, chunks: Sequence[Any], *, keys: Sequence[str]
    ) -> list[str]:
        """Post ``chunks`` in order as messages of their own; return their ids, in order.

        ``keys[i]`` is the stable deduplication key of ``chunks[i]``. On failure after some
        chunks went out, raise with ``sent`` = their ids."""
        ...


@runtime_checkable
class FinalLookup(Protocol):
    """A sink that can say which final chunks its platform has (see the module docstring)."""

    async def sent_finals(
        self, route: str, keys: Sequence[str], *, since: float | None = None
    ) -> Mapping[str, str]:
        """The chunks among ``keys`` (``send_final``'s keys of one turn, in order) the platform
        has: key -> message id; none is older than ``since``. Raises as a send does when it
        cannot tell."""
        ...


@runtime_checkable
class CardLookup(Protocol):
    """A sink that can say whether its platform has a progress card (see the module
    docstring)."""

    async def sent_card(self, route: str, key: str, *, since: float | None = None) -> str | None:
        """The message id of the card ``send_card`` posted under ``key`` (``None``: the
        platform has none); it is not older than ``since``. Raises as a send does when it
        cannot tell."""
        ...
