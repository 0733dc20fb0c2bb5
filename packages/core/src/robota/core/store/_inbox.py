"""A chat transport's inbox: each accepted message kept until its route took it in.

A person's message on a chat platform is the transport's to answer from the moment its claim
is durable (``ClaimInboundEvent``, invariant 11): a redelivery is dropped from then on. So the
claim and the message itself are one write (``AcceptInbound``: the event's and the message's
claims, and a ``chat_inbox`` row with the route and the platform's event as it came), made
before the platform's event is acknowledged. The row is consumed in the very write that gives
the message its effect in the engine (``ConsumeInbox``, riding the turn's attempt, the queued
prompt's ``EnqueuePrompt`` or a command's own write), so a crash anywhere in between leaves the
row unconsumed and the next start feeds it to its route again, in order (``unconsumed_inbox``).

A consumed row names the turn that answers it (``attempt_id``: the attempt the prompt became,
the turn a steer went into, the turn a queued prompt became when ``TakeQueuedTurn`` took it;
a turn taking over another, retried or continued after a restart, takes its rows along:
``InsertTurnAttempt.takes_over``, or ``RelinkInbox``), or the queued prompt it waits as
(``prompt_id``, written by ``EnqueuePrompt``). Once the transport settled the message's
reactions it marks it (``SettleInbox``); a start settles what a crash left between a turn's
end and that mark (``unsettled_inbox``: the turn ended and its card's answer is in the ledger,
or the prompt was cancelled, or the message needed no turn). The two steps other writes take
on a row (``consume_inbox``, ``relink_inbox``) are functions of the writer's connection, so
``InsertTurnAttempt`` (``_turn_attempts``) takes them inside its own write.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, cast

from ._database import Database
from ._ops import ClaimInboundEvent
from ._records import stamp

__all__ = [
    "AcceptInbound",
    "ConsumeInbox",
    "InboxOutcome",
    "InboxRow",
    "PruneInbox",
    "RelinkInbox",
    "SettleInbox",
    "settled_outcome",
    "unconsumed_inbox",
    "unsettled_inbox",
]

InboxOutcome = Literal["completed", "failed", "interrupted"]


@dataclass(frozen=True, slots=True)
class InboxRow:
    """A message the transport accepted, and what became of it."""

    id: int
    message_key: str
    """The message's claim key (``feishu-message:om_1``, ``slack-message:C1:1.5``)."""
    source: str
    """The transport's name."""
    route_key: str
    message_id: str
    """The platform's id of the message, as the transport reacts to it."""
    payload: str
    """The platform's event as it came (JSON text): what the transport parses again."""
    created_at: float
    attempt_id: str | None = None
    prompt_id: int | None = None

    @classmethod
    def from_row(cls, row: dict[str, object]) -> InboxRow:
        prompt = row.get("prompt_id")
        attempt = row.get("attempt_id")
        return cls(
            id=int(cast(int, row["id"])),
            message_key=str(row["message_key"]),
            source=str(row["source"]),
            route_key=str(row["route_key"]),
            message_id=str(row["message_id"]),
            payload=str(row["payload_json"]),
            created_at=float(cast(float, row["created_at"])),
            attempt_id=None if attempt is None else str(attempt),
            prompt_id=None if prompt is None else int(cast(int, prompt)),
        )


@dataclass(frozen=True, slots=True)
class AcceptInbound:
    """Claim a message's event and the message, and keep the message in the inbox, in one
    savepoint. Returns the inbox row's id the first time; ``None`` when either claim was
    already taken (a redelivery, or the second event about one message), and keeps nothing."""

    event_key: str
    message_key: str
    source: str
    route_key: str
    message_id: str
    payload: str
    message_kind: str = "message"
    at: float | None = None

    def apply(self, db: Database, /) -> int | None:
        event = ClaimInboundEvent(self.event_key, "message", self.at).apply(db)
        message = ClaimInboundEvent(self.message_key, self.message_kind, self.at).apply(db)
        if not (event and message):
            return None
        cursor = db.execute(
            "INSERT INTO chat_inbox (message_key, source, route_key, message_id, payload_json, "
            "created_at) VALUES (?, ?, ?, ?, ?, ?)",
            (
                self.message_key,
                self.source,
                self.route_key,
                self.message_id,
                self.payload,
                stamp(self.at),
            ),
        )
        return cursor.lastrowid


def consume_inbox(
    db: Database, inbox: int, attempt_id: str | None, at: float, *, via: str = "route"
) -> bool:
    """The inbox row ``inbox`` taken in (by ``attempt_id``'s turn; ``via`` its route or a
    team's door); ``False``: it was already."""
    cursor = db.execute(
        "UPDATE chat_inbox SET consumed_at = ?, attempt_id = ?, via = ? "
        "WHERE id = ? AND consumed_at IS NULL",
        (at, attempt_id, via, inbox),
    )
    return cursor.rowcount == 1


def relink_inbox(db: Database, from_attempt: str, to_attempt: str) -> int:
    """The messages ``from_attempt`` answered are ``to_attempt``'s; how many."""
    cursor = db.execute(
        "UPDATE chat_inbox SET attempt_id = ? WHERE attempt_id = ?", (to_attempt, from_attempt)
    )
    return cursor.rowcount


