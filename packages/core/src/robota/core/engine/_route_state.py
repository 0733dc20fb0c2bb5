"""A route's state, and the few moves every handler of the core makes on it.

``RouteData`` is what a conversation route knows between two messages: its current task, the
running turn, the prompts it knows are queued, the steers in flight, the sessions it opened,
what each task's agent can do, and the ``/sessions`` and reset waiting for agents. Every handler
of the core (``_route_turns``, ``_route_tasks``, ``_route_history``, ``_recovery``,
``_route_commands``) is a function of it; they change it directly, and they do I/O only by
appending effects (``emit``), which ``RouteCore.handle`` hands to the shell. The moves shared by
all of them live here: talking, binding a task, opening its session.

Derived state is derived: the queue's length is ``len(pending)``, the prompt ids this route
knows are pending (read on activation, added when a queueing commits, removed when one is taken
or cancelled); the policy's view (``policy_state``) is computed from the fields, never kept.
"""

from __future__ import annotations

import time
import uuid
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from .._capabilities import AgentCapabilities
from ..agents import PERMISSION_MODES, AgentSessionInfo, CloseSession, SessionSpec
from ..events import ApprovalRequested
from ..store import BindRouteTask, CreateTask, Task, TurnAttempt, WriteOp
from ._context import AgentEntry, TaskDefaults, new_attempt_id, new_task_id
from ._messages import RouteIdle, RouteReply, TaskSettings
from ._policy import RouteState
from ._route_effects import Effect, Notify, OpenAgentSession, RouteReads, Tell, Write

__all__ = [
    "IdsAndClocks",
    "Listing",
    "ListingEntry",
    "PendingReset",
    "Restored",
    "RouteData",
    "Turn",
]

BUSY = "a turn is running: /stop it first, or wait"


@dataclass(frozen=True, slots=True)
class IdsAndClocks:
    """Where the core gets new ids and the time: injected, so a table test is deterministic."""

    attempt_id: Callable[[], str] = new_attempt_id
    task_id: Callable[[], str] = new_task_id
    ref: Callable[[], str] = lambda: uuid.uuid4().hex
    """A request's reference (``ListSessions``)."""
    monotonic: Callable[[], float] = time.monotonic
    """For a turn's duration."""
    wall: Callable[[], float] = time.time
    """For records' timestamps (a task's creation) and today's date."""


@dataclass
class Turn:
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


@dataclass(frozen=True, slots=True)
class Restored:
    """What the shell read from the store when the route activated."""

    task: Task | None = None
    pending: tuple[int, ...] = ()
    """Ids of the route's pending queued prompts."""
    running: TurnAttempt | None = None
    """The route's attempt a previous incarnation left running at the agent in this engine run
    (crashed, or passivated): its events reach this incarnation, which takes it back."""
    inputs: int = 0
    kept: Kept | None = None
    """What the previous incarnation of this engine run kept (``RouteCore.kept``)."""


@dataclass(frozen=True, slots=True)
class Kept:
    """What a route keeps across a passivation, beside the store: its input count and who shows
    it (``_route_surfaces``): the surfaces joined and the approvals they may still answer."""

    inputs: int = 0
    surfaces: tuple[tuple[str, bool], ...] = ()
    attended: bool = False
    approvals: tuple[ApprovalRequested, ...] = ()
    answered: tuple[tuple[str, str | None], ...] = ()
    resolved: tuple[tuple[str, str | None], ...] = ()
    last_listing: tuple[ListingEntry, ...] = ()
    """What the last ``/sessions`` numbered: a ``/switch N`` typed after a quiet passivation
    means the list the person read."""


@dataclass(frozen=True, slots=True)
class ListingEntry:
    """One line of ``/sessions``: a robota task, or an agent's thread robota has no task for."""

    agent: str
    updated_at: float
    task: Task | None = None
    thread: AgentSessionInfo | None = None


@dataclass
class Listing:
    """A ``/sessions`` waiting for its agents."""

    search: str | None
    page: int
    waiting: set[str]
    threads: list[tuple[str, AgentSessionInfo]] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class PendingReset:
    """A reset whose fork the agent has not opened yet."""

    task_id: str
    attempt: TurnAttempt
    thread: str


