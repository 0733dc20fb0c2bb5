"""The engine: one supervision tree with the store, the agents and the routes, as a Service.

    engine = Engine(db_path, agents, defaults)
    engine.connect("console", deliver)         # before or after it runs
    await nursery.start(engine.run)            # store up, recovery done, routes accept input
    engine.tell("console", UserInput("hello"))

The tree (one_for_one: the store's clients hold its address, so a store restart touches nobody
else; an agent's restart is its own subtree's business):

    engine
    ├── store        StoreWriter (the one SQLite writer)
    ├── agent:NAME   each configured agent's host (session actor + process service)
    ├── routes       the route directory (activates and passivates ConversationRoutes)
    └── heartbeat    refreshes running attempts every minute, so recovery can tell them apart
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import cast

import trio

from .._capabilities import AgentCapabilities
from .._plugins import AgentHost, runtime_plugins
from ..kernel import (
    Backoff,
    ChildSpec,
    MemoryRouteStates,
    RouteDirectory,
    Service,
    Supervisor,
    release_free_memory,
)
from ..store import (
    HeartbeatTurnAttempt,
    ReaderPool,
    StoreClient,
    StoreWriter,
    Task,
    TurnAttempt,
    open_reader,
)
from ..store import find_task as _find_task
from ..store import latest_task as _latest_task
from ..store import task_turn_attempts as _task_turn_attempts
from ..store import tasks as _tasks
from ._context import AgentEntry, EngineContext, Outputs, TaskDefaults
from ._messages import FrontEndRequest
from ._recovery import Recover, abandon
from ._recovery_plan import plan_recovery
from ._route import ConversationRoute
from ._route_state import Kept

__all__ = ["Engine", "EngineAgent"]

logger = logging.getLogger("robota.core.engine")

HEARTBEAT_INTERVAL = 60.0


@dataclass(frozen=True, slots=True)
class EngineAgent:
    """A configured agent: its runtime kind, the host its plugin built, and what the plugin
    declares it can do (``None``: what the installed plugin of that kind declares, nothing if
    none is installed)."""

    kind: str
    host: AgentHost
    capabilities: AgentCapabilities | None = None


class Engine:
    """See the module docstring. Thread-safe: ``tell`` and ``connect`` from any thread."""

    def __init__(
        self,
        db_path: Path,
        agents: Sequence[EngineAgent],
        defaults: TaskDefaults,
        *,
        human_approves: bool | Callable[[str], bool] = True,
        recover: Callable[[str], bool] | None = None,
        restricted: Callable[[Path], bool] | None = None,
        idle_after: float = 600.0,
        quiet_after: float | None = None,
        backoff: Backoff | None = None,
        heartbeat_interval: float = HEARTBEAT_INTERVAL,
    ) -> None:
        """``recover`` picks the routes whose unfinished turns this engine takes over on
        start (``None``: none; a print-mode run must not adopt another process's turns).
        ``restricted`` decides which directories run Restricted (``EngineContext``). A route
        passivates after ``idle_after`` seconds without a message, or after ``quiet_after``
        already when it has nothing in flight (``RouteData.settled``; ``None``: never sooner):
        a host with many chats keeps a thread and its heap only for the busy ones."""
        self.db_path = db_path
        self._recover = recover
        self._heartbeat_interval = heartbeat_interval
        self.outputs = Outputs()
        self._agents = {a.host.name: a for a in agents}
        children = [ChildSpec("store", lambda: StoreWriter(db_path), shutdown=10.0)]
        children += [
            ChildSpec(f"agent:{a.host.name}", _constant(a.host.service), shutdown=15.0)
            for a in agents
        ]
        # Last, so it stops first: routes finish their messages while agents and store are up.
        children.append(ChildSpec("routes", lambda: self.directory, shutdown=15.0))
        self.supervisor = Supervisor("engine", children, backoff=backoff or Backoff(), intensity=10)
        self.store = StoreClient(self.supervisor.address("store"))
        entries = {
            a.host.name: AgentEntry(a.host.name, a.kind, a.host.address, capabilities)
            for a, capabilities in zip(agents, _declared(agents), strict=True)
        }
        self.directory: RouteDirectory[Kept] = RouteDirectory(
            lambda key: ConversationRoute(key, self.context),
            MemoryRouteStates[Kept](),
            idle_after=idle_after,
            quiet_after=quiet_after,
            backoff=backoff,
            after_passivations=release_free_memory,
        )
        self.context = EngineContext(
            store=self.store,
            db_path=db_path,
            agents=entries,
            defaults=defaults,
            outputs=self.outputs,
            route=self.directory.tell,
            readers=ReaderPool(db_path),
            human_approves=human_approves,
            restricted=restricted,
        )

    @property
    def agent_names(self) -> list[str]:
        return list(self.context.agents)

    def agent_pid(self, name: str) -> int | None:
        """The pid of agent ``name``'s process while one runs (``None``: not started)."""
        agent = self._agents.get(name)
        return agent.host.pid() if agent is not None else None

    def agent_version(self, name: str) -> str | None:
        """The version agent ``name`` reported when a session of it last opened (``None``:
        none opened yet in this engine)."""
        return self.outputs.agent_versions.get(name)

    @property
    def defaults(self) -> TaskDefaults:
        return self.context.defaults

    # -- front ends ----------------------------------------------------------------------------

    def connect(self, route_key: str, deliver: Callable[[object], None]) -> None:
        """Send everything ``route_key`` says to ``deliver`` (called on actor threads: it must
        not block)."""
        self.outputs.connect(route_key, deliver)

    def disconnect(self, route_key: str) -> None:
        self.outputs.disconnect(route_key)

    def tell(self, route_key: str, request: FrontEndRequest) -> None:
        self.directory.tell(route_key, request)

    # -- reading (any thread but the trio loop's: these block on SQLite) -----------------------

    def recent_tasks(self, *, limit: int = 50, search: str | None = None) -> list[Task]:
        with closing(open_reader(self.db_path)) as db:
            return _tasks(db, limit=limit, search=search)

    def find_tasks(self, wanted: str) -> list[Task]:
        """The tasks ``wanted`` may name (by id, id prefix or exact title, newest first): the
        candidates ``robota.core.frontend.resolve_task`` picks one of."""
        with closing(open_reader(self.db_path)) as db:
            return _find_task(db, wanted)

    def latest_task(self, cwd: Path, agent: str | None = None) -> Task | None:
        with closing(open_reader(self.db_path)) as db:
            return _latest_task(db, cwd=str(cwd), agent=agent)

    def task_history(self, task_id: str, *, limit: int = 10) -> list[TurnAttempt]:
        """The task's last ``limit`` completed turns, oldest first: what a front end shows
        when it resumes the task."""
        with closing(open_reader(self.db_path)) as db:
            done = _task_turn_attempts(db, task_id, status="completed", limit=limit)
        return done[::-1]

    # -- running -------------------------------------------------------------------------------

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        try:
            async with trio.open_nursery() as nursery:
                await nursery.start(self.supervisor.run)
                await self.store.ready(timeout=30)
                await trio.to_thread.run_sync(self._start_recovery)
                task_status.started()
                while True:
                    await trio.sleep(self._heartbeat_interval)
                    for attempt_id in self.context.running.snapshot():
                        self.store.submit(HeartbeatTurnAttempt(attempt_id), _log_failure)
        finally:
            # The routes have passivated (the directory stops first); a run after this one
            # opens the pool's connections again.
            self.context.readers.close()

    def _start_recovery(self) -> None:
        if self._recover is None:
            return
        with closing(open_reader(self.db_path)) as db:
            plan = plan_recovery(db, now=time.time(), owns=self._recover)
        for attempt in plan.interrupt:
            logger.info("turn %s of %s is too old to continue", attempt.id, attempt.route_key)
            self.store.submit(abandon(attempt), _log_failure)
        for attempt in plan.deliver:
            self.directory.tell(attempt.route_key, Recover("deliver", attempt))
        for attempt in plan.continue_:
            self.directory.tell(attempt.route_key, Recover("continue", attempt))
        for route_key in plan.queues:
            self.directory.tell(route_key, Recover("queue"))


def _declared(agents: Sequence[EngineAgent]) -> list[AgentCapabilities]:
    """Each agent's capabilities, from its runtime plugin when the caller named none."""
    if all(a.capabilities is not None for a in agents):
        return [cast(AgentCapabilities, a.capabilities) for a in agents]
    plugins = runtime_plugins()
    declared = []
    for agent in agents:
        plugin = plugins.get(agent.kind)
        fallback = plugin.capabilities if plugin is not None else AgentCapabilities()
        declared.append(agent.capabilities if agent.capabilities is not None else fallback)
    return declared


def _constant(service: Service) -> Callable[[], Service]:
    return lambda: service


def _log_failure(outcome: object) -> None:
    if isinstance(outcome, BaseException):
        logger.error("engine: store write failed: %s", outcome)
