"""The host's ``task.*`` requests: what ``robota task send | new | stop`` ask of the engine.

Every request goes through the engine's own rules: a prompt is a ``UserInput`` to the task's
route (``_routing`` picks it), which steers, queues or starts a turn as a person's typing
would; a new task is a ``NewTask`` on a ``cli`` route of its own; a stop is an ``Interrupt``.
The desk only follows the route (``RouteTaps``) to report what came of it.

While the host stops, ``accepting`` is false and every request here is refused with
``stopping``: no new turn starts in a host that is going away.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Collection
from contextlib import closing
from pathlib import Path

import trio

from robota.core.control import HandlerError
from robota.core.engine import (
    Engine,
    Interrupt,
    NewTask,
    RouteIdle,
    RouteNotice,
    RouteReply,
    TaskOpened,
    TaskSettings,
    TurnFinished,
    UserInput,
    UseTask,
)
from robota.core.store import Task, Together, open_reader, route_binding
from robota.core.store import task as load_task

from ._reads import routes_of
from ._requests import TaskNew, TaskSend, TaskStop
from ._routing import TaskRoute, cli_route, route_for_task
from ._taps import RouteTaps

__all__ = ["TaskDesk", "task_json"]

OPEN_TIMEOUT = 120.0
"""Seconds a task's agent session may take to open when the host binds a route to it."""
REPLY_TIMEOUT = 30.0
"""Seconds a route may take to answer a request that starts no turn."""


def task_json(task: Task) -> dict[str, object]:
    return {
        "id": task.id,
        "title": task.title,
        "agent": task.agent,
        "cwd": task.cwd,
        "last_turn_status": task.last_turn_status,
    }


def _reply_json(reply: RouteReply) -> dict[str, str]:
    return {"level": reply.level, "text": reply.text}


def _turn_json(finished: TurnFinished) -> dict[str, object]:
    return {
        "turn_id": finished.attempt_id,
        "status": finished.status,
        "final": finished.final_text,
        "error": finished.error.message if finished.error is not None else None,
        "duration_ms": finished.duration_ms,
    }


