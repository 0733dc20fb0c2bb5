"""The conversation route: one actor per route key, the task controller of the product.

A route has a current task (one agent, one working directory, one agent session) and runs one
turn at a time on it. What the person types becomes a prompt, a steer, a queued prompt or a
command (``_policy.decide``); what the agent says comes back as notices and goes to the route's
front end. The route never waits on I/O: every store write is acknowledged by a message to the
route itself, and every agent request is answered by a notice.

The order of a turn, and why:

1. the attempt is written (``InsertTurnAttempt``) and only its commit sends the prompt to the
   agent, so a crash at any later point leaves a row that recovery finds;
2. the agent's ``TurnStarted`` marks the attempt running (with the agent's turn id);
3. ``TurnCompleted`` writes the outcome (``FinishTurnAttempt``) and claims the final delivery in
   the ledger (``RecordFinalDelivery``); only a claim that wins tells the front end
   ``TurnFinished``, so a final answer is delivered once whatever crashed in between;
4. then the next queued prompt, if any, else ``RouteIdle``.

Steps 1 and 3 act in the store writer's thread, right after the commit (``_dispatcher``,
``claim_final``): the prompt and the final answer are on every turn's critical path, and a
round trip through this route's inbox first would add a thread wake-up to each. What those
continuations touch is thread-safe (addresses, the front ends, the running set); the route hears
of a claim afterwards (``_Claimed``), of an attempt only when it could not be written
(``_NotRecorded``: the turn then ends failed), and only then changes its own state.

Text typed while a turn runs steers it where the agent can (App Server) and is queued otherwise;
a steer that lost the race with the turn's end is queued first in line.
"""

from __future__ import annotations

import logging
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any, cast

from .._address import Mailbox
from .._capabilities import AgentCapabilities
from .._routes import RouteActor
from ..agents import (
    AgentFailure,
    CloseSession,
    DecideApproval,
    InterruptTurn,
    OpenSession,
    SessionEvent,
    SessionOpened,
    SessionsListed,
    StartTurn,
    Steered,
    SteerRefused,
    SteerTurn,
    TurnAccepted,
    TurnRefused,
)
from ..events import TurnCompleted, TurnError, TurnStarted, Usage
from ..store import (
    BindRouteTask,
    CreateTask,
    Database,
    EnqueuePrompt,
    FinishTurnAttempt,
    InsertTurnAttempt,
    JSONValue,
    QueuedPrompt,
    RecordFinalDelivery,
    TakeQueuedTurn,
    Task,
    Together,
    UpdateTask,
    UpdateTurnAttempt,
    WriteOp,
    active_turn_attempts,
    open_reader,
    pending_prompts,
    route_binding,
)
from ..store import task as load_task
from ._context import EngineContext, new_attempt_id
from ._messages import (
    AnswerApproval,
    ForkTask,
    InputQueued,
    InputSteered,
    Interrupt,
    NewTask,
    RouteIdle,
    RouteReply,
    TaskOpened,
    TaskSettings,
    TurnBegan,
    TurnFinished,
    TurnUpdate,
    UserInput,
    UseTask,
)
from ._policy import Enqueue, Prompt, RouteState, RunCommand, Say, SteerRunningTurn, decide
from ._recovery import Recover, handle_recover, retry_prompt
from ._route_commands import run_command
from ._route_history import (
    Listing,
    ListingEntry,
    PendingReset,
    reset_failed,
    reset_opened,
    sessions_listed,
)
from ._route_tasks import fork_task, session_spec, use_task

__all__ = ["ConversationRoute"]

logger = logging.getLogger("robota.core.engine")

MAX_RETRIES = 3
"""Automatic retry turns after transient failures (rate limits, 5xx, cut streams)."""


# -- messages the route sends itself ---------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Queued:
    """A prompt was queued as ``prompt_id``, or could not be (``error``)."""

    text: str
    prompt_id: int = 0
    error: BaseException | None = None


@dataclass(frozen=True, slots=True)
class _NotRecorded:
    """A turn's attempt could not be written, so its prompt was never sent."""

    attempt_id: str
    error: BaseException


@dataclass(frozen=True, slots=True)
class _Claimed:
    """A final answer's ledger claim committed: ``won`` means it was delivered just now."""

    finished: TurnFinished
    won: bool
    error: BaseException | None = None


