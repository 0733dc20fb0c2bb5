"""What the last engine run left in the store, for the starting engine to recover (see
``_recovery`` for the rules). Reads the store: the engine calls it once, before any route runs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..store import Database, TurnAttempt, active_turn_attempts

__all__ = ["RECOVERY_WINDOW", "RecoveryPlan", "plan_recovery"]

RECOVERY_WINDOW = 300.0
"""Seconds since an attempt's last heartbeat within which it is continued, not abandoned."""


@dataclass(frozen=True, slots=True)
class RecoveryPlan:
    interrupt: tuple[TurnAttempt, ...]
    continue_: tuple[TurnAttempt, ...]
    deliver: tuple[TurnAttempt, ...]
    queues: tuple[str, ...]
    """Route keys with pending queued prompts."""


def plan_recovery(db: Database, *, now: float, owns: Any = None) -> RecoveryPlan:
    """What the last run left, for the routes ``owns(route_key)`` accepts (default: all)."""

    def mine(route_key: str) -> bool:
        return owns is None or bool(owns(route_key))

    interrupt: list[TurnAttempt] = []
    continue_: list[TurnAttempt] = []
    for attempt in active_turn_attempts(db):
        if not mine(attempt.route_key):
            continue
        heartbeat = attempt.heartbeat_at or attempt.created_at
        (continue_ if now - heartbeat <= RECOVERY_WINDOW else interrupt).append(attempt)
    undelivered = [
        TurnAttempt.from_row(row)
        for row in db.query(
            "SELECT a.* FROM turn_attempts a LEFT JOIN final_deliveries d ON d.turn_id = a.id "
            "WHERE a.status IN ('completed', 'failed', 'interrupted') AND a.finished_at >= ? "
            "AND (d.final_delivered_at IS NULL) ORDER BY a.finished_at",
            (now - RECOVERY_WINDOW,),
        )
    ]
    queues = [
        str(row[0])
        for row in db.execute(
            "SELECT DISTINCT route_key FROM queued_prompts WHERE status = 'pending' "
            "ORDER BY route_key"
        ).fetchall()
    ]
    return RecoveryPlan(
        tuple(interrupt),
        tuple(continue_),
        tuple(a for a in undelivered if mine(a.route_key)),
        tuple(k for k in queues if mine(k)),
    )
