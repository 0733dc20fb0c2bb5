"""A chat transport's inbox, the shell's side: a message accepted before it is acknowledged,
and fed again or settled after a crash (the table is ``robota.core.store._inbox``).

A transport's way in, with the inbox:

1. the platform's handler screens the message (filters, no write), then ``accept``: the
   event's claim, the message's claim and the inbox row in one write, awaited before the
   handler returns, so the platform's acknowledgement follows a durable accept and a crash
   before it leaves the event to be redelivered;
2. the route's lane gets an ``Accepted`` (the transport's item, the inbox row's id; handed over
   in the platform's order before the write, the lane waits for the write): the stale
   guard (``fresh``: a stale message is recorded and its row consumed), the reaction, then the
   route told ``UserInput(inbox=...)``; the engine consumes the row in the write that gives the
   message its effect. What the transport answers itself (its commands, a refused attachment,
   a team's door) is ``consume``d by the transport;
3. on start, before the platform's events are read, the rows no route took in are fed to their
   lanes again, in order (``Accepted.again``: the stale guard was passed once, the reaction may
   be there), and the messages whose turn ended but whose reactions the last run did not
   settle are settled (``InboxLeft``, read before any card of this run can end);
4. every settled reaction marks its row (``settled``), so a start settles nothing twice.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import trio

from ..store import (
    AcceptInbound,
    AppendAuditEvent,
    ConsumeInbox,
    InboxOutcome,
    InboxRow,
    PruneInbox,
    SettleInbox,
    StoreClient,
    Together,
    open_reader,
    unconsumed_inbox,
    unsettled_inbox,
)
from ._inbound import Dated, freshness

__all__ = ["Accepted", "ChatInbox", "InboxLeft"]

STORE_TIMEOUT = 10.0
KEEP_FOR = 7 * 86400.0
"""Seconds a consumed message stays in the inbox (``PruneInbox``, on each start)."""


@dataclass(slots=True, eq=False)
class Accepted:
    """A lane's item: the transport's own (``item``) for a message kept in the inbox row
    ``inbox``; ``again``: fed again from the inbox on start. Handed to the lane in the order
    the platform delivered the messages, while its accept is still being written: the lane
    waits for ``written`` (``inbox`` stays ``None`` for a message claimed before)."""

    item: Any
    inbox: int | None = None
    again: bool = False
    written: trio.Event = field(default_factory=trio.Event)

    @classmethod
    def fed_again(cls, item: Any, inbox: int) -> Accepted:
        accepted = cls(item, inbox, again=True)
        accepted.written.set()
        return accepted


@dataclass(frozen=True, slots=True)
class InboxLeft:
    """What the last run left in the inbox: messages no route took in (in order), and
    messages whose turn ended with their reactions unsettled (with the outcome)."""

    untaken: tuple[InboxRow, ...] = ()
    unsettled: tuple[tuple[InboxRow, InboxOutcome], ...] = field(default=())


class ChatInbox:
    """One transport's inbox (``source``: its name; ``card_suffix``: its card turn ids')."""

    def __init__(
        self,
        store: StoreClient,
        db_path: Path,
        *,
        source: str,
        card_suffix: str,
        log: logging.Logger,
    ) -> None:
        self._store = store
        self._db_path = db_path
        self.source = source
        self._card_suffix = card_suffix
        self._log = log

    def accept_op(
        self,
        event_key: str,
        message_key: str,
        route_key: str,
        message_id: str,
        payload: str,
        *,
        message_kind: str = "message",
    ) -> AcceptInbound:
        return AcceptInbound(
            event_key,
            message_key,
            self.source,
            route_key,
            message_id,
            payload,
            message_kind=message_kind,
        )

    async def accept(self, op: AcceptInbound, extra: Mapping[str, object]) -> int | None:
        """The claims and the row written (awaited: the platform is acknowledged after it);
        the row's id, or ``None`` for a message claimed before (logged). A failed write
        raises: the handler fails and the platform delivers the event again."""
        inbox = await self._store.write(op, timeout=STORE_TIMEOUT)
        if inbox is None:
            self._log.info("%s message already claimed", self.source, extra=dict(extra))
        return inbox

    async def fresh(
        self,
        accepted: Accepted,
        message: Dated,
        stale: AppendAuditEvent,
        *,
        started_at: float,
        extra: Mapping[str, object],
    ) -> bool:
        """The stale guard (``freshness``); a stale message is recorded in the audit trail and
        its row consumed, in one write. A message fed again passed it already."""
        if accepted.again or accepted.inbox is None:
            return True
        if freshness(message, now=time.time(), started_at=started_at) == "run":
            return True
        await self._store.write(
            Together((stale, ConsumeInbox(accepted.inbox))), timeout=STORE_TIMEOUT
        )
        self._log.info("%s: a stale message was recorded, not run", self.source, extra=dict(extra))
        return False

    def consume(self, inbox: int, *, door: bool = False) -> None:
        """The transport took the message in itself (its command, a refusal); ``door``: a
        team's door did (its request's turn, once it has one, settles it)."""
        self._store.submit(ConsumeInbox(inbox, via="door" if door else "route"), self._logged)

    def settled(self, message_key: str) -> None:
        """The message's reactions say how it ended."""
        self._store.submit(SettleInbox(message_key), self._logged)

    def left(self) -> InboxLeft:
        """What the last run left (a blocking read: call it off the loop); the rows consumed
        long ago are forgotten."""
        self._store.submit(PruneInbox(self.source, time.time() - KEEP_FOR), self._logged)
        db = open_reader(self._db_path)
        try:
            untaken = unconsumed_inbox(db, self.source)
            unsettled = unsettled_inbox(db, self.source, self._card_suffix)
        finally:
            db.close()
        return InboxLeft(tuple(untaken), tuple(unsettled))

    def _logged(self, value: object, /) -> None:
        if isinstance(value, BaseException):
            self._log.error(
                "%s: an inbox write failed: %s: %s", self.source, type(value).__name__, value
            )
