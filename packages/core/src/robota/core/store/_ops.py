"""Write operations: small immutable values the writer applies inside its batch transaction.

An op is data plus an ``apply(db)`` that runs in the writer's thread, inside a savepoint of the
batch's transaction, and returns the op's result. Keeping ops as values (not closures over
connections) is what lets any thread build one, lets a batch hold ops from many callers, and
lets a failing op be rolled back to its savepoint without touching its neighbours.

An ``apply`` must not commit, roll back or open transactions of its own, and must fully fetch any
statement it starts. A ``None`` timestamp means "when the batch runs".
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Protocol, TypeVar

from ._database import Database
from ._records import TURN_STATUSES, JSONValue, QueuedPrompt, TurnStatus, dump_json, stamp

__all__ = [
    "AppendAuditEvent",
    "CancelPrompt",
    "CancelRoutePrompts",
    "ClaimInboundEvent",
    "EnqueuePrompt",
    "HeartbeatTurnAttempt",
    "InsertTurnAttempt",
    "RecordFinalDelivery",
    "RecordProgressCard",
    "SaveRouteState",
    "TakePrompt",
    "UpdateTurnAttempt",
    "WriteOp",
]

R_co = TypeVar("R_co", covariant=True)


class WriteOp(Protocol[R_co]):
    """Anything the writer can apply: ``apply`` runs in the writer's thread, in a savepoint."""

    def apply(self, db: Database, /) -> R_co: ...


# -- inbound events ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ClaimInboundEvent:
    """Claim an inbound event id; ``True`` the first time, ``False`` for every redelivery.

    Chat platforms redeliver webhooks and events after timeouts and reconnects. The claim is the
    durable dedupe: once acknowledged it holds across restarts, so a replayed event is dropped
    instead of starting a second turn.
    """

    event_id: str
    kind: str
    at: float | None = None

    def apply(self, db: Database, /) -> bool:
        cursor = db.execute(
            "INSERT OR IGNORE INTO inbound_event_receipts (event_id, kind, received_at) "
            "VALUES (?, ?, ?)",
            (self.event_id, self.kind, stamp(self.at)),
        )
        return cursor.rowcount == 1


# -- route states ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SaveRouteState:
    """Store the state a passivating route actor hands over (already encoded as JSON text)."""

    route_key: str
    state_json: str
    at: float | None = None

    def apply(self, db: Database, /) -> None:
        db.execute(
            "INSERT INTO route_states (route_key, state_json, updated_at) VALUES (?, ?, ?) "
            "ON CONFLICT (route_key) DO UPDATE SET "
            "state_json = excluded.state_json, updated_at = excluded.updated_at",
            (self.route_key, self.state_json, stamp(self.at)),
        )


# -- final deliveries --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RecordFinalDelivery:
    """Mark a turn's final answer as delivered; ``False`` if it already was.

    This is the exactly-once gate of final delivery: whoever gets ``True`` owns the delivery,
    everyone else (a retry, a recovered turn, a duplicate event) must not send it again. An entry
    created earlier by progress updates is completed, not replaced.
    """

    turn_id: str
    final_message_ids: tuple[str, ...] = ()
    at: float | None = None

    def apply(self, db: Database, /) -> bool:
        cursor = db.execute(
            "INSERT INTO final_deliveries (turn_id, final_message_ids_json, final_delivered_at) "
            "VALUES (?, ?, ?) "
            "ON CONFLICT (turn_id) DO UPDATE SET "
            "final_message_ids_json = excluded.final_message_ids_json, "
            "final_delivered_at = excluded.final_delivered_at "
            "WHERE final_deliveries.final_delivered_at IS NULL",
            (self.turn_id, dump_json(list(self.final_message_ids)), stamp(self.at)),
        )
        return cursor.rowcount == 1


@dataclass(frozen=True, slots=True)
class RecordProgressCard:
    """Note the progress card shown for a turn; ``False`` when nothing changed or the final
    answer is already delivered.

    Card edits are rate-limited by the platforms, so the caller edits only on ``True``; and a
    late progress update must never overwrite a turn whose final answer is out.
    """

    turn_id: str
    progress_message_id: str
    card_hash: str

    def apply(self, db: Database, /) -> bool:
        cursor = db.execute(
            "INSERT INTO final_deliveries (turn_id, progress_message_id, last_card_hash) "
            "VALUES (?, ?, ?) "
            "ON CONFLICT (turn_id) DO UPDATE SET "
            "progress_message_id = excluded.progress_message_id, "
            "last_card_hash = excluded.last_card_hash "
            "WHERE final_deliveries.final_delivered_at IS NULL AND ("
            "final_deliveries.last_card_hash IS NOT excluded.last_card_hash OR "
            "final_deliveries.progress_message_id IS NOT excluded.progress_message_id)",
            (self.turn_id, self.progress_message_id, self.card_hash),
        )
        return cursor.rowcount == 1


