"""A route's turns: starting one, its events, its end and final answer, the queue between turns.

The order of a turn, and why:

1. the attempt is written (``InsertTurnAttempt``) and only its commit sends the prompt to the
   agent, so a crash at any later point leaves a row that recovery finds;
2. the agent's ``TurnStarted`` marks the attempt running (with the agent's turn id);
3. ``TurnCompleted`` writes the outcome (``FinishTurnAttempt``) and claims the final delivery in
   the ledger (``ClaimFinal``); only a claim that wins tells the front end ``TurnFinished``, so
   a final answer is delivered once whatever crashed in between;
4. then the next queued prompt, if any, else ``RouteIdle``.

Steps 1 and 3 act in the store writer's thread, right after the commit (``Write.then``,
``ClaimFinal``): the prompt and the final answer are on every turn's critical path, and a round
trip through the route's inbox first would add a thread wake-up to each. The route hears of a
claim afterwards (``FinalClaimed``), of an attempt only when it could not be written
(``AttemptNotRecorded``: the turn then ends failed; or, when the task began to move to another
device since the prompt was admitted, ``TaskImmobile``: the prompt is refused as the admission
refuses it, the turn never began).

Functions of ``RouteData``, pure: they change the state and append effects.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, cast

from .._records import fields_of, replace
from ..agents import InterruptTurn, StartTurn, SteerRefused, TurnRefused
from ..events import RuntimeEvent, TurnCompleted, TurnError, TurnStarted, Usage
from ..store import (
    ConsumeInbox,
    EnqueuePrompt,
    FinishTurnAttempt,
    InsertTurnAttempt,
    JSONValue,
    MarkPrimed,
    TakeQueuedTurn,
    TaskImmobile,
    Together,
    UpdateTurnAttempt,
    WriteOp,
)
from ._notices import InputQueued, InputSteered, TurnBegan, TurnFinished, TurnUpdate
from ._requests import TaskSettings
from ._route_effects import (
    AttemptAck,
    AttemptNotRecorded,
    ClaimFinal,
    Effect,
    FinalClaimed,
    Log,
    Notify,
    PromptQueued,
    QueueAck,
    QueuedTaken,
    Running,
    TakeAck,
    Tell,
    Write,
)
from ._route_state import RouteData, Turn

__all__ = [
    "MAX_RETRIES",
    "begin",
    "claim_final",
    "event",
    "final_claimed",
    "enqueue",
    "interrupt",
    "next_prompt",
    "not_recorded",
    "queued",
    "refused",
    "retry_prompt",
    "steer_refused",
    "steered",
    "taken",
    "took_back",
]

MAX_RETRIES = 3
"""Automatic retry turns after transient failures (rate limits, 5xx, cut streams)."""


def begin(
    route: RouteData,
    text: str,
    images: tuple[Path, ...] = (),
    *,
    retry_count: int = 0,
    recovery: bool = False,
    recovery_count: int = 0,
    along: tuple[WriteOp[object], ...] = (),
    takes_over: str | None = None,
    inbox: int | None = None,
    message_id: str | None = None,
) -> None:
    """Start a turn: record its attempt, and only then send the prompt. ``along`` are writes
    committed with the attempt, all or none (what the new turn takes over from); the chat
    messages ``takes_over`` answered are this turn's, and the inbox row ``inbox`` (the chat
    message ``message_id``, the attempt's anchor) is consumed by the same write."""
    if route.task is None:
        route.new_task(TaskSettings(), announce=False)
    task = route.task
    if task is None:
        return
    ids = route.ids
    turn = Turn(ids.attempt_id(), task.id, text, images, ids.monotonic(), retry_count, recovery)
    turn.message_id, turn.inbox = message_id, inbox
    route.turn = turn
    route.open_session(task)
    route.check_restriction(task)
    insert = InsertTurnAttempt(
        id=turn.attempt_id,
        task_id=task.id,
        route_key=route.key,
        prompt=text,
        images=tuple(str(p) for p in images),
        anchor_message_id=message_id,
        retry_count=retry_count,
        recovery_count=recovery_count,
        parent_id=task.head_attempt_id,
        inbox=inbox,
        takes_over=takes_over,
    )
    # The task's first turn here since it arrived (its session is a new one, opened for it).
    turns = route.reads.transcript_to_prime(task.id)
    if turns and not route.declared(task.agent).import_history:
        turn.primer = primer(turns)
        along = (*along, MarkPrimed(task.id))
    op = Together((*along, insert)) if along else insert
    route.emit(Write(op, AttemptAck(turn.attempt_id), then=_dispatch(route, turn)))


def primer(turns: Sequence[Mapping[str, object]]) -> str:
    """The transcript a task brought from another device, as the text its new agent session
    reads before the first prompt there (its own session could not move)."""
    lines = ["[robota: this conversation continues one held on another device; its turns so far:]"]
    for number, turn in enumerate(turns, start=1):
        lines.append(f"--- turn {number}, the user:\n{turn.get('prompt', '')}")
        lines.append(f"--- turn {number}, you answered:\n{turn.get('answer', '')}")
    lines.append("[robota: the conversation goes on with the user's next message:]\n")
    return "\n".join(lines)


