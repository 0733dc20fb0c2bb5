"""The conversation route's decisions as a pure state machine: a message in, effects out.

A route has a current task (one agent, one working directory, one agent session) and runs one
turn at a time on it. What the person types becomes a prompt, a steer, a queued prompt or a
command (``_policy.decide``); what the agent says comes back as notices and goes to the route's
front end. ``RouteCore`` holds the route's state (``RouteData``) and, for each message the route
receives, changes it and returns the effects its shell is to perform, in order (see
``_route_effects``); it reads committed store state through the ``RouteReads`` port, and takes
its ids and clocks from ``IdsAndClocks``. It does no I/O and starts no thread, so a test drives
it with tables of message -> effects.

Text typed while a turn runs steers it where the agent can (``AgentCapabilities.steer``, as its
session reported) and is queued otherwise; a steer that lost the race with the turn's end is
queued first in line. The turn's own order is ``_route_turns``'s; who may answer an approval,
and what becomes of one nobody can answer, is ``_route_surfaces``'s.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path

from .._records import replace
from ..agents import (
    AgentFailure,
    SessionEvent,
    SessionOpened,
    SessionsListed,
    Steered,
    SteerRefused,
    SteerTurn,
    TurnAccepted,
    TurnRefused,
)
from ..store import ConsumeInbox, UpdateTask
from . import _route_surfaces as surfaces
from ._context import AgentEntry, TaskDefaults
from ._notices import TaskOpened
from ._policy import Enqueue, Prompt, RunCommand, Say, SteerRunningTurn, decide
from ._recovery import Recover, handle_recover
from ._requests import (
    AnswerApproval,
    ForkTask,
    Interrupt,
    LetTaskGo,
    NewTask,
    RouteNote,
    SurfaceJoined,
    SurfaceLeft,
    TaskSettings,
    UserInput,
    UseTask,
)
from ._route_commands import run_command
from ._route_effects import (
    AttemptNotRecorded,
    Effect,
    FinalClaimed,
    Log,
    PromptQueued,
    QueuedTaken,
    RouteReads,
    Tell,
)
from ._route_history import reset_failed, reset_opened, sessions_listed
from ._route_let_go import let_go
from ._route_state import IdsAndClocks, Kept, Restored, RouteData, Turn
from ._route_tasks import fork_task, projectless_cwd, use_task
from ._route_turns import (
    begin,
    enqueue,
    event,
    final_claimed,
    interrupt,
    not_recorded,
    queued,
    refused,
    steer_refused,
    steered,
    taken,
    took_back,
)

__all__ = ["RouteCore"]


class RouteCore:
    """One route's decisions; see the module docstring. Not thread-safe: the shell's actor
    thread drives it, one message at a time."""

    def __init__(
        self,
        key: str,
        agents: Mapping[str, AgentEntry],
        defaults: TaskDefaults,
        reads: RouteReads,
        *,
        restored: Restored | None = None,
        human_approves: bool = True,
        ids: IdsAndClocks | None = None,
        restricted: Callable[[Path], bool] | None = None,
    ) -> None:
        self.state = RouteData(
            key,
            agents,
            defaults,
            reads,
            human_approves=human_approves,
            ids=ids,
            restricted=restricted,
        )
        self._restored = restored if restored is not None else Restored()

    @property
    def settled(self) -> bool:
        """Whether the route has nothing in flight (``RouteData.settled``)."""
        return self.state.settled

    @property
    def inputs(self) -> int:
        """``UserInput`` taken in this engine run."""
        return self.state.inputs

    def kept(self) -> Kept:
        """What the route keeps across a passivation (the rest is in the store)."""
        route = self.state
        return Kept(
            route.inputs,
            tuple(route.surfaces.items()),
            route.attended,
            tuple(route.approvals.values()),
            tuple(route.answered.items()),
            tuple(route.resolved.items()),
            tuple(route.last_listing),
        )

    def start(self) -> list[Effect]:
        """The first call of every incarnation: continue from what was restored."""
        route, restored = self.state, self._restored
        route.inputs = restored.inputs
        kept = restored.kept
        if kept is not None:
            route.inputs = kept.inputs
            route.surfaces = dict(kept.surfaces)
            route.attended = kept.attended
            route.approvals = {a.approval_id: a for a in kept.approvals}
            route.answered = dict(kept.answered)
            route.resolved = dict(kept.resolved)
            route.last_listing = list(kept.last_listing)
        route.task = restored.task
        route.pending = list(restored.pending)
        attempt = restored.running
        if attempt is not None:
            images = tuple(Path(p) for p in attempt.images)
            turn = Turn(
                attempt.id,
                attempt.task_id,
                attempt.prompt,
                images,
                route.ids.monotonic(),
                attempt.retry_count,
                remote_turn_id=attempt.remote_turn_id,
            )
            took_back(route, turn)
        return self._drain()

    def handle(self, message: object) -> list[Effect]:
        """What ``message`` changes, and the effects to perform, in order."""
        self._receive(message)
        return self._drain()

    def _drain(self) -> list[Effect]:
        effects = self.state.effects
        self.state.effects = []
        return effects

    def _receive(self, message: object) -> None:
        route = self.state
        match message:
            case UserInput():
                route.inputs += 1
                self._input(message)
                route.maybe_idle()
            case SessionEvent(key=key, event=runtime_event):
                event(route, key, surfaces.observe(route, runtime_event))
                surfaces.settle_unattended(route, runtime_event)
            case PromptQueued():
                queued(route, message)
            case AttemptNotRecorded():
                not_recorded(route, message)
            case FinalClaimed():
                final_claimed(route, message)
            case QueuedTaken():
                taken(route, message)
            case SessionOpened():
                self._session_opened(message)
            case SessionsListed():
                sessions_listed(route, message)
            case Steered(key=key):
                steered(route, key)
            case SteerRefused():
                steer_refused(route, message)
            case TurnRefused():
                refused(route, message)
            case TurnAccepted():
                pass  # the turn's id came with its TurnStarted event already
            case AgentFailure():
                self._agent_failure(message)
            case Interrupt():
                interrupt(route)
            case AnswerApproval() | SurfaceJoined() | SurfaceLeft():
                surfaces.handle(route, message)
            case NewTask(settings=settings, announce=announce):
                if settings.nodir:
                    settings = replace(settings, cwd=projectless_cwd(route), nodir=False)
                route.new_task(settings, announce=announce)
            case RouteNote(text=text, level=level):
                route.reply(text, error=level == "error")
            case UseTask() | LetTaskGo():
                self._held_task(message)
            case ForkTask(task_id=task_id, title=title, turn_id=turn_id, prompt=prompt):
                if fork_task(route, task_id, title, turn_id) and prompt is not None:
                    self._input(prompt)
            case Recover():
                handle_recover(route, message)
            case _:
                route.emit(Log("warning", f"route {route.key}: ignored {type(message).__name__}"))

    def _held_task(self, message: UseTask | LetTaskGo) -> None:
        """An existing task made current (``UseTask``), or its session let go (``LetTaskGo``)."""
        if isinstance(message, UseTask):
            use_task(self.state, message.task_id)
        else:
            let_go(self.state, message)

    def _input(self, message: UserInput) -> None:
        """``message`` decided; a chat message's inbox row is consumed by the write that gives
        it its effect: the turn's attempt, the queued prompt, or (a reply, a command, a steer)
        a write of its own, the steer's naming the turn it went into."""
        route, inbox = self.state, message.inbox
        decision = decide(route.policy_state(), message.text)
        refusal = _immobile(route, decision)
        if refusal is not None:
            decision = Say(refusal)
        match decision:
            case Say(text=text):
                route.reply(text, error=True)
                if inbox is not None:
                    route.write(ConsumeInbox(inbox))
            case RunCommand(invocation=invocation):
                if inbox is not None:
                    route.write(ConsumeInbox(inbox))
                run_command(route, invocation)
            case Prompt(text=text, new_task=new_task):
                if new_task:
                    route.new_task(TaskSettings(), announce=False)
                begin(route, text, message.images, inbox=inbox, message_id=message.message_id)
            case SteerRunningTurn(turn_id=turn_id, text=text):
                assert route.task is not None
                if inbox is not None and route.turn is not None:
                    route.write(ConsumeInbox(inbox, route.turn.attempt_id))
                route.steers.append((text, message.message_id))
                route.emit(Tell(route.task.agent, SteerTurn(route.task.id, turn_id, text)))
            case Enqueue(text=text, front=front):
                enqueue(route, text, front=front, inbox=inbox, message_id=message.message_id)

    def _agent_failure(self, failure: AgentFailure) -> None:
        route = self.state
        turn = route.turn
        # A session that could not open under a waiting turn fails that turn with the same
        # reason (the agent refuses its prompt), and the turn's error is what the front end
        # shows; said here too, the person would read it twice.
        told_by_turn = (
            failure.request == "open"
            and turn is not None
            and turn.task_id == failure.key
            and not turn.finishing
        )
        if not told_by_turn:
            route.reply(f"agent: {failure.request} failed: {failure.message}", error=True)
        if failure.request == "open" and route.task is not None:
            route.opened.discard(route.task.id)
            reset_failed(route)

    def _session_opened(self, opened: SessionOpened) -> None:
        route = self.state
        task = route.task
        if task is None or opened.key != task.id:
            return
        route.capabilities[task.id] = route.declared(task.agent).refined(opened.capabilities)
        if reset_opened(route, opened):
            return
        if task.remote_id != opened.session_id:
            route.write(UpdateTask(task.id, remote_id=opened.session_id))
            route.task = replace(task, remote_id=opened.session_id)
        route.say(
            TaskOpened(
                route.key,
                task.id,
                task.agent,
                task.cwd,
                opened.session_id,
                resumed=opened.resumed,
                forked_from=task.forked_from,
                agent_version=opened.agent_version,
            )
        )


def _immobile(route: RouteData, decision: object) -> str | None:
    """Why input that would reach the current task is refused: a handoff moves it, moved it
    or holds it (the one place a task's input is admitted, so a chat's message, a ``task
    send``, a print-mode prompt and a background session's all meet it); commands pass."""
    if route.task is None or not isinstance(decision, Prompt | SteerRunningTurn | Enqueue):
        return None
    if isinstance(decision, Prompt) and decision.new_task:
        return None
    return route.reads.immobile(route.task.id)