# -- turn attempts -----------------------------------------------------------------------------


def _check_status(status: str) -> None:
    # The CHECK constraint would catch it too, but only as an anonymous IntegrityError.
    if status not in TURN_STATUSES:
        raise ValueError(f"unknown turn status {status!r}; expected one of {sorted(TURN_STATUSES)}")


@dataclass(frozen=True, slots=True)
class InsertTurnAttempt:
    """Record a new turn attempt before anything is sent to the agent.

    Written first so that a crash at any later point leaves a row recovery can find. The
    heartbeat starts at creation, so an attempt that never started still ages into recovery.
    """

    id: str
    task_id: str
    route_key: str
    prompt: str
    images: tuple[str, ...] = ()
    anchor_message_id: str | None = None
    status: TurnStatus = "accepted"
    retry_count: int = 0
    """Automatic retries before this one (it continues a turn that failed transiently)."""
    recovery_count: int = 0
    """Restarts this turn was continued through (it continues a turn a crash cut short)."""
    parent_id: str | None = None
    """The completed attempt the conversation stands at (the task's head)."""
    inbox: int | None = None
    """The chat inbox row of the message the turn answers: consumed by this write
    (``_inbox``)."""
    takes_over: str | None = None
    """The attempt this one takes over (a retry, a turn continued after a restart): the chat
    messages it answered are this one's (``_inbox``)."""
    at: float | None = None

    def apply(self, db: Database, /) -> None:
        _check_status(self.status)
        now = stamp(self.at)
        db.execute(
            "INSERT INTO turn_attempts (id, task_id, route_key, status, prompt, images_json, "
            "anchor_message_id, retry_count, recovery_count, parent_id, heartbeat_at, "
            "created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                self.id,
                self.task_id,
                self.route_key,
                self.status,
                self.prompt,
                dump_json(list(self.images)),
                self.anchor_message_id,
                self.retry_count,
                self.recovery_count,
                self.parent_id,
                now,
                now,
                now,
            ),
        )
        if self.inbox is not None:
            consume_inbox(db, self.inbox, self.id, now)
        if self.takes_over is not None:
            relink_inbox(db, self.takes_over, self.id)


@dataclass(frozen=True, slots=True)
class UpdateTurnAttempt:
    """Move an attempt to ``status``; ``False`` if there is no such attempt.

    ``error`` is written as given, so a transition without one clears a stale error.
    ``remote_turn_id`` and ``remote_session_id`` are kept when ``None``: they are learnt once
    and never forgotten.
    """

    id: str
    status: TurnStatus
    remote_turn_id: str | None = None
    error: str | None = None
    remote_session_id: str | None = None
    add_retry: bool = False
    add_recovery: bool = False
    at: float | None = None

    def apply(self, db: Database, /) -> bool:
        _check_status(self.status)
        cursor = db.execute(
            "UPDATE turn_attempts SET status = ?, "
            "remote_turn_id = coalesce(?, remote_turn_id), error = ?, "
            "remote_session_id = coalesce(?, remote_session_id), "
            "retry_count = retry_count + ?, recovery_count = recovery_count + ?, "
            "updated_at = ? WHERE id = ?",
            (
                self.status,
                self.remote_turn_id,
                self.error,
                self.remote_session_id,
                int(self.add_retry),
                int(self.add_recovery),
                stamp(self.at),
                self.id,
            ),
        )
        return cursor.rowcount == 1


@dataclass(frozen=True, slots=True)
class HeartbeatTurnAttempt:
    """Say an attempt is still alive; ``False`` if there is no such attempt.

    Recovery treats an active attempt whose heartbeat is old as orphaned by a dead process.
    """

    id: str
    at: float | None = None

    def apply(self, db: Database, /) -> bool:
        cursor = db.execute(
            "UPDATE turn_attempts SET heartbeat_at = ? WHERE id = ?", (stamp(self.at), self.id)
        )
        return cursor.rowcount == 1