class TaskDesk:
    def __init__(
        self,
        engine: Engine,
        taps: RouteTaps,
        kinds: Collection[str],
        accepting: Callable[[], bool],
    ) -> None:
        self.engine = engine
        self.taps = taps
        self.kinds = frozenset(kinds)
        self._accepting = accepting

    # -- requests --------------------------------------------------------------------------------

    async def send(self, request: TaskSend) -> dict[str, object]:
        self._refuse_when_stopping()
        if not request.text.strip():
            raise HandlerError("bad_request", "task.send: 'text' is empty", "text")
        task, route = await self._task_route(request.task)
        key = route.route_key
        async with self.taps.tap(key) as notices:
            if route.bind:
                await self._bind(key, task.id, notices)
            sent = self.taps.tell(key, UserInput(request.text))
            result: dict[str, object] = {"task": task_json(task), "route": key}
            if request.wait:
                result.update(await self._answers(key, sent, notices))
        return result

    async def new(self, request: TaskNew) -> dict[str, object]:
        self._refuse_when_stopping()
        if request.cwd is not None and request.nodir:
            raise HandlerError("bad_request", "task.new: 'cwd' and 'nodir' exclude each other")
        cwd = Path(request.cwd) if request.cwd is not None else None
        if cwd is not None and not cwd.is_absolute():
            raise HandlerError("bad_request", f"task.new: cwd {cwd} is not absolute", "cwd")
        settings = TaskSettings(agent=request.agent, cwd=cwd, title=request.title)
        if request.nodir:
            settings = TaskSettings(agent=request.agent, title=request.title, nodir=True)
        key = cli_route(secrets.token_hex(6))
        async with self.taps.tap(key) as notices:
            self.taps.tell(key, NewTask(settings))
            with trio.move_on_after(REPLY_TIMEOUT) as waited:
                async for notice in notices:
                    if isinstance(notice, RouteReply):
                        if notice.level == "error":
                            raise HandlerError("refused", notice.text)
                        break
            if waited.cancelled_caught:
                raise HandlerError("timeout", f"route {key} did not answer NewTask in time")
        # The route wrote the task before it replied, through the client every route shares:
        # once a write queued after it commits, the task is there to read.
        await self.engine.store.write(Together(()), timeout=REPLY_TIMEOUT)
        task = await trio.to_thread.run_sync(self._bound_task, key)
        if task is None:
            raise HandlerError("internal", f"route {key} replied but holds no task")
        return {"task": task_json(task), "route": key}

    async def stop(self, request: TaskStop) -> dict[str, object]:
        task, route = await self._task_route(request.task)
        if route.bind:
            return {"task": task_json(task), "route": None, "stopped": False, "replies": []}
        key = route.route_key
        replies: list[dict[str, str]] = []
        stopped = False
        async with self.taps.tap(key) as notices:
            self.taps.tell(key, Interrupt())
            with trio.move_on_after(REPLY_TIMEOUT):
                async for notice in notices:
                    if isinstance(notice, RouteReply):
                        replies.append(_reply_json(notice))
                        break
                    if isinstance(notice, TurnFinished):
                        stopped = True
                        break
        return {"task": task_json(task), "route": key, "stopped": stopped, "replies": replies}

    # -- steps -----------------------------------------------------------------------------------

    def _refuse_when_stopping(self) -> None:
        if not self._accepting():
            raise HandlerError("stopping", "the host is stopping; it accepts no new turns")

    async def route_of(self, task_id: str) -> str:
        """The route key ``task_id`` is driven through (``not_found`` when there is no task)."""
        return (await self._task_route(task_id))[1].route_key

    async def _task_route(self, task_id: str) -> tuple[Task, TaskRoute]:
        def read() -> tuple[Task | None, list[str]]:
            with closing(open_reader(self.engine.db_path)) as db:
                return load_task(db, task_id), routes_of(db, task_id)

        task, current_on = await trio.to_thread.run_sync(read)
        if task is None:
            raise HandlerError("not_found", f"no task {task_id!r}", "task")
        return task, route_for_task(task.id, current_on, self.kinds)

    def _bound_task(self, route_key: str) -> Task | None:
        with closing(open_reader(self.engine.db_path)) as db:
            binding = route_binding(db, route_key)
            if binding is None or binding.current_task_id is None:
                return None
            return load_task(db, binding.current_task_id)

    async def _bind(
        self, key: str, task_id: str, notices: trio.MemoryReceiveChannel[RouteNotice]
    ) -> None:
        """Make the task current on ``key`` and wait until its session opened: a prompt told
        before a failed bind would start a new task instead."""
        self.taps.tell(key, UseTask(task_id))
        with trio.move_on_after(OPEN_TIMEOUT):
            async for notice in notices:
                if isinstance(notice, TaskOpened) and notice.task_id == task_id:
                    return
                if isinstance(notice, RouteReply) and notice.level == "error":
                    raise HandlerError("refused", notice.text)
            raise HandlerError("stopping", "the host stopped before the task opened")
        raise HandlerError("timeout", f"task {task_id} did not open within {OPEN_TIMEOUT:g} s")

    async def _answers(
        self, key: str, sent: int, notices: trio.MemoryReceiveChannel[RouteNotice]
    ) -> dict[str, object]:
        """The turns that ended and the replies given until the route went idle after the
        ``sent``-th input: what that input came to."""
        turns: list[dict[str, object]] = []
        replies: list[dict[str, str]] = []
        async for notice in notices:
            if isinstance(notice, TurnFinished):
                turns.append(_turn_json(notice))
            elif isinstance(notice, RouteReply):
                replies.append(_reply_json(notice))
            elif isinstance(notice, RouteIdle) and notice.inputs >= sent:
                return {"turns": turns, "replies": replies}
        raise HandlerError("stopping", f"route {key}: the host stopped before the turn ended")
