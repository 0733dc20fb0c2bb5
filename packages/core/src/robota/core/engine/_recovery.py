"""Recovery when an engine starts, and the prompts of turns robota starts by itself.

On start, before any input, the engine looks at what the last run left (``plan_recovery``):

* an attempt still active whose heartbeat is older than ``RECOVERY_WINDOW`` is marked
  interrupted: too much may have happened since to continue it blindly;
* an attempt active within the window is continued: it is marked interrupted and its route
  starts a new turn on the same task, whose prompt tells the agent to inspect what the cut-short
  turn already did before repeating anything (``recovery_prompt``);
* an attempt that completed but whose final answer was never delivered gets only that delivery
  (the ledger makes it once);
* routes with queued prompts get them released, in order, once the above ran.

The agent processes of the previous run ended with it (they are children of the engine), so a
turn can never still be running at the agent: continuing in a new turn is the only way on.
Every step is a store write, so a crash during recovery is recovered the next time in the same
way, and nothing is delivered twice.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, cast

from ..events import TurnError
from ..store import (
    Database,
    FinishTurnAttempt,
    RecordFinalDelivery,
    Together,
    TurnAttempt,
    active_turn_attempts,
)
from ..store import task as load_task
from ._messages import TurnFinished
from ._route_tasks import use_task

if TYPE_CHECKING:
    from ._route import ConversationRoute

__all__ = [
    "RECOVERY_WINDOW",
    "Recover",
    "RecoveryPlan",
    "abandon",
    "handle_recover",
    "plan_recovery",
    "recovery_prompt",
    "retry_prompt",
]

RECOVERY_WINDOW = 300.0
"""Seconds since an attempt's last heartbeat within which it is continued, not abandoned."""


@dataclass(frozen=True, slots=True)
class Recover:
    """Told to a route by the starting engine."""

    kind: Literal["continue", "deliver", "queue"]
    attempt: TurnAttempt | None = None


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


_RECOVERY_NOTE = (
    "[robota restarted while you were working on the request below; your turn was cut "
    "short. Before doing anything, inspect what was already done (files, commands and their "
    "effects) and do not repeat irreversible actions. Then finish the request.]\n\n"
)


def recovery_prompt(prompt: str) -> str:
    """``prompt`` with the note that robota restarted; once, however often it restarted."""
    return _RECOVERY_NOTE + prompt.removeprefix(_RECOVERY_NOTE)


def retry_prompt(prompt: str, attempt: int) -> str:
    original = prompt.split("\n\n", 1)[1] if prompt.startswith("[robota retry") else prompt
    return (
        f"[robota retry {attempt}: the previous attempt at this request failed with a temporary "
        "error. Check what it already did before repeating work; do not repeat irreversible "
        "actions.]\n\n" + original
    )


def handle_recover(route: ConversationRoute, recover: Recover) -> None:
    """Carry out one recovery step in the route's thread."""
    attempt = recover.attempt
    if recover.kind == "queue" or attempt is None:
        route.next_prompt()
        return
    if recover.kind == "deliver":
        route.claim_final(_finished_from(route.key, attempt))
        return
    # continue: the cut-short attempt ends interrupted (with its final claimed: it never gets
    # one of its own) in the same write that records the turn taking over, so a crash leaves
    # either the old attempt to continue again or the new one, never neither.
    ended = abandon(attempt)
    task = load_task(route.db, attempt.task_id)
    if task is None:
        route.write(ended)
        route.reply(f"cannot recover turn {attempt.id}: its task is gone", error=True)
        return
    if (route.task is None or route.task.id != task.id) and not use_task(route, task.id):
        route.write(ended)
        return
    route.reply("robota restarted during a turn: continuing it in a new turn")
    route.begin(recovery_prompt(attempt.prompt), recovery=True, along=ended.ops)


def abandon(attempt: TurnAttempt) -> Together:
    """End a cut-short attempt as interrupted and claim its final, which never comes."""
    return Together(
        (
            FinishTurnAttempt(
                attempt.id, "interrupted", error="robota stopped while this turn ran"
            ),
            RecordFinalDelivery(attempt.id),
        )
    )


def _finished_from(route_key: str, attempt: TurnAttempt) -> TurnFinished:
    status = attempt.status if attempt.status in ("completed", "interrupted") else "failed"
    error = None
    if attempt.error is not None:
        error = TurnError(attempt.error, "unknown", retryable=False)
    return TurnFinished(
        route_key,
        attempt.task_id,
        attempt.id,
        cast(Any, status),
        attempt.final_text,
        error,
        None,
        attempt.remote_turn_id,
    )