# -- queued prompts ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class EnqueuePrompt:
    """Queue a prompt for a busy route; returns its id, which orders the queue.

    ``front`` puts it ahead of every pending prompt (a steer that lost the race with its turn's
    end: the person typed it before anything still queued ran). It takes an id below every id
    ever used, which keeps ``TakePrompt``'s order a plain ``ORDER BY id``.
    """

    route_key: str
    text: str
    task_id: str | None = None
    display_text: str | None = None
    images: tuple[str, ...] = ()
    message_id: str | None = None
    front: bool = False
    inbox: int | None = None
    """The chat inbox row the prompt came from: consumed by this write (``_inbox``)."""
    at: float | None = None

    def apply(self, db: Database, /) -> int:
        prompt_id = None
        if self.front:
            row = db.execute("SELECT min(id) FROM queued_prompts").fetchone()
            prompt_id = (row[0] if row is not None and row[0] is not None else 1) - 1
        cursor = db.execute(
            "INSERT INTO queued_prompts (id, route_key, task_id, text, display_text, images_json, "
            "message_id, status, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, 'pending', ?)",
            (
                prompt_id,
                self.route_key,
                self.task_id,
                self.text,
                self.display_text,
                dump_json(list(self.images)),
                self.message_id,
                stamp(self.at),
            ),
        )
        rowid = cursor.lastrowid
        if rowid is None:
            raise RuntimeError("sqlite3 reported no rowid for an INSERT")
        if self.inbox is not None:
            db.execute(
                "UPDATE chat_inbox SET consumed_at = ?, prompt_id = ? "
                "WHERE id = ? AND consumed_at IS NULL",
                (stamp(self.at), rowid, self.inbox),
            )
        return rowid


# -- the chat inbox's steps that ride these ops (the table and its own ops: ``_inbox``) --------


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
class CancelPrompt:
    """Cancel one queued prompt; ``False`` if it was already taken or cancelled."""

    prompt_id: int

    def apply(self, db: Database, /) -> bool:
        cursor = db.execute(
            "UPDATE queued_prompts SET status = 'cancelled' WHERE id = ? AND status = 'pending'",
            (self.prompt_id,),
        )
        return cursor.rowcount == 1


@dataclass(frozen=True, slots=True)
class CancelRoutePrompts:
    """Cancel every pending prompt of a route; returns how many were cancelled."""

    route_key: str

    def apply(self, db: Database, /) -> int:
        cursor = db.execute(
            "UPDATE queued_prompts SET status = 'cancelled' "
            "WHERE route_key = ? AND status = 'pending'",
            (self.route_key,),
        )
        return cursor.rowcount


@dataclass(frozen=True, slots=True)
class TakePrompt:
    """Take the oldest pending prompt of a route, or ``None`` if there is none.

    Select and update run in the same savepoint of the one writer, so two takers can never get
    the same prompt.
    """

    route_key: str

    def apply(self, db: Database, /) -> QueuedPrompt | None:
        rows = list(
            db.query(
                "SELECT * FROM queued_prompts WHERE route_key = ? AND status = 'pending' "
                "ORDER BY id LIMIT 1",
                (self.route_key,),
            )
        )
        if not rows:
            return None
        db.execute("UPDATE queued_prompts SET status = 'taken' WHERE id = ?", (rows[0]["id"],))
        return QueuedPrompt.from_row({**rows[0], "status": "taken"})


@dataclass(frozen=True, slots=True)
class TakeQueuedTurn:
    """Take the route's oldest pending prompt and record it as a new turn attempt, in one
    savepoint: a crash can leave the prompt pending or its attempt recorded, never taken and
    lost. Returns the prompt, or ``None`` (and records nothing) when the queue is empty. The
    chat message the prompt came from (``_inbox``) is answered by the new attempt, its anchor."""

    route_key: str
    attempt_id: str
    task_id: str
    parent_id: str | None = None
    at: float | None = None

    def apply(self, db: Database, /) -> QueuedPrompt | None:
        prompt = TakePrompt(self.route_key).apply(db)
        if prompt is not None:
            db.execute(
                "UPDATE chat_inbox SET attempt_id = ? WHERE prompt_id = ?",
                (self.attempt_id, prompt.id),
            )
            InsertTurnAttempt(
                id=self.attempt_id,
                task_id=self.task_id,
                route_key=self.route_key,
                prompt=prompt.text,
                images=prompt.images,
                anchor_message_id=prompt.message_id,
                parent_id=self.parent_id,
                at=self.at,
            ).apply(db)
        return prompt


@dataclass(frozen=True, slots=True)
class Together:
    """Apply ``ops`` in order in one savepoint: all are committed or none is. Returns their
    results. For steps that must not be cut apart by a crash (end a turn and claim its final,
    and start the turn that takes over)."""

    ops: tuple[WriteOp[object], ...]

    def apply(self, db: Database, /) -> tuple[object, ...]:
        return tuple(op.apply(db) for op in self.ops)


# -- audit -------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class AppendAuditEvent:
    """Append one event to the audit trail; returns its id (the trail's order)."""

    event_type: str
    payload: Mapping[str, JSONValue] = field(default_factory=dict)
    at: float | None = None

    def apply(self, db: Database, /) -> int:
        cursor = db.execute(
            "INSERT INTO audit_events (event_type, payload_json, created_at) VALUES (?, ?, ?)",
            (self.event_type, dump_json(dict(self.payload)), stamp(self.at)),
        )
        rowid = cursor.lastrowid
        if rowid is None:
            raise RuntimeError("sqlite3 reported no rowid for an INSERT")
        return rowid
