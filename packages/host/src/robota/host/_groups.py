"""The host's ``task.newgroup`` and ``task.forkgroup``: a new group chat with a task of its own.

The host knows no platform: a chat transport that can create groups offers a ``GroupMaker``
through its context (``robota.core.frontend``), and these requests go through it in the
protocol's steps: the transport makes the chat (inviting the owner its settings name), the
host makes the group's route take a task by the engine's own messages (``NewTask`` with the
source task's agent and directory, or ``ForkTask`` from its latest completed turn), then hands
the route to the transport (``group_opened``). With no transport offering groups, both are
refused with ``unsupported``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path

import trio

from robota.core.agents import PERMISSION_MODES, PermissionMode
from robota.core.control import HandlerError
from robota.core.engine import ForkTask, NewTask, TaskSettings
from robota.core.frontend import GroupChat, GroupMaker, GroupRefused
from robota.core.store import Database, Task, head_attempt

from ._desk import TaskDesk, task_json
from ._requests import TaskForkGroup, TaskNewGroup

__all__ = ["GroupDesk", "group_settings"]

DEFAULT_TITLE = "robota"


def group_settings(request: TaskNewGroup, source: Task | None) -> TaskSettings:
    """The new group's task: the source task's agent, directory and execution settings unless
    the request says otherwise (another agent keeps the source's directory and takes its own
    default settings); no source: the profile's defaults."""
    if request.cwd is not None and request.nodir:
        raise HandlerError("bad_request", "task.newgroup: 'cwd' and 'nodir' exclude each other")
    if source is None:
        base = TaskSettings(agent=request.agent, title=request.title)
    elif request.agent is None or request.agent == source.agent:
        base = TaskSettings(
            agent=source.agent,
            cwd=Path(source.cwd),
            model=source.model,
            permission_mode=_mode(source.permission_mode),
            title=request.title,
        )
    else:
        base = TaskSettings(agent=request.agent, cwd=Path(source.cwd), title=request.title)
    if request.nodir:
        return replace(base, cwd=None, nodir=True)
    if request.cwd is not None:
        cwd = Path(request.cwd)
        if not cwd.is_absolute():
            raise HandlerError("bad_request", f"task.newgroup: cwd {cwd} is not absolute", "cwd")
        return replace(base, cwd=cwd)
    return base


def _mode(value: str | None) -> PermissionMode | None:
    for mode in PERMISSION_MODES:
        if mode == value:
            return mode
    return None


def pick_maker(makers: Mapping[str, GroupMaker], wanted: str | None) -> tuple[str, GroupMaker]:
    """The transport to make the group: ``wanted``, else the only one offering groups."""
    if wanted is not None:
        maker = makers.get(wanted)
        if maker is None:
            offering = ", ".join(sorted(makers)) or "none"
            raise HandlerError(
                "unsupported",
                f"transport {wanted!r} offers no group chats (offering: {offering})",
                "transport",
            )
        return wanted, maker
    if not makers:
        raise HandlerError(
            "unsupported",
            "no connected chat transport can create group chats; configure one that can "
            "(transports.<name> in config.yaml) and wait until it is connected",
        )
    if len(makers) > 1:
        raise HandlerError(
            "bad_request",
            f"several transports offer group chats ({', '.join(sorted(makers))}); name one",
            "transport",
        )
    return next(iter(makers.items()))


class GroupDesk:
    def __init__(self, desk: TaskDesk, makers: Callable[[], Mapping[str, GroupMaker]]) -> None:
        self.desk = desk
        self._makers = makers

    async def new_group(self, request: TaskNewGroup) -> dict[str, object]:
        self.desk.refuse_when_stopping()
        named = request.task is not None or bool(request.caller)
        source = await self.desk.resolve(request.task, request.caller) if named else None
        settings = group_settings(request, source)
        title = request.title or (source.title if source is not None else None) or DEFAULT_TITLE
        return await self._make(request.transport, title, NewTask(settings), source)

    async def fork_group(self, request: TaskForkGroup) -> dict[str, object]:
        self.desk.refuse_when_stopping()
        source = await self.desk.resolve(request.task, request.caller)
        await self._forkable(source)
        title = request.title or source.title or f"fork of {source.id}"
        return await self._make(request.transport, title, ForkTask(source.id, title), source)

    async def _forkable(self, source: Task) -> None:
        """Refuse a fork with no turn to fork from before any chat is made (the route checks
        again: a turn cannot be taken back, only the chat would be left empty)."""

        def read(db: Database) -> bool:
            return source.remote_id is not None and head_attempt(db, source) is not None

        if not await trio.to_thread.run_sync(self.desk.reads.read, read):
            raise HandlerError("refused", f"task {source.id} has no completed turn to fork from")

    async def from_route(
        self,
        maker: GroupMaker,
        route_key: str,
        *,
        fork: bool,
        title: str | None,
        task: str | None = None,
    ) -> str:
        """A chat's ``/newgroup`` or ``/forkgroup`` (``HostActions.open_group``): the task
        current on ``route_key`` is the source (``task`` instead, when set); the new task's
        id, or ``GroupRefused``."""
        try:
            self.desk.refuse_when_stopping()
            source = (
                await self.desk.read_task(task)
                if task is not None
                else await trio.to_thread.run_sync(self.desk.bound_task, route_key)
            )
            open_task: NewTask | ForkTask
            if fork:
                if source is None:
                    raise GroupRefused("this chat has no task to fork yet")
                await self._forkable(source)
                title = title or source.title or f"fork of {source.id}"
                open_task = ForkTask(source.id, title)
            else:
                open_task = NewTask(group_settings(TaskNewGroup(title=title), source))
                title = title or (source.title if source is not None else None) or DEFAULT_TITLE
            _, made = await _opened(maker, title, open_task, self.desk)
        except HandlerError as error:
            raise GroupRefused(error.message) from None
        return made.id

    async def _make(
        self, wanted: str | None, title: str, open_task: NewTask | ForkTask, source: Task | None
    ) -> dict[str, object]:
        name, maker = pick_maker(self._makers(), wanted)
        try:
            group, task = await _opened(maker, title, open_task, self.desk)
        except GroupRefused as refused:
            raise HandlerError("refused", f"{name}: {refused}") from None
        return {
            "transport": name,
            "chat": {"route": group.route_key, "chat_id": group.chat_id, "title": group.title},
            "source": task_json(source) if source is not None else None,
            "task": task_json(task),
        }


async def _opened(
    maker: GroupMaker, title: str, open_task: NewTask | ForkTask, desk: TaskDesk
) -> tuple[GroupChat, Task]:
    """The protocol's steps: the chat made, its route's task opened, the route handed over."""
    group = await maker.new_group(title)
    task = await desk.open_on(group.route_key, open_task)
    await maker.group_opened(group, task.id)
    return group, task