def _dispatch(route: RouteData, turn: Turn) -> tuple[Effect, ...]:
    """What tells the front end a recorded turn began and sends its prompt. Told before the
    commit, the front end's thread would take the interpreter from the writer, whose commit the
    prompt waits for; told after the prompt, the turn's first events could reach the front end
    before it."""
    assert route.task is not None
    began = TurnBegan(
        route.key,
        turn.task_id,
        turn.attempt_id,
        turn.prompt,
        turn.recovery,
        restricted=route.session_restricted.get(turn.task_id, False),
        message_id=turn.message_id,
    )
    return (
        Running(turn.attempt_id, running=True),
        Notify(began),
        Tell(route.task.agent, StartTurn(turn.task_id, turn.primer + turn.prompt, turn.images)),
    )


def took_back(route: RouteData, turn: Turn) -> None:
    """The turn a previous incarnation left running at the agent is this one's again."""
    route.turn = turn
    task = route.task
    if task is not None and task.agent in route.agents:
        route.capabilities[task.id] = route.declared(task.agent)
    route.emit(Log("info", f"route {route.key}: took back running turn {turn.attempt_id}"))


def not_recorded(route: RouteData, failed: AttemptNotRecorded) -> None:
    turn = route.turn
    if turn is None or turn.attempt_id != failed.attempt_id:
        return
    if isinstance(failed.error, TaskImmobile):
        # The offer committed between the admission's read and this write (its transaction
        # saw it): nothing was written and nothing told, so the prompt is refused exactly as
        # the admission would have, its chat message consumed by a write of its own.
        route.turn = None
        route.reply(failed.error.refusal, error=True)
        if turn.inbox is not None:
            route.write(ConsumeInbox(turn.inbox))
        next_prompt(route)
        return
    _finish_locally(route, turn, "failed", f"the turn could not be recorded: {failed.error}")


def event(route: RouteData, key: str, runtime_event: RuntimeEvent) -> None:
    turn = route.turn
    if turn is None or turn.task_id != key or turn.finishing:
        route.emit(Log("debug", f"route {route.key}: event outside a turn: {runtime_event}"))
        return
    if isinstance(runtime_event, TurnStarted):
        turn.remote_turn_id = runtime_event.turn_id
        session = route.task.remote_id if route.task is not None else None
        route.write(
            UpdateTurnAttempt(
                turn.attempt_id,
                "running",
                remote_turn_id=runtime_event.turn_id,
                remote_session_id=session,
            )
        )
    update = TurnUpdate(route.key, turn.task_id, turn.attempt_id, runtime_event)
    if isinstance(runtime_event, TurnCompleted):
        # Said with the final answer, after the outcome's commit: said now, it would wake the
        # front end's thread, which then holds the interpreter while the route's still builds
        # the writes the final waits for.
        _finish(route, turn, runtime_event, update)
        return
    route.say(update)


def _finish(
    route: RouteData, turn: Turn, completed: TurnCompleted, update: TurnUpdate | None = None
) -> None:
    turn.finishing = True
    route.emit(Running(turn.attempt_id, running=False))
    status = completed.status if completed.status in ("completed", "interrupted") else "failed"
    usage = completed.usage
    route.write(
        FinishTurnAttempt(
            turn.attempt_id,
            status,
            remote_turn_id=completed.turn_id,
            final_text=completed.final_text,
            error=completed.error.message if completed.error else None,
            usage=None if usage is None else _usage_json(usage),
        )
    )
    finished = TurnFinished(
        route.key,
        turn.task_id,
        turn.attempt_id,
        cast(Any, status),
        completed.final_text,
        completed.error,
        usage,
        completed.turn_id,
        int((route.ids.monotonic() - turn.started) * 1000),
    )
    claim_final(route, finished, before=() if update is None else (update,))
    if status == "completed" and route.task is not None and route.task.id == turn.task_id:
        route.task = replace(route.task, head_attempt_id=turn.attempt_id)


def _finish_locally(route: RouteData, turn: Turn, status: str, message: str) -> None:
    """End a turn the agent never ran (refused, could not be recorded, agent failed)."""
    error = TurnError(message, "unknown", retryable=False)
    _finish(route, turn, TurnCompleted(turn.remote_turn_id or "", cast(Any, status), error))


def claim_final(route: RouteData, finished: TurnFinished, before: tuple[object, ...] = ()) -> None:
    """Claim ``finished`` in the delivery ledger; the claim that wins delivers it (see
    ``ClaimFinal``). The route hears of it as ``FinalClaimed``."""
    route.emit(ClaimFinal(finished, before))