@dataclass(frozen=True, slots=True)
class _Taken:
    """The next queued prompt, already recorded as attempt ``attempt_id`` (or none)."""

    prompt: QueuedPrompt | None
    attempt_id: str
    task_id: str
    error: BaseException | None = None


@dataclass
class _Turn:
    attempt_id: str
    task_id: str
    prompt: str
    images: tuple[Path, ...]
    started: float
    retry_count: int = 0
    recovery: bool = False
    remote_turn_id: str | None = None
    finishing: bool = False
    """The agent ended the turn; its outcome is being written and the final claimed."""


class ConversationRoute(RouteActor[int]):
    """One route's conversation. Its state lives in the store; ``snapshot`` keeps only the
    count of inputs taken (``RouteIdle.inputs``) across a passivation."""

    def __init__(self, key: str, context: EngineContext) -> None:
        super().__init__(key)
        self.ctx = context
        self.task: Task | None = None
        self.turn: _Turn | None = None
        self.queued = 0
        self.steers: deque[str] = deque()
        self.opened: set[str] = set()
        """Tasks whose session this incarnation opened at the agent (``OpenSession`` sent)."""
        self.steering: dict[str, bool] = {}
        """Whether a task's agent takes input mid-turn, as its session announced."""
        self.listings: dict[str, Listing] = {}
        """``/sessions`` waiting for agents' thread lists, by request ref."""
        self.last_listing: list[ListingEntry] = []
        """What the last ``/sessions`` numbered, for ``/switch N``."""
        self.resetting: PendingReset | None = None
        self.taking = False
        """A queued prompt is being taken (and recorded as the next turn) in the store."""
        self.inputs = 0
        """``UserInput`` taken in this engine run (see ``RouteIdle.inputs``)."""
        self._db: Database | None = None

    # -- lifecycle -----------------------------------------------------------------------------

    def restore(self, state: int | None) -> None:
        self.inputs = state or 0
        self._db = open_reader(self.ctx.db_path, any_thread=True)
        binding = route_binding(self._db, self.key)
        if binding is not None and binding.current_task_id is not None:
            self.task = load_task(self._db, binding.current_task_id)
        self.queued = len(pending_prompts(self._db, self.key))
        self._reattach()

    def _reattach(self) -> None:
        """Take back the turn a previous incarnation (crashed, or passivated) left running at
        the agent in this engine run: its events reach this incarnation by the route key, so
        the turn ends here as if nothing happened. Attempts of an earlier run are recovery's."""
        for attempt in active_turn_attempts(self.db):
            if attempt.route_key != self.key or attempt.id not in self.ctx.running:
                continue
            images = tuple(Path(p) for p in attempt.images)
            self.turn = _Turn(
                attempt.id,
                attempt.task_id,
                attempt.prompt,
                images,
                time.monotonic(),
                attempt.retry_count,
                remote_turn_id=attempt.remote_turn_id,
            )
            agent = self.ctx.agents.get(self.task.agent) if self.task is not None else None
            if self.task is not None and agent is not None:
                self.steering[self.task.id] = agent.capabilities.steer
            logger.info("route %s: took back running turn %s", self.key, attempt.id)
            return

    def snapshot(self) -> int:
        return self.inputs

    def terminated(self, reason: object) -> None:  # noqa: ARG002
        # A running turn stays in ``ctx.running``: it still runs at the agent, and the next
        # incarnation takes it back (``_reattach``).
        if self._db is not None:
            self._db.close()
            self._db = None

    @property
    def db(self) -> Database:
        assert self._db is not None, "restore() opens the reader"
        return self._db

    # -- dispatch ------------------------------------------------------------------------------

    def receive(self, message: Any) -> None:
        match message:
            case UserInput():
                self._input(message)
            case SessionEvent():
                self._event(message)
            case _Queued():
                self._queued(message)
            case _NotRecorded():
                self._not_recorded(message)
            case _Claimed():
                self._final_claimed(message)
            case _Taken():
                self._taken(message)
            case SessionOpened():
                self._session_opened(message)
            case SessionsListed():
                sessions_listed(self, message)
            case Steered(key=key):
                if self.task is not None and key == self.task.id and self.steers:
                    attempt = self.turn.attempt_id if self.turn else ""
                    self.say(InputSteered(self.key, attempt, self.steers.popleft()))
            case SteerRefused():
                self._steer_refused(message)
            case TurnRefused():
                self._refused(message)
            case TurnAccepted():
                pass  # the turn's id came with its TurnStarted event already
            case AgentFailure():
                self._agent_failure(message)
            case Interrupt():
                self.interrupt()
            case AnswerApproval(approval_id=approval_id, decision=decision):
                if self.task is not None:
                    self.agent().tell(DecideApproval(self.task.id, approval_id, decision))
            case NewTask(settings=settings, announce=announce):
                self.new_task(settings, announce=announce)
            case UseTask(task_id=task_id):
                use_task(self, task_id)
            case ForkTask(task_id=task_id, title=title):
                fork_task(self, task_id, title)
            case Recover():
                handle_recover(self, message)
            case _:
                logger.warning("route %s: ignored %s", self.key, type(message).__name__)

    # -- talking -------------------------------------------------------------------------------

    def say(self, notice: object) -> None:
        self.ctx.outputs.deliver(self.key, notice)

    def reply(self, text: str, *, error: bool = False) -> None:
        self.say(RouteReply(self.key, text, "error" if error else "info"))

    def write(self, op: WriteOp[Any]) -> None:
        """Submit ``op``, nobody waiting for it: a failure is logged."""
        key = self.key

        def logged(outcome: object) -> None:
            if isinstance(outcome, BaseException):
                logger.error("route %s: %s failed: %s", key, type(op).__name__, outcome)

        self.ctx.store.submit(op, logged)

    # -- input ---------------------------------------------------------------------------------

    def state(self) -> RouteState:
        turn = self.turn
        running = None
        if turn is not None and not turn.finishing:
            running = turn.remote_turn_id
        return RouteState(
            has_task=self.task is not None,
            running_turn=running,
            agent_steers=self.task is not None and self.steering.get(self.task.id, False),
            queued=self.queued,
            busy=turn is not None or self.taking,
        )

    def _input(self, message: UserInput) -> None:
        self.inputs += 1
        self._handle_input(message)
        self.maybe_idle()

    def maybe_idle(self) -> None:
        """Say ``RouteIdle`` when nothing runs, waits in the queue or waits for an agent."""
        if self.turn or self.taking or self.queued or self.listings or self.resetting:
            return
        self.say(RouteIdle(self.key, self.inputs))

    def _handle_input(self, message: UserInput) -> None:
        decision = decide(self.state(), message.text)
        match decision:
            case Say(text=text):
                self.reply(text, error=True)
            case RunCommand(invocation=invocation):
                run_command(self, invocation)
            case Prompt(text=text, new_task=new_task):
                if new_task:
                    self.new_task(TaskSettings(), announce=False)
                self.begin(text, message.images)
            case SteerRunningTurn(turn_id=turn_id, text=text):
                assert self.task is not None
                self.steers.append(text)
                self.agent().tell(SteerTurn(self.task.id, turn_id, text))
            case Enqueue(text=text, front=front):
                self.enqueue(text, front=front)

    def enqueue(self, text: str, *, front: bool = False) -> None:
        task_id = self.task.id if self.task is not None else None
        route, key = self.ctx.route, self.key

        def queued(outcome: object) -> None:
            if isinstance(outcome, BaseException):
                route(key, _Queued(text, error=outcome))
            else:
                route(key, _Queued(text, cast(int, outcome)))

        self.ctx.store.submit(EnqueuePrompt(key, text, task_id=task_id, front=front), queued)

    # -- tasks ---------------------------------------------------------------------------------

    def agent(self, name: str | None = None) -> Mailbox:
        wanted = name or (self.task.agent if self.task is not None else self.ctx.defaults.agent)
        entry = self.ctx.agents.get(wanted)
        if entry is None:
            raise LookupError(f"agent {wanted!r} is not configured")
        return entry.address

    def new_task(self, settings: TaskSettings, *, announce: bool = True) -> Task | None:
        if self.turn is not None:
            self.reply("a turn is running: /stop it first, or wait", error=True)
            return None
        defaults = self.ctx.defaults
        agent = settings.agent or (self.task.agent if self.task else defaults.agent)
        if agent not in self.ctx.agents:
            known = ", ".join(sorted(self.ctx.agents)) or "none"
            self.reply(f"no agent {agent!r} (configured: {known})", error=True)
            return None
        cwd = settings.cwd or (Path(self.task.cwd) if self.task else defaults.cwd)
        task = self.ctx.fresh_task(
            agent,
            cwd,
            title=settings.title,
            model=settings.model or defaults.model,
            permission_mode=settings.permission_mode or defaults.permission_mode,
            developer_instructions=settings.developer_instructions,
        )
        self.bind_task(task, create=True)
        if announce:
            self.reply(f"new task {task.id}: {task.agent} in {task.cwd}")
        return task

    def bind_task(self, task: Task, *, create: bool) -> None:
        previous = self.task
        if previous is not None and previous.id != task.id and previous.id in self.opened:
            self.agent(previous.agent).tell(CloseSession(previous.id))
            self.opened.discard(previous.id)
        if create:
            self.write(
                CreateTask(
                    id=task.id,
                    agent=task.agent,
                    cwd=task.cwd,
                    runtime_kind=task.runtime_kind,
                    title=task.title,
                    model=task.model,
                    permission_mode=task.permission_mode,
                    forked_from=task.forked_from,
                    fork_turn_id=task.fork_turn_id,
                    developer_instructions=task.developer_instructions,
                    effort=task.effort,
                    provider=task.provider,
                    remote_id=task.remote_id,
                    at=task.created_at,
                )
            )
        self.write(BindRouteTask(self.key, task.id))
        self.task = task

    def open_session(self, task: Task) -> None:
        """Open the task's session at its agent; harmless when it is open already (the agent
        rebinds it to this route), which is how a restarted route takes its session back."""
        if task.id in self.opened:
            return
        self.opened.add(task.id)
        self._tell_spec(task)

    def update_session(self, task: Task) -> None:
        """Give an open session the task's new settings (a closed one gets them when it opens)."""
        if task.id in self.opened:
            self._tell_spec(task)

    def _tell_spec(self, task: Task) -> None:
        self.agent(task.agent).tell(
            OpenSession(task.id, session_spec(self, task), self.self_deliver())
        )

    def _session_opened(self, opened: SessionOpened) -> None:
        task = self.task
        if task is None or opened.key != task.id:
            return
        agent = self.ctx.agents.get(task.agent)
        declared = agent.capabilities if agent is not None else AgentCapabilities()
        self.steering[task.id] = declared.refined(opened.capabilities).steer
        if reset_opened(self, opened):
            return
        if task.remote_id != opened.session_id:
            self.write(UpdateTask(task.id, remote_id=opened.session_id))
            self.task = replace(task, remote_id=opened.session_id)
        self.say(
            TaskOpened(
                self.key,
                task.id,
                task.agent,
                task.cwd,
                opened.session_id,
                resumed=opened.resumed,
                forked_from=task.forked_from,
                agent_version=opened.agent_version,
            )
        )

    # -- turns ---------------------------------------------------------------------------------

    def begin(
        self,
        text: str,
        images: tuple[Path, ...] = (),
        *,
        retry_count: int = 0,
        recovery: bool = False,
        along: tuple[WriteOp[object], ...] = (),
    ) -> None:
        """Start a turn: record its attempt, and only then send the prompt. ``along`` are
        writes committed with the attempt, all or none (what the new turn takes over from)."""
        if self.task is None:
            self.new_task(TaskSettings(), announce=False)
        task = self.task
        if task is None:
            return
        turn = _Turn(
            new_attempt_id(), task.id, text, images, time.monotonic(), retry_count, recovery
        )
        self.turn = turn
        self.open_session(task)
        insert = InsertTurnAttempt(
            id=turn.attempt_id,
            task_id=task.id,
            route_key=self.key,
            prompt=text,
            images=tuple(str(p) for p in images),
            retry_count=retry_count,
            parent_id=task.head_attempt_id,
        )
        dispatch, route, key = self._dispatcher(task, turn), self.ctx.route, self.key
        attempt_id = turn.attempt_id

        def recorded(outcome: object) -> None:
            if isinstance(outcome, BaseException):
                route(key, _NotRecorded(attempt_id, outcome))
            else:
                dispatch()

        self.ctx.store.submit(Together((*along, insert)) if along else insert, recorded)

    def _dispatcher(self, task: Task, turn: _Turn) -> Callable[[], None]:
        """What tells the front end a recorded turn began and sends its prompt, safe to call
        from any thread (the writer's). Told before the commit, the front end's thread would
        take the interpreter from the writer, whose commit the prompt waits for; told after the
        prompt, the turn's first events could reach the front end before it."""
        running, agent, attempt_id = self.ctx.running, self.agent(task.agent), turn.attempt_id
        outputs, key = self.ctx.outputs, self.key
        start = StartTurn(task.id, turn.prompt, turn.images)
        began = TurnBegan(key, task.id, attempt_id, turn.prompt, recovery=turn.recovery)

        def dispatch() -> None:
            running.add(attempt_id)
            outputs.deliver(key, began)
            agent.tell(start)

        return dispatch

    def _not_recorded(self, failed: _NotRecorded) -> None:
        turn = self.turn
        if turn is None or turn.attempt_id != failed.attempt_id:
            return
        self._finish_locally(turn, "failed", f"the turn could not be recorded: {failed.error}")

    def _event(self, message: SessionEvent) -> None:
        turn = self.turn
        if turn is None or turn.task_id != message.key or turn.finishing:
            logger.debug("route %s: event outside a turn: %s", self.key, message.event)
            return
        event = message.event
        if isinstance(event, TurnStarted):
            turn.remote_turn_id = event.turn_id
            session = self.task.remote_id if self.task is not None else None
            self.write(
                UpdateTurnAttempt(
                    turn.attempt_id,
                    "running",
                    remote_turn_id=event.turn_id,
                    remote_session_id=session,
                )
            )
        update = TurnUpdate(self.key, turn.task_id, turn.attempt_id, event)
        if isinstance(event, TurnCompleted):
            # Said with the final answer, after the outcome's commit: said now, it would wake
            # the front end's thread, which then holds the interpreter while this one still
            # builds the writes the final waits for.
            self._finish(turn, event, update)
            return
        self.say(update)

    def _finish(
        self, turn: _Turn, completed: TurnCompleted, update: TurnUpdate | None = None
    ) -> None:
        turn.finishing = True
        self.ctx.running.discard(turn.attempt_id)
        status = completed.status if completed.status in ("completed", "interrupted") else "failed"
        usage = completed.usage
        self.write(
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
            self.key,
            turn.task_id,
            turn.attempt_id,
            cast(Any, status),
            completed.final_text,
            completed.error,
            usage,
            completed.turn_id,
            int((time.monotonic() - turn.started) * 1000),
        )
        self.claim_final(finished, before=() if update is None else (update,))
        if status == "completed" and self.task is not None and self.task.id == turn.task_id:
            self.task = replace(self.task, head_attempt_id=turn.attempt_id)

    def _finish_locally(self, turn: _Turn, status: str, message: str) -> None:
        """End a turn the agent never ran (refused, could not be recorded, agent failed)."""
        error = TurnError(message, "unknown", retryable=False)
        self._finish(turn, TurnCompleted(turn.remote_turn_id or "", cast(Any, status), error))

    def claim_final(self, finished: TurnFinished, before: tuple[object, ...] = ()) -> None:
        """Claim ``finished`` in the delivery ledger; the claim that wins delivers it, from the
        writer's thread right after the commit, after the notices ``before`` (said whatever
        the claim's outcome). The route hears of it as ``_Claimed``."""
        outputs, route, key = self.ctx.outputs, self.ctx.route, self.key

        def claimed(outcome: object) -> None:
            for notice in before:
                outputs.deliver(key, notice)
            if isinstance(outcome, BaseException):
                route(key, _Claimed(finished, won=False, error=outcome))
                return
            if outcome is True:
                outputs.deliver(key, finished)
            route(key, _Claimed(finished, won=outcome is True))

        self.ctx.store.submit(RecordFinalDelivery(finished.attempt_id), claimed)

    def _final_claimed(self, claimed: _Claimed) -> None:
        finished = claimed.finished
        if claimed.error is not None:
            logger.error("route %s: final delivery ledger failed: %s", self.key, claimed.error)
        turn = self.turn
        if turn is None:
            self.next_prompt()  # a recovered final: the route is idle unless prompts wait
            return
        if turn.attempt_id != finished.attempt_id:
            return
        self.turn = None
        self.steers.clear()
        error = finished.error
        if (
            finished.status == "failed"
            and error is not None
            and error.retryable
            and turn.retry_count < MAX_RETRIES
        ):
            attempt = turn.retry_count + 1
            self.reply(f"{error.message}: retrying ({attempt} of {MAX_RETRIES})")
            self.begin(retry_prompt(turn.prompt, attempt), turn.images, retry_count=attempt)
            return
        self.next_prompt()

    def next_prompt(self) -> None:
        if self.turn is not None or self.taking:
            return
        if self.queued <= 0:
            self.maybe_idle()
            return
        if self.task is None:
            self.new_task(TaskSettings(), announce=False)
        task = self.task
        if task is None:
            return
        # Taking the prompt and recording its attempt are one write: a crash in between would
        # otherwise lose a prompt that is no longer pending and not yet a turn.
        self.taking = True
        attempt_id = new_attempt_id()
        route, key = self.ctx.route, self.key

        def taken(outcome: object) -> None:
            if isinstance(outcome, BaseException):
                route(key, _Taken(None, attempt_id, task.id, outcome))
            else:
                route(key, _Taken(cast(QueuedPrompt | None, outcome), attempt_id, task.id))

        op = TakeQueuedTurn(self.key, attempt_id, task.id, parent_id=task.head_attempt_id)
        self.ctx.store.submit(op, taken)

    def _taken(self, message: _Taken) -> None:
        self.taking = False
        if message.error is not None:
            self.reply(f"could not take the next queued prompt: {message.error}", error=True)
            return
        prompt = message.prompt
        if prompt is None:
            self.queued = 0
            self.maybe_idle()
            return
        self.queued = max(0, self.queued - 1)
        images = tuple(Path(p) for p in prompt.images)
        turn = _Turn(message.attempt_id, message.task_id, prompt.text, images, time.monotonic())
        self.turn = turn
        task = self.task
        if task is None or task.id != turn.task_id:
            self._finish_locally(turn, "failed", "the task of the queued prompt is not current")
            return
        self.open_session(task)
        self._dispatcher(task, turn)()

    def interrupt(self) -> None:
        if self.turn is None or self.task is None:
            self.reply("no turn is running")
            return
        self.agent(self.task.agent).tell(InterruptTurn(self.task.id))

    # -- acknowledgements and agent notices ----------------------------------------------------

    def _queued(self, queued: _Queued) -> None:
        if queued.error is not None:
            self.reply(f"could not queue the prompt: {queued.error}", error=True)
            return
        self.queued += 1
        self.say(InputQueued(self.key, queued.prompt_id, queued.text, self.queued - 1))
        if self.turn is None:
            self.next_prompt()

    def _steer_refused(self, refused: SteerRefused) -> None:
        if self.task is None or refused.key != self.task.id:
            return
        if self.steers and self.steers[0] == refused.text:
            self.steers.popleft()
        if refused.reason == "unsupported":
            self.steering[self.task.id] = False
        self.enqueue(refused.text, front=refused.reason == "ended")

    def _refused(self, refused: TurnRefused) -> None:
        turn = self.turn
        if turn is None or refused.key != turn.task_id or turn.finishing:
            return
        self._finish_locally(turn, "failed", refused.message)

    def _agent_failure(self, failure: AgentFailure) -> None:
        self.reply(f"agent: {failure.request} failed: {failure.message}", error=True)
        if failure.request == "open" and self.task is not None:
            self.opened.discard(self.task.id)
            reset_failed(self)

    def self_deliver(self) -> Callable[[object], None]:
        """Where agents send what they answer this route (its sessions' notices too)."""
        return _route_deliver(self.ctx.route, self.key)


def _route_deliver(route: Callable[[str, object], None], key: str) -> Callable[[object], None]:
    def deliver(notice: object) -> None:
        route(key, notice)

    return deliver


def _usage_json(usage: Usage) -> dict[str, JSONValue]:
    # Not ``asdict``: it deep-copies, and this runs on every turn's way to its final answer.
    values = ((f.name, getattr(usage, f.name)) for f in fields(usage))
    return {name: value for name, value in values if value is not None}
