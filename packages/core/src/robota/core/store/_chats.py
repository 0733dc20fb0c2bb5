"""What a chat transport remembers of its chats: known conversations, their settings, the
reactions the bot put on a person's messages.

The tables are migration 2's (``chat_contexts``, ``message_reactions``); these are their ops.
Keys are the transport's own: a chat's ``chat_id`` here is its route key (``feishu:chat_id:oc_1``),
so one table serves every transport and two platforms' ids cannot collide.

* ``NoteChat`` records that a conversation was seen (its kind, ``p2p`` or ``group``, and when),
  which is what a start-up note goes to; ``SetChatSetting`` changes one setting of it (a group's
  ``mention_only`` after ``/mute``) without touching the others.
* ``AnchorTurnAttempt`` notes the person's message a turn answers (its card and answer reply
  to it, its reaction is replaced when it ends), and ``unsettled_chat_turns`` is what a
  restarted transport must finish: its turns whose card answer the ledger does not have.
* ``turn_of_chat_message`` is the turn a chat message belongs to (the person's, its card or its
  answer): where a thread started from that message continues the conversation.
* ``RecordReaction`` / ``ForgetReaction`` keep the reaction ids a transport must remove later
  (``OnIt`` replaced by ``DONE``), so a restarted host can still replace a reaction its
  predecessor added.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from ._database import Database
from ._records import JSONValue, TurnAttempt, dump_json, stamp

__all__ = [
    "AnchorTurnAttempt",
    "ChatContext",
    "ForgetReaction",
    "NoteChat",
    "RecordReaction",
    "SetChatSetting",
    "chat_context",
    "chat_contexts",
    "message_reactions",
    "turn_of_chat_message",
    "unsettled_chat_turns",
]


@dataclass(frozen=True, slots=True)
class ChatContext:
    chat_id: str
    kind: str
    title: str | None
    settings: dict[str, JSONValue]
    updated_at: float


@dataclass(frozen=True, slots=True)
class NoteChat:
    """A conversation was seen now: create it, or refresh its kind and time (settings stay)."""

    chat_id: str
    kind: str
    title: str | None = None
    at: float | None = None

    def apply(self, db: Database, /) -> None:
        db.execute(
            "INSERT INTO chat_contexts (chat_id, kind, title, updated_at) VALUES (?, ?, ?, ?) "
            "ON CONFLICT (chat_id) DO UPDATE SET kind = excluded.kind, "
            "title = COALESCE(excluded.title, chat_contexts.title), "
            "updated_at = excluded.updated_at",
            (self.chat_id, self.kind, self.title, stamp(self.at)),
        )


@dataclass(frozen=True, slots=True)
class SetChatSetting:
    """Set one setting of a conversation (creating it with ``kind`` if it is new)."""

    chat_id: str
    kind: str
    key: str
    value: JSONValue
    at: float | None = None

    def apply(self, db: Database, /) -> None:
        now = stamp(self.at)
        value = dump_json(self.value)
        db.execute(
            "INSERT INTO chat_contexts (chat_id, kind, context_json, updated_at) "
            "VALUES (?, ?, json_object(?, json(?)), ?) "
            "ON CONFLICT (chat_id) DO UPDATE SET "
            "context_json = json_set(chat_contexts.context_json, '$.' || ?, json(?)), "
            "updated_at = excluded.updated_at",
            (self.chat_id, self.kind, self.key, value, now, self.key, value),
        )


@dataclass(frozen=True, slots=True)
class RecordReaction:
    """The bot reacted ``emoji`` on ``message_id``; the platform's id removes it later."""

    message_id: str
    emoji: str
    reaction_id: str | None
    at: float | None = None

    def apply(self, db: Database, /) -> None:
        db.execute(
            "INSERT INTO message_reactions (message_id, emoji, reaction_id, created_at) "
            "VALUES (?, ?, ?, ?) ON CONFLICT (message_id, emoji) DO UPDATE SET "
            "reaction_id = excluded.reaction_id, created_at = excluded.created_at",
            (self.message_id, self.emoji, self.reaction_id, stamp(self.at)),
        )


@dataclass(frozen=True, slots=True)
class ForgetReaction:
    """The reaction is gone; ``True`` when it was recorded."""

    message_id: str
    emoji: str

    def apply(self, db: Database, /) -> bool:
        cursor = db.execute(
            "DELETE FROM message_reactions WHERE message_id = ? AND emoji = ?",
            (self.message_id, self.emoji),
        )
        return cursor.rowcount == 1