def final_claimed(route: RouteData, claimed: FinalClaimed) -> None:
    finished = claimed.finished
    if claimed.error is not None:
        route.emit(
            Log("error", f"route {route.key}: final delivery ledger failed: {claimed.error}")
        )
    turn = route.turn
    if turn is None:
        next_prompt(route)  # a recovered final: the route is idle unless prompts wait
        return
    if turn.attempt_id != finished.attempt_id:
        return
    route.turn = None
    route.steers.clear()
    error = finished.error
    if (
        finished.status == "failed"
        and error is not None
        and error.retryable
        and turn.retry_count < MAX_RETRIES
    ):
        attempt = turn.retry_count + 1
        route.reply(f"{error.message}: retrying ({attempt} of {MAX_RETRIES})")
        begin(
            route,
            retry_prompt(turn.prompt, attempt),
            turn.images,
            retry_count=attempt,
            takes_over=turn.attempt_id,
        )
        return
    next_prompt(route)


def next_prompt(route: RouteData) -> None:
    if route.turn is not None or route.taking:
        return
    if not route.pending:
        route.maybe_idle()
        return
    if route.task is None:
        route.new_task(TaskSettings(), announce=False)
    task = route.task
    if task is None:
        return
    # Taking the prompt and recording its attempt are one write: a crash in between would
    # otherwise lose a prompt that is no longer pending and not yet a turn.
    route.taking = True
    attempt_id = route.ids.attempt_id()
    op = TakeQueuedTurn(route.key, attempt_id, task.id, parent_id=task.head_attempt_id)
    route.emit(Write(op, TakeAck(attempt_id, task.id)))


def taken(route: RouteData, message: QueuedTaken) -> None:
    route.taking = False
    if message.error is not None:
        route.reply(f"could not take the next queued prompt: {message.error}", error=True)
        return
    prompt = message.prompt
    if prompt is None:
        route.pending.clear()  # the store has none: what this route thought it knew is stale
        route.maybe_idle()
        return
    if prompt.id in route.pending:
        route.pending.remove(prompt.id)
    elif route.pending:
        route.pending.pop(0)  # one this incarnation did not know of ran in its place
    images = tuple(Path(p) for p in prompt.images)
    turn = Turn(message.attempt_id, message.task_id, prompt.text, images, route.ids.monotonic())
    turn.message_id = prompt.message_id
    route.turn = turn
    task = route.task
    if task is None or task.id != turn.task_id:
        _finish_locally(route, turn, "failed", "the task of the queued prompt is not current")
        return
    route.open_session(task)
    route.effects.extend(_dispatch(route, turn))


def enqueue(
    route: RouteData,
    text: str,
    *,
    front: bool = False,
    inbox: int | None = None,
    message_id: str | None = None,
) -> None:
    """Queue ``text``; the chat message's inbox row (``inbox``) is consumed by the same write."""
    task_id = route.task.id if route.task is not None else None
    op = EnqueuePrompt(
        route.key, text, task_id=task_id, front=front, inbox=inbox, message_id=message_id
    )
    route.emit(Write(op, QueueAck(text, message_id)))


def queued(route: RouteData, message: PromptQueued) -> None:
    if message.error is not None:
        route.reply(f"could not queue the prompt: {message.error}", error=True)
        return
    route.pending.append(message.prompt_id)
    ahead = len(route.pending) - 1
    route.say(InputQueued(route.key, message.prompt_id, message.text, ahead, message.message_id))
    if route.turn is None:
        next_prompt(route)


def interrupt(route: RouteData) -> None:
    if route.turn is None or route.task is None:
        route.reply("no turn is running")
        return
    route.emit(Tell(route.task.agent, InterruptTurn(route.task.id)))


def steered(route: RouteData, key: str) -> None:
    """The agent took the oldest steer in flight."""
    if route.task is not None and key == route.task.id and route.steers:
        attempt = route.turn.attempt_id if route.turn else ""
        text, message_id = route.steers.popleft()
        route.say(InputSteered(route.key, attempt, text, message_id))


def steer_refused(route: RouteData, message: SteerRefused) -> None:
    task = route.task
    if task is None or message.key != task.id:
        return
    if route.steers and route.steers[0][0] == message.text:
        route.steers.popleft()
    if message.reason == "unsupported":
        route.capabilities[task.id] = replace(route.can(task), steer=False)
    enqueue(route, message.text, front=message.reason == "ended")


def refused(route: RouteData, message: TurnRefused) -> None:
    turn = route.turn
    if turn is None or message.key != turn.task_id or turn.finishing:
        return
    _finish_locally(route, turn, "failed", message.message)


def retry_prompt(prompt: str, attempt: int) -> str:
    original = prompt.split("\n\n", 1)[1] if prompt.startswith("[robota retry") else prompt
    return (
        f"[robota retry {attempt}: the previous attempt at this request failed with a temporary "
        "error. Check what it already did before repeating work; do not repeat irreversible "
        "actions.]\n\n" + original
    )


def _usage_json(usage: Usage) -> dict[str, JSONValue]:
    # Not ``asdict``: it deep-copies, and this runs on every turn's way to its final answer.
    values = ((name, getattr(usage, name)) for name, _ in fields_of(type(usage)))
    return {name: value for name, value in values if value is not None}
