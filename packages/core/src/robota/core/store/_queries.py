"""Read queries, run on a reader connection (``open_reader``) in the caller's thread.

Reads never go through the writer: they would queue behind writes for no benefit, since WAL
gives every reader a consistent view of the last commit without taking any lock the writer needs.
Each function is one statement, so it sees one committed state.
"""

from __future__ import annotations

from ._database import Database
from ._records import ACTIVE_TURN_STATUSES, AuditEvent, FinalDelivery, QueuedPrompt, TurnAttempt

__all__ = [
    "audit_events",
    "event_claimed",
    "final_delivery",
    "load_route_state",
    "pending_prompts",
    "stale_turn_attempts",
    "turn_attempt",
]


def event_claimed(db: Database, event_id: str) -> bool:
    """Whether an inbound event was claimed; the claim itself is ``ClaimInboundEvent``."""
    row = db.execute(
        "SELECT 1 FROM inbound_event_receipts WHERE event_id = ?", (event_id,)
    ).fetchone()
    return row is not None


def load_route_state(db: Database, route_key: str) -> str | None:
    """The JSON text a route saved when it last passivated, or ``None``."""
    row = db.execute(
        "SELECT state_json FROM route_states WHERE route_key = ?", (route_key,)
    ).fetchone()
    return None if row is None else str(row[0])


def final_delivery(db: Database, turn_id: str) -> FinalDelivery | None:
    rows = list(db.query("SELECT * FROM final_deliveries WHERE turn_id = ?", (turn_id,)))
    return FinalDelivery.from_row(rows[0]) if rows else None


def turn_attempt(db: Database, attempt_id: str) -> TurnAttempt | None:
    rows = list(db.query("SELECT * FROM turn_attempts WHERE id = ?", (attempt_id,)))
    return TurnAttempt.from_row(rows[0]) if rows else None


def stale_turn_attempts(db: Database, *, heartbeat_before: float) -> list[TurnAttempt]:
    """Active attempts (accepted, running, recovering) whose last heartbeat is older than
    ``heartbeat_before``: the ones a dead process left behind, oldest heartbeat first."""
    placeholders = ", ".join("?" for _ in ACTIVE_TURN_STATUSES)
    rows = db.query(
        f"SELECT * FROM turn_attempts WHERE status IN ({placeholders}) "
        "AND heartbeat_at < ? ORDER BY heartbeat_at, id",
        (*ACTIVE_TURN_STATUSES, heartbeat_before),
    )
    return [TurnAttempt.from_row(row) for row in rows]


def route_loose_ends(db: Database, route_key: str) -> frozenset[str]:
    """What of ``route_key`` the store still has under way: ``running`` (an active turn
    attempt), ``queued`` (a pending prompt), ``inbox`` (a message accepted whose reactions are
    not settled yet), ``shared`` (its current task is current on another route too, whose
    session it shares). Empty: the route can be forgotten and read back from here."""
    placeholders = ", ".join("?" for _ in ACTIVE_TURN_STATUSES)
    found = db.execute(
        f"SELECT EXISTS (SELECT 1 FROM turn_attempts WHERE route_key = ? "
        f"AND status IN ({placeholders})), "
        "EXISTS (SELECT 1 FROM queued_prompts WHERE route_key = ? AND status = 'pending'), "
        "EXISTS (SELECT 1 FROM chat_inbox WHERE route_key = ? AND settled_at IS NULL), "
        "EXISTS (SELECT 1 FROM routes r JOIN routes o ON o.current_task_id = r.current_task_id "
        "AND o.route_key != r.route_key WHERE r.route_key = ?)",
        (route_key, *ACTIVE_TURN_STATUSES, route_key, route_key, route_key),
    ).fetchone()
    names = ("running", "queued", "inbox", "shared")
    return frozenset(name for name, there in zip(names, found, strict=True) if there)


def pending_prompts(db: Database, route_key: str) -> list[QueuedPrompt]:
    """The route's pending prompts in the order ``TakePrompt`` will take them."""
    rows = db.query(
        "SELECT * FROM queued_prompts WHERE route_key = ? AND status = 'pending' ORDER BY id",
        (route_key,),
    )
    return [QueuedPrompt.from_row(row) for row in rows]


def audit_events(db: Database, *, after_id: int = 0, limit: int = 100) -> list[AuditEvent]:
    """Audit events with ``id > after_id`` in append order; page with the last id seen."""
    rows = db.query(
        "SELECT * FROM audit_events WHERE id > ? ORDER BY id LIMIT ?", (after_id, limit)
    )
    return [AuditEvent.from_row(row) for row in rows]