def _context(row: tuple[object, ...]) -> ChatContext:
    chat_id, kind, title, context_json, updated_at = row
    settings = json.loads(str(context_json or "{}"))
    return ChatContext(
        str(chat_id),
        str(kind),
        None if title is None else str(title),
        settings if isinstance(settings, dict) else {},
        float(updated_at),  # type: ignore[arg-type]
    )


_COLUMNS = "chat_id, kind, title, context_json, updated_at"


def chat_context(db: Database, chat_id: str) -> ChatContext | None:
    row = db.execute(
        f"SELECT {_COLUMNS} FROM chat_contexts WHERE chat_id = ?", (chat_id,)
    ).fetchone()
    return None if row is None else _context(tuple(row))


def chat_contexts(db: Database, prefix: str = "") -> list[ChatContext]:
    """The conversations whose id starts with ``prefix`` (a transport's ``feishu:``), most
    recently seen first."""
    rows = db.execute(
        f"SELECT {_COLUMNS} FROM chat_contexts WHERE substr(chat_id, 1, ?) = ? "
        "ORDER BY updated_at DESC, chat_id",
        (len(prefix), prefix),
    ).fetchall()
    return [_context(tuple(row)) for row in rows]


def message_reactions(db: Database, message_id: str) -> dict[str, str | None]:
    """The bot's recorded reactions on ``message_id``: emoji -> the platform's reaction id."""
    rows = db.execute(
        "SELECT emoji, reaction_id FROM message_reactions WHERE message_id = ?", (message_id,)
    ).fetchall()
    return {str(emoji): None if rid is None else str(rid) for emoji, rid in rows}


@dataclass(frozen=True, slots=True)
class AnchorTurnAttempt:
    """``message_id`` is the message the attempt answers (and its chat inbox row, if it has one,
    is the attempt's to settle); ``True`` when the attempt exists."""

    attempt_id: str
    message_id: str

    def apply(self, db: Database, /) -> bool:
        cursor = db.execute(
            "UPDATE turn_attempts SET anchor_message_id = ? WHERE id = ?",
            (self.message_id, self.attempt_id),
        )
        if cursor.rowcount != 1:
            return False
        # The message's inbox row is this turn's to settle (a team's request: its door took
        # the message in, the turn answers it; ``_inbox``).
        db.execute(
            "UPDATE chat_inbox SET attempt_id = ? WHERE message_id = ? AND route_key = "
            "(SELECT route_key FROM turn_attempts WHERE id = ?)",
            (self.attempt_id, self.message_id, self.attempt_id),
        )
        return True


def unsettled_chat_turns(
    db: Database, route_prefix: str, card_suffix: str, *, since: float
) -> list[tuple[TurnAttempt, str | None]]:
    """The attempts of routes starting with ``route_prefix``, created at ``since`` or later,
    whose card turn (the attempt id + ``card_suffix``) has no delivered answer in the ledger:
    running ones, and finished ones a crash kept from their card; each with its card's message
    id, if it has one (``""``: its send was claimed and never recorded, so a card may exist
    that the last run never learned of, ``_card_claims``). Oldest first."""
    rows = db.query(
        "SELECT a.*, coalesce(d.progress_message_id, "
        "CASE WHEN d.card_claimed_at IS NOT NULL THEN '' END) AS card_message_id "
        "FROM turn_attempts a LEFT JOIN final_deliveries d "
        "ON d.turn_id = a.id || ? "
        "WHERE substr(a.route_key, 1, ?) = ? AND a.created_at >= ? "
        "AND d.final_delivered_at IS NULL ORDER BY a.created_at, a.id",
        (card_suffix, len(route_prefix), route_prefix, since),
    )
    out = []
    for row in rows:
        card = row.pop("card_message_id")
        out.append((TurnAttempt.from_row(row), None if card is None else str(card)))
    return out


def turn_of_chat_message(db: Database, message_id: str, card_suffix: str) -> TurnAttempt | None:
    """The attempt a chat message belongs to: the person's message it answered (its anchor),
    its progress card, or a message of its final answer (the card turn is the attempt id +
    ``card_suffix``); ``None`` for any other message. A human-rate lookup (a thread started
    from a message): the ledger is scanned rather than indexed by message."""
    rows = db.query(
        "SELECT * FROM turn_attempts WHERE anchor_message_id = ? "
        "UNION ALL SELECT a.* FROM final_deliveries d JOIN turn_attempts a "
        "ON d.turn_id = a.id || ? WHERE d.progress_message_id = ? "
        "OR EXISTS (SELECT 1 FROM json_each(d.final_message_ids_json) WHERE value = ?) "
        "LIMIT 1",
        (message_id, card_suffix, message_id, message_id),
    )
    row = next(iter(rows), None)
    return None if row is None else TurnAttempt.from_row(row)
