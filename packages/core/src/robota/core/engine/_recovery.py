"""Recovery when an engine starts, and the prompts of turns robota starts by itself.

On start, before any input, the engine looks at what the last run left (``plan_recovery``):

* an attempt still active whose heartbeat is older than ``RECOVERY_WINDOW`` is marked
  interrupted: too much may have happened since to continue it blindly;
* an attempt active within the window is continued: it is marked interrupted and its route
  starts a new turn on the same task, whose prompt tells the agent to inspect what the cut-short
  turn already did before repeating anything (``recovery_prompt``); the new turn answers the
  same chat message (its anchor, and the inbox rows of the messages the old one answered) and
  counts the restarts it was continued through (``recovery_count``): once a turn was continued
  ``MAX_RECOVERIES`` times, the next restart ends it failed and its final says so, so a turn
  that kills its host is not run for ever;
* an attempt that completed but whose final answer was never delivered gets only that delivery
  (the ledger makes it once);
* routes with queued prompts get them released, in order, once the above ran.

The agent processes of the previous run ended with it (they are children of the engine), so a
turn can never still be running at the agent: continuing in a new turn is the only way on.
Every step is a store write, so a crash during recovery is recovered the next time in the same
way, and nothing is delivered twice.

``_recovery_plan`` reads what the last run left (the engine, before any route runs);
``handle_recover`` here is the route core's step, pure like the rest of it.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Literal, cast

from ..events import TurnError
from ..store import FinishTurnAttempt, RecordFinalDelivery, Together, TurnAttempt
from ._messages import TurnFinished
from ._route_state import RouteData
from ._route_tasks import use_task
from ._route_turns import begin, claim_final, next_prompt

__all__ = ["MAX_RECOVERIES", "Recover", "abandon", "handle_recover", "recovery_prompt"]

MAX_RECOVERIES = 3
"""Restarts a turn is continued through; at the next it ends failed."""


@dataclass(frozen=True, slots=True)
class Recover:
    """Told to a route by the starting engine."""

    kind: Literal["continue", "deliver", "queue"]
    attempt: TurnAttempt | None = None


_RECOVERY_NOTE = (
    "[robota restarted while you were working on the request below; your turn was cut "
    "short. Before doing anything, inspect what was already done (files, commands and their "
    "effects) and do not repeat irreversible actions. Then finish the request.]\n\n"
)


def recovery_prompt(prompt: str) -> str:
    """``prompt`` with the note that robota restarted; once, however often it restarted."""
    return _RECOVERY_NOTE + prompt.removeprefix(_RECOVERY_NOTE)


def prompt_answers(prompt: str, text: str) -> bool:
    """Whether a turn whose prompt is ``prompt`` answers the person's message ``text``: the
    text itself, or a recovered turn's prompt, which ends with it as its last paragraph."""
    return prompt == text or prompt.endswith("\n\n" + text)


def handle_recover(route: RouteData, recover: Recover) -> None:
    """Carry out one recovery step."""
    attempt = recover.attempt
    if recover.kind == "queue" or attempt is None:
        next_prompt(route)
        return
    if recover.kind == "deliver":
        claim_final(route, _finished_from(route.key, attempt))
        return
    if attempt.recovery_count >= MAX_RECOVERIES:
        give_up(route, attempt)
        return
    # continue: the cut-short attempt ends interrupted (with its final claimed: it never gets
    # one of its own) in the same write that records the turn taking over, so a crash leaves
    # either the old attempt to continue again or the new one, never neither.
    ended = abandon(attempt)
    task = route.reads.task(attempt.task_id)
    if task is None:
        route.write(ended)
        route.reply(f"cannot recover turn {attempt.id}: its task is gone", error=True)
        return
    if (route.task is None or route.task.id != task.id) and not use_task(route, task.id):
        route.write(ended)
        return
    route.reply("robota restarted during a turn: continuing it in a new turn")
    begin(
        route,
        recovery_prompt(attempt.prompt),
        recovery=True,
        recovery_count=attempt.recovery_count + 1,
        along=ended.ops,
        takes_over=attempt.id,
        message_id=attempt.anchor_message_id,
    )


GAVE_UP = "robota restarted {n} times while this turn ran; it was not continued again"


def give_up(route: RouteData, attempt: TurnAttempt) -> None:
    """End a turn continued ``MAX_RECOVERIES`` times already: failed, its final claimed and
    told (the person reads why), nothing sent to the agent."""
    error = GAVE_UP.format(n=attempt.recovery_count + 1)
    route.write(FinishTurnAttempt(attempt.id, "failed", error=error))
    failed = replace(attempt, status="failed", error=error)
    claim_final(route, _finished_from(route.key, failed))


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
