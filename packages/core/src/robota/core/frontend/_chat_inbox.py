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

   the write's outcome reaches the lane item whoever still waits for it (the writer's ack,
   posted to the loop): a handler that gives up on it (``accept_timeout`` passed, or the
   platform's own deadline cancelled it: Slack's 2 s) takes the write back when the writer
   has not taken it yet (it never happens, the lane drops the item, the platform delivers the
   event again and that delivery is accepted), else leaves it to the lane, which admits the
   message in its place once the write commits late (the platform, told an error, delivers
   again, and that delivery finds the claims taken and is dropped) and drops it if the write
   fails (the redelivery is accepted then). Either way the store decides, and a message is
   admitted once: a late commit is not left for the next start;
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

from .._errors import RequestTimeout
from ..kernel import LoopPort
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
    Write,
    open_reader,
    unconsumed_inbox,
    unsettled_inbox,
)
from ._chat_retire import seconds_from_env
from ._inbound import Dated, freshness

__all__ = ["ACCEPT_ENV", "Accepted", "ChatInbox", "InboxLeft", "accept_timeout"]

STORE_TIMEOUT = 10.0
ACCEPT_ENV = "ROBOTA_TEST_ACCEPT_TIMEOUT"
"""Seconds the handler waits for a message's accept, when a positive number (end-to-end tests
only, as ``ROBOTA_TEST_RETIRE_AFTER``): a test's write outlasts it while the write lock it holds
is still short of the writer's busy timeout (5 s), so the write commits late."""
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
    failed: BaseException | None = None
    """The accept's write failed (nothing of it kept): the lane drops the item."""

    @classmethod
    def fed_again(cls, item: Any, inbox: int) -> Accepted:
        accepted = cls(item, inbox, again=True)
        accepted.written.set()
        return accepted

    @classmethod
    def served(cls, item: Any, inbox: int, *, again: bool) -> Accepted:
        """A message kept in the inbox row ``inbox`` while its chat waited to be served
        (``_chat_gate``), written; ``again``: fed again after a restart."""
        accepted = cls(item, inbox, again=again)
        accepted.written.set()
        return accepted

    def landed(self, outcome: object, /) -> None:
        """The accept's outcome (on the loop): the row's id, ``None`` (claimed before, or
        never written) or the write's error. The first one counts."""
        if self.written.is_set():
            return
        if isinstance(outcome, BaseException):
            self.failed = outcome
        elif isinstance(outcome, int):
            self.inbox = outcome
        self.written.set()


def accept_timeout(default: float = STORE_TIMEOUT) -> float:
    """Seconds a handler waits for a message's accept: ``default``, unless ``ACCEPT_ENV``
    names a positive number of seconds."""
    shorter = seconds_from_env(ACCEPT_ENV)
    return default if shorter is None else shorter


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
        self._accept_timeout = accept_timeout()  # read once: not on every message's way in

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

    async def accept(
        self, accepted: Accepted, op: AcceptInbound, extra: Mapping[str, object]
    ) -> None:
        """The claims and the row written (``op``), awaited: the platform is acknowledged
        after it. ``accepted`` (in its lane already) gets the outcome however long the write
        takes (``Accepted.landed``, see the module docstring). A failed write raises, and so
        does one not back within ``accept_timeout``: the handler fails and the platform
        delivers the event again (a message claimed before is logged, not raised)."""
        port = LoopPort()
        late = False

        def landed(outcome: object) -> None:  # on the loop
            accepted.landed(outcome)
            if late:
                self._log.warning(
                    "%s: a late accept %s",
                    self.source,
                    _late_outcome(outcome),
                    extra=dict(extra),
                )

        def ack(outcome: object, /) -> None:  # the writer's thread, after its commit
            port.post(landed, outcome)

        write = self._store.submit(op, ack)
        timeout = self._accept_timeout
        try:
            with trio.fail_after(timeout):
                await accepted.written.wait()
        except trio.TooSlowError:
            if not accepted.written.is_set():  # else it landed as the deadline passed
                late = self._give_up(accepted, write, extra)
                left = "its lane admits it if the write commits" if late else "taken back"
                raise RequestTimeout(
                    f"{op.event_key}: no ack within {timeout:g} s; {left}"
                ) from None
        except BaseException:  # cancelled: the platform's deadline for the handler passed
            if not accepted.written.is_set():
                late = self._give_up(accepted, write, extra)
            raise
        if accepted.failed is not None:
            raise accepted.failed
        if accepted.inbox is None:
            self._log.info("%s message already claimed", self.source, extra=dict(extra))

    def _give_up(
        self, accepted: Accepted, write: Write[int | None], extra: Mapping[str, object]
    ) -> bool:
        """The handler stops waiting for ``accepted``'s write: taken back if the writer has
        not taken it (never written: its lane drops it, ``False``), else left to its lane,
        which waits for what becomes of it (``True``: late)."""
        if self._store.withdraw(write):
            accepted.landed(None)
            self._log.warning(
                "%s: a message's accept was not written in time: taken back",
                self.source,
                extra=dict(extra),
            )
            return False
        self._log.warning(
            "%s: a message's accept is late: its lane waits for the write",
            self.source,
            extra=dict(extra),
        )
        return True

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


def _late_outcome(outcome: object) -> str:
    """What became of a write the handler gave up on, for the log."""
    if isinstance(outcome, BaseException):
        failed = f"{type(outcome).__name__}: {outcome}"
        return f"failed ({failed}): the platform's redelivery is accepted"
    if outcome is None:
        return "found the message claimed: dropped"
    return "was written: its lane admits the message"