@dataclass(frozen=True, slots=True)
class ConsumeInbox:
    """The inbox row ``inbox_id`` was taken in (by ``attempt_id``'s turn, when it became or
    steered one); ``via``: by its ``route``, or by a team's ``door`` (its request's turn, if
    it gets one, answers it: ``AnchorTurnAttempt`` names it). ``False`` when it was consumed
    already (or is no row)."""

    inbox_id: int
    attempt_id: str | None = None
    via: Literal["route", "door"] = "route"
    at: float | None = None

    def apply(self, db: Database, /) -> bool:
        return consume_inbox(db, self.inbox_id, self.attempt_id, stamp(self.at), via=self.via)


@dataclass(frozen=True, slots=True)
class RelinkInbox:
    """The turn ``to_attempt`` takes over ``from_attempt`` (a retry, a turn continued after a
    restart): the messages the first answered are the second's. Returns how many."""

    from_attempt: str
    to_attempt: str

    def apply(self, db: Database, /) -> int:
        return relink_inbox(db, self.from_attempt, self.to_attempt)


@dataclass(frozen=True, slots=True)
class SettleInbox:
    """The message ``message_key``'s reactions say how it ended; ``False`` for no such row
    (a message from before the inbox, or never accepted) or one settled already."""

    message_key: str
    at: float | None = None

    def apply(self, db: Database, /) -> bool:
        cursor = db.execute(
            "UPDATE chat_inbox SET settled_at = ? WHERE message_key = ? AND settled_at IS NULL",
            (stamp(self.at), self.message_key),
        )
        return cursor.rowcount == 1


@dataclass(frozen=True, slots=True)
class PruneInbox:
    """Forget the rows of ``source`` consumed before ``before`` (epoch seconds): what they
    asked for is long over, or never will be. Returns how many went."""

    source: str
    before: float

    def apply(self, db: Database, /) -> int:
        cursor = db.execute(
            "DELETE FROM chat_inbox WHERE source = ? AND consumed_at < ?",
            (self.source, self.before),
        )
        return cursor.rowcount


def unconsumed_inbox(db: Database, source: str) -> list[InboxRow]:
    """The messages ``source`` accepted that no route took in, in the order they came."""
    rows = db.query(
        "SELECT * FROM chat_inbox WHERE source = ? AND consumed_at IS NULL ORDER BY id",
        (source,),
    )
    return [InboxRow.from_row(row) for row in rows]


_OUTCOMES: dict[str, InboxOutcome] = {
    "completed": "completed",
    "interrupted": "interrupted",
    "failed": "failed",
}


def unsettled_inbox(
    db: Database, source: str, card_suffix: str
) -> list[tuple[InboxRow, InboxOutcome]]:
    """The consumed messages of ``source`` whose reactions were never settled although what
    they asked for is over, each with its outcome, oldest first: a turn that ended with its
    card's answer in the ledger (``card_suffix``: the transport's card turn id suffix), a
    queued prompt that was cancelled (``interrupted``), a message that needed no turn (a
    command: ``completed``). A turn still running, or whose answer is not sent yet, is left to
    the card that ends it."""
    rows = db.query(
        "SELECT i.*, a.status AS turn_status, q.status AS prompt_status, "
        "d.final_delivered_at AS delivered "
        "FROM chat_inbox i "
        "LEFT JOIN turn_attempts a ON a.id = i.attempt_id "
        "LEFT JOIN queued_prompts q ON q.id = i.prompt_id "
        "LEFT JOIN final_deliveries d ON d.turn_id = i.attempt_id || ? "
        "WHERE i.source = ? AND i.consumed_at IS NOT NULL AND i.settled_at IS NULL "
        "ORDER BY i.id",
        (card_suffix, source),
    )
    out: list[tuple[InboxRow, InboxOutcome]] = []
    for row in rows:
        turn, prompt = row.pop("turn_status"), row.pop("prompt_status")
        delivered = row.pop("delivered")
        outcome = settled_outcome(
            None if turn is None else str(turn),
            None if prompt is None else str(prompt),
            delivered=delivered is not None,
            has_turn=row.get("attempt_id") is not None,
            has_prompt=row.get("prompt_id") is not None,
            by_door=row.pop("via") == "door",
        )
        if outcome is not None:
            out.append((InboxRow.from_row(row), outcome))
    return out


def settled_outcome(
    turn: str | None,
    prompt: str | None,
    *,
    delivered: bool,
    has_turn: bool,
    has_prompt: bool,
    by_door: bool = False,
) -> InboxOutcome | None:
    """How a consumed message ended, or ``None`` while it has not (pure; see
    ``unsettled_inbox``). ``turn``: its turn's status; ``prompt``: its queued prompt's;
    ``by_door``: a team's door took it in (without a turn, the door says what became of it)."""
    if has_turn:
        if turn is None or not delivered:
            return None
        return _OUTCOMES.get(turn)
    if has_prompt:
        return "interrupted" if prompt == "cancelled" else None
    return None if by_door else "completed"
