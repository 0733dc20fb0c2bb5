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
import math
import secrets
from collections import Counter
from collections.abc import Mapping
from contextlib import closing
from pathlib import Path
from typing import TYPE_CHECKING

import trio

from robota.core import ChildSpec, Supervisor
from robota.core.engine import (
    InputQueued,
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
from robota.core.events import ApprovalResolved, ToolStarted
from robota.core.frontend import FrontEndPort, RouteLink
from robota.core.store import Together, open_reader, route_binding

from ._setup import Progress, RunOutcome, ServeSetup, ToolRefused
from ._tools import RunCall, TaskNewCall

if TYPE_CHECKING:
    from robota.core.engine import Engine, RouteNotice

__all__ = ["MCP_KIND", "EngineBackend"]

logger = logging.getLogger("robota.mcp")

MCP_KIND = "mcp"
REPLY_TIMEOUT = 30.0
"""Seconds a route may take to answer a request that starts no turn."""
OPEN_TIMEOUT = 120.0
"""Seconds a task's agent session may take to open when it is made current on a route."""
PROGRESS_EVERY = 0.25
"""At most one progress notification per this many seconds (a text stream is many deltas)."""


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
            task_id = await self._resolve(call.task)
        key = await self._route(task_id)
        link = self.port.subscribe(key, shared=True)
        self._inputs[key] += 1
        follow = _Turn(task_id, call.prompt, progress, self._inputs[key])
        try:
            self.port.tell(key, UserInput(call.prompt))
            with trio.move_on_after(call.timeout):
                try:
                    await follow.until_finished(link)
                except trio.Cancelled:
                    # The client cancelled (or the server stops): the turn stops with it.
                    self.port.tell(key, Interrupt())
                    raise
        finally:
            link.close()
        return follow.outcome()

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


class _Turn:
    """Follows one prompt's turn through its route's notices."""

    def __init__(self, task_id: str, prompt: str, progress: Progress, sent: int) -> None:
        self.task_id = task_id
        self.prompt = prompt
        self.progress = progress
        self.sent = sent
        """The prompt is the route's ``sent``-th input of this run: an idle notice counting as
        many says the route is done with it (``RouteIdle.inputs``)."""
        self.idle = False
        self.attempt: str | None = None
        self.finished: TurnFinished | None = None
        self.approvals: list[Mapping[str, object]] = []
        self._said = -math.inf

    async def until_finished(self, link: RouteLink) -> None:
        """Until the turn ended and the route went idle after it: the next prompt then finds
        the agent's session free, as ``task send --wait`` waits for it."""
        async for batch in link:
            for notice in batch:
                await self._hear(notice)
                if self.finished is not None and self.idle:
                    return
        raise ToolRefused("the server stopped before the turn ended")

    async def _hear(self, notice: RouteNotice) -> None:
        if isinstance(notice, TurnBegan):
            if self.attempt is None and notice.prompt == self.prompt:
                self.attempt = notice.attempt_id
                await self._say("turn started", force=True)
        elif isinstance(notice, InputQueued):
            if self.attempt is None and notice.text == self.prompt:
                await self._say(f"queued ({notice.ahead} ahead)", force=True)
        elif isinstance(notice, RouteReply):
            if self.attempt is None and notice.level == "error":
                raise ToolRefused(notice.text)
        elif isinstance(notice, TurnUpdate):
            if notice.attempt_id != self.attempt:
                return
            event = notice.event
            if isinstance(event, ApprovalResolved):
                self.approvals.append(
                    {"id": event.approval_id, "decision": event.decision, "by": event.by}
                )
                await self._say(f"approval {event.decision} by {event.by}", force=True)
            elif isinstance(event, ToolStarted):
                await self._say(f"tool: {event.title}", force=True)
            else:
                await self._say("working")
        elif isinstance(notice, TurnFinished) and notice.attempt_id == self.attempt:
            self.finished = notice
        elif isinstance(notice, RouteIdle) and notice.inputs >= self.sent:
            self.idle = True

    async def _say(self, message: str, *, force: bool = False) -> None:
        now = trio.current_time()
        if not force and now - self._said < PROGRESS_EVERY:
            return
        self._said = now
        await self.progress(message)

    def outcome(self) -> RunOutcome:
        finished = self.finished
        if finished is None:
            return RunOutcome(
                self.task_id, self.attempt, None, None, approvals=tuple(self.approvals)
            )
        error = finished.error.message if finished.error is not None else None
        return RunOutcome(
            self.task_id,
            finished.attempt_id,
            finished.status,
            finished.final_text,
            error,
            tuple(self.approvals),
        )