class RouteData:
    """One route's state and its outbox of effects; see the module docstring."""

    def __init__(
        self,
        key: str,
        agents: Mapping[str, AgentEntry],
        defaults: TaskDefaults,
        reads: RouteReads,
        *,
        human_approves: bool = True,
        ids: IdsAndClocks | None = None,
        restricted: Callable[[Path], bool] | None = None,
    ) -> None:
        self.key = key
        self._restricted = restricted
        self.agents = agents
        self.defaults = defaults
        self.reads = reads
        self.human_approves = human_approves
        self.ids = ids if ids is not None else IdsAndClocks()
        self.task: Task | None = None
        self.turn: Turn | None = None
        self.pending: list[int] = []
        """Ids of the queued prompts this route knows are pending, in no promised order."""
        self.steers: deque[str] = deque()
        self.opened: set[str] = set()
        self.session_restricted: dict[str, bool] = {}
        """Whether each task's session was last opened Restricted (see ``check_restriction``)."""
        """Tasks whose session this incarnation opened at the agent (``OpenSession`` sent)."""
        self.capabilities: dict[str, AgentCapabilities] = {}
        """What each task's agent session can do, once it opened (or was taken back)."""
        self.listings: dict[str, Listing] = {}
        """``/sessions`` waiting for agents' thread lists, by request ref."""
        self.last_listing: list[ListingEntry] = []
        """What the last ``/sessions`` numbered, for ``/switch N``."""
        self.resetting: PendingReset | None = None
        self.taking = False
        """A queued prompt is being taken (and recorded as the next turn) in the store."""
        self.inputs = 0
        """``UserInput`` taken in this engine run (see ``RouteIdle.inputs``)."""
        self.surfaces: dict[str, bool] = {}
        """Joined surfaces (``SurfaceJoined``): whether each drives (``_route_surfaces``)."""
        self.attended = False
        """Some surface has joined: approvals need a driving surface to be asked."""
        self.approvals: dict[str, ApprovalRequested] = {}
        """The agent's approvals not resolved yet, by id."""
        self.answered: dict[str, str | None] = {}
        """Approvals answered (sent to the agent) and not resolved yet: who answered."""
        self.resolved: dict[str, str | None] = {}
        """Recently resolved approvals (oldest first, bounded): who answered."""
        self.effects: list[Effect] = []

    # -- effects -------------------------------------------------------------------------------

    def emit(self, effect: Effect) -> None:
        self.effects.append(effect)

    def say(self, notice: object) -> None:
        self.effects.append(Notify(notice))

    def reply(self, text: str, *, error: bool = False) -> None:
        self.effects.append(Notify(RouteReply(self.key, text, "error" if error else "info")))

    def write(self, op: WriteOp[object]) -> None:
        """Write ``op``, nobody waiting for it: a failure is logged."""
        self.effects.append(Write(op))

    # -- derived -------------------------------------------------------------------------------

    @property
    def queued(self) -> int:
        return len(self.pending)

    def agent_name(self) -> str:
        """The agent requests go to: the current task's, else the default one."""
        return self.task.agent if self.task is not None else self.defaults.agent

    def declared(self, agent: str) -> AgentCapabilities:
        entry = self.agents.get(agent)
        return entry.capabilities if entry is not None else AgentCapabilities()

    def can(self, task: Task) -> AgentCapabilities:
        """What ``task``'s agent can do: as its session reported, else as its plugin declares."""
        return self.capabilities.get(task.id) or self.declared(task.agent)

    def policy_state(self) -> RouteState:
        turn = self.turn
        running = None
        if turn is not None and not turn.finishing:
            running = turn.remote_turn_id
        task = self.task
        known = self.capabilities.get(task.id) if task is not None else None
        return RouteState(
            has_task=task is not None,
            running_turn=running,
            agent_steers=known is not None and known.steer,
            queued=len(self.pending),
            busy=turn is not None or self.taking,
        )

    @property
    def working(self) -> bool:
        """A turn runs, a prompt is queued or being taken, or an agent's listing or reset is
        awaited: the route is not idle (``maybe_idle``)."""
        return bool(self.turn or self.taking or self.pending or self.listings or self.resetting)

    @property
    def settled(self) -> bool:
        """Nothing in flight: not ``working``, no steer, no approval open or answered. What
        such a route holds is in ``Kept`` and the store, so it may passivate after a short
        quiet (the directory's ``quiet_after``) instead of its long ``idle_after``."""
        return not (self.working or self.steers or self.approvals or self.answered)

    def maybe_idle(self) -> None:
        """Say ``RouteIdle`` when nothing runs, waits in the queue or waits for an agent."""
        if not self.working:
            self.say(RouteIdle(self.key, self.inputs))

    # -- tasks ---------------------------------------------------------------------------------

    def fresh_task(
        self,
        agent: str,
        cwd: Path | str,
        *,
        remote_id: str | None = None,
        title: str | None = None,
        model: str | None = None,
        permission_mode: str | None = None,
        developer_instructions: str | None = None,
    ) -> Task:
        """A task not yet stored, created now, with a new id."""
        created = self.ids.wall()
        return Task(
            id=self.ids.task_id(),
            agent=agent,
            cwd=str(cwd),
            runtime_kind=self.agents[agent].kind,
            remote_id=remote_id,
            title=title,
            model=model,
            effort=None,
            permission_mode=permission_mode,
            provider=None,
            forked_from=None,
            fork_turn_id=None,
            developer_instructions=developer_instructions,
            last_turn_id=None,
            last_turn_status=None,
            created_at=created,
            updated_at=created,
        )

    def new_task(self, settings: TaskSettings, *, announce: bool = True) -> Task | None:
        if self.turn is not None:
            self.reply(BUSY, error=True)
            return None
        defaults = self.defaults
        agent = settings.agent or (self.task.agent if self.task else defaults.agent)
        if agent not in self.agents:
            known = ", ".join(sorted(self.agents)) or "none"
            self.reply(f"no agent {agent!r} (configured: {known})", error=True)
            return None
        cwd = settings.cwd or (Path(self.task.cwd) if self.task else defaults.cwd)
        task = self.fresh_task(
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
            self.emit(Tell(previous.agent, CloseSession(previous.id)))
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

    # -- sessions ------------------------------------------------------------------------------

    def open_session(self, task: Task) -> None:
        """Open the task's session at its agent; harmless when it is open already (the agent
        rebinds it to this route), which is how a restarted route takes its session back."""
        if task.id in self.opened:
            return
        self.opened.add(task.id)
        self.emit(OpenAgentSession(task.agent, task.id, self.session_spec(task)))

    def update_session(self, task: Task) -> None:
        """Give an open session the task's new settings (a closed one gets them when it opens)."""
        if task.id in self.opened:
            self.emit(OpenAgentSession(task.agent, task.id, self.session_spec(task)))

    def restricted(self, task: Task) -> bool:
        """Whether ``task``'s directory runs Restricted (the engine's trust hook)."""
        return self._restricted is not None and self._restricted(Path(task.cwd))

    def check_restriction(self, task: Task) -> bool:
        """Whether ``task`` runs Restricted now. A session opened before its workspace's
        trust changed (trusted, revoked) gets the new permission mode before the turn."""
        now = self.restricted(task)
        if task.id in self.opened and self.session_restricted.get(task.id, now) != now:
            self.update_session(task)
        return now

    def session_spec(self, task: Task) -> SessionSpec:
        """What ``task``'s agent session opens with: resumed, forked, or reset to a turn; a
        Restricted directory's always with permission mode ``plan``."""
        mode = task.permission_mode if task.permission_mode in PERMISSION_MODES else "default"
        restricted = self.session_restricted[task.id] = self.restricted(task)
        if restricted:
            mode = "plan"
        resume_id, fork_from, fork_turn_id = task.remote_id, None, task.fork_turn_id
        reset = self.resetting
        if reset is not None and reset.task_id == task.id:
            resume_id, fork_from, fork_turn_id = None, reset.thread, reset.attempt.remote_turn_id
        elif task.forked_from is not None and task.remote_id is None:
            source = self.reads.task(task.forked_from)
            if source is not None:
                fork_from = self.session_of_turn(source, task.fork_turn_id)
        return SessionSpec(
            cwd=Path(task.cwd),
            task_id=task.id,
            permission_mode=mode,
            model=task.model,
            effort=task.effort,
            resume_id=resume_id,
            human_approves=self.human_approves,
            developer_instructions=task.developer_instructions,
            fork_from=fork_from,
            fork_turn_id=fork_turn_id,
            restricted=restricted,
        )

    def session_of_turn(self, source: Task, remote_turn_id: str | None) -> str | None:
        """The agent session that ran ``remote_turn_id`` of ``source`` (a reset may have bound
        the task to another since), else the task's current one."""
        if remote_turn_id is not None:
            for attempt in self.reads.find_turn_attempt(source.id, remote_turn_id):
                if attempt.remote_turn_id == remote_turn_id and attempt.remote_session_id:
                    return attempt.remote_session_id
        return source.remote_id
