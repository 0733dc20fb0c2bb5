"""The served tools on an engine of this process's own (no host runs for the profile).

    mcp (one_for_one)
    └── engine       store, agents, routes (``ServeSetup.open_engine``: headless, nobody
                     approves)

Each task the tools drive is current on a route ``mcp:<id>`` of this engine, through the
front-end port as any front end drives one: a new task is a ``NewTask`` on a fresh route, a
task made elsewhere is made current on its own route with ``UseTask`` (its agent session is
resumed), a prompt is a ``UserInput`` (the route starts, or queues, its turn), a stop is an
``Interrupt``. A run follows its route's notices until its turn ends, reporting each move as
progress; a cancelled run interrupts its turn. Recovery is off (``recover``): a turn a crash
cut short is left to the next start of whoever owns it, as ``--serve`` does.
"""

from __future__ import annotations

import logging
import secrets
from collections import Counter
from contextlib import closing
from pathlib import Path
from typing import TYPE_CHECKING

import trio

from robota.core import ChildSpec, Supervisor
from robota.core.engine import (
    Interrupt,
    NewTask,
    RouteReply,
    TaskOpened,
    TaskSettings,
    TurnFinished,
    UserInput,
    UseTask,
)
from robota.core.frontend import FrontEndPort, RouteLink
from robota.core.store import Together, open_reader, route_binding

from ._follow import TurnFollow
from ._setup import Progress, RunOutcome, ServeSetup, ToolRefused
from ._tools import RunCall, TaskNewCall

if TYPE_CHECKING:
    from robota.core.engine import Engine

__all__ = ["MCP_KIND", "EngineBackend"]

logger = logging.getLogger("robota.mcp")

MCP_KIND = "mcp"
REPLY_TIMEOUT = 30.0
"""Seconds a route may take to answer a request that starts no turn."""
OPEN_TIMEOUT = 120.0
"""Seconds a task's agent session may take to open when it is made current on a route."""


class EngineBackend:
    """See the module docstring. Trio thread only; ``run_engine`` must run meanwhile."""

    def __init__(self, setup: ServeSetup) -> None:
        self.setup = setup
        self.engine: Engine = setup.open_engine()
        self.port = FrontEndPort(self.engine)
        self.supervisor = Supervisor(
            "mcp", [ChildSpec("engine", lambda: self.engine, shutdown=45.0, start_timeout=60.0)]
        )
        self._routes: dict[str, str] = {}
        """task id -> the route of this engine it is current on."""
        self._inputs: Counter[str] = Counter()

    async def run_engine(
        self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED
    ) -> None:
        await self.supervisor.run(task_status=task_status)

    def stop_engine(self) -> None:
        self.supervisor.stop()

    # -- the backend ------------------------------------------------------------------------------

    async def new_task(self, call: TaskNewCall) -> str:
        cwd = Path(call.cwd) if call.cwd is not None else self.setup.workspace
        key = f"{MCP_KIND}:{secrets.token_hex(6)}"
        settings = TaskSettings(
            agent=call.agent,
            cwd=cwd,
            title=call.title,
            permission_mode="plan" if self.setup.restricted else None,
        )
        link = self.port.subscribe(key, shared=True)
        try:
            self.port.tell(key, NewTask(settings, announce=True))
            with trio.move_on_after(REPLY_TIMEOUT) as waited:
                async for batch in link:
                    reply = next((n for n in batch if isinstance(n, RouteReply)), None)
                    if reply is not None:
                        if reply.level == "error":
                            raise ToolRefused(reply.text)
                        break
            if waited.cancelled_caught:
                raise ToolRefused(f"route {key} did not answer in time")
        finally:
            link.close()
        # The route wrote the task before it replied: once a write queued after it commits,
        # the task is there to read.
        await self.engine.store.write(Together(()), timeout=REPLY_TIMEOUT)
        task_id = await trio.to_thread.run_sync(self._bound, key)
        if task_id is None:
            raise ToolRefused(f"route {key} replied but holds no task")
        self._routes[task_id] = key
        return task_id

    async def run(self, call: RunCall, progress: Progress) -> RunOutcome:
        if call.task is None:
            task_id = await self.new_task(TaskNewCall(agent=call.agent))
        else:
            if call.agent is not None:
                raise ToolRefused(
                    "robota_run: 'agent' is for a new task; a given 'task' keeps its own"
                )
            task_id = await self._known(call.task)
        key = await self._route(task_id)
        link = self.port.subscribe(key, shared=True)
        self._inputs[key] += 1
        follow = TurnFollow(call.prompt, self._inputs[key])
        try:
            self.port.tell(key, UserInput(call.prompt))
            with trio.move_on_after(call.timeout):
                try:
                    await follow_route(follow, link, progress)
                except trio.Cancelled:
                    # The client cancelled (or the server stops): the turn stops with it.
                    self.port.tell(key, Interrupt())
                    raise
        finally:
            link.close()
        return follow.outcome(task_id)

    async def stop(self, task_id: str) -> bool:
        key = self._routes.get(task_id)
        if key is None:
            return False  # current on none of this engine's routes: no turn of ours runs
        link = self.port.subscribe(key, shared=True)
        try:
            self.port.tell(key, Interrupt())
            with trio.move_on_after(REPLY_TIMEOUT):
                async for batch in link:
                    for notice in batch:
                        if isinstance(notice, TurnFinished):
                            return True
                        if isinstance(notice, RouteReply):
                            return False
        finally:
            link.close()
        return False

    async def resolve(self, name: str) -> str:
        return await self._resolve(name)

    # -- steps ------------------------------------------------------------------------------------

    async def _known(self, name: str) -> str:
        """``name``'s task: itself when it is the id of a task this engine drives already (a
        run continuing its task reads no store), else as ``robota task`` resolves it."""
        return name if name in self._routes else await self._resolve(name)

    async def _resolve(self, name: str) -> str:
        try:
            status = await trio.to_thread.run_sync(self.setup.task_status, name)
        except LookupError as error:
            raise ToolRefused(str(error)) from None
        return str(status["id"])

    async def _route(self, task_id: str) -> str:
        """The route ``task_id`` is current on, made current on ``mcp:<id>`` first when none
        of this engine's is (its agent session opened before the prompt goes)."""
        key = self._routes.get(task_id)
        if key is not None:
            return key
        key = f"{MCP_KIND}:{task_id}"
        link = self.port.subscribe(key, shared=True)
        try:
            self.port.tell(key, UseTask(task_id))
            with trio.move_on_after(OPEN_TIMEOUT):
                async for batch in link:
                    for notice in batch:
                        if isinstance(notice, TaskOpened) and notice.task_id == task_id:
                            self._routes[task_id] = key
                            return key
                        if isinstance(notice, RouteReply) and notice.level == "error":
                            raise ToolRefused(notice.text)
                raise ToolRefused("the server stopped before the task opened")
        finally:
            link.close()
        raise ToolRefused(f"task {task_id} did not open within {OPEN_TIMEOUT:g} s")

    def _bound(self, key: str) -> str | None:
        with closing(open_reader(self.engine.db_path)) as db:
            binding = route_binding(db, key)
        return binding.current_task_id if binding is not None else None


async def follow_route(follow: TurnFollow, link: RouteLink, progress: Progress) -> None:
    """Feed ``follow`` the route's notices until the run is done, saying its progress lines."""
    async for batch in link:
        for notice in batch:
            line = follow.hear(notice, trio.current_time())
            if line is not None:
                await progress(line)
            if follow.done:
                return
    raise ToolRefused("the server stopped before the turn ended")
