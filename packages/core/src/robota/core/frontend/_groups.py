"""Group chats a chat transport makes, the platform-neutral part every maker shares.

A transport's ``GroupMaker`` (``_transport``) creates the chat on its platform; what is the
same on every platform lives here: the notes (``group_notes``: the asking chat's reply, the
welcome note's words), the welcome note itself (``welcome_text``: the task and its settings,
as the store has them), a chat's ``/newgroup`` / ``/forkgroup`` through the host
(``open_group``), and the new group taken over by the transport's chat service
(``greet_group``: its route served, the chat noted, the welcome posted). A platform overrides
only the notes whose words are its own (Slack says "channel" and mentions it).
"""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import closing
from typing import TYPE_CHECKING, Protocol

import trio

from ..store import NoteChat, Task, open_reader
from ..store import task as load_task
from ._transport import GroupChat, GroupMaker, GroupRefused, HostActions

if TYPE_CHECKING:
    from ._service import ChatService

__all__ = [
    "GROUP_COMMANDS",
    "MadeGroups",
    "greet_group",
    "group_notes",
    "open_group",
    "welcome_text",
]

GROUP_COMMANDS: Mapping[str, bool] = {"newgroup": False, "ng": False, "forkgroup": True, "fg": True}
"""A chat's group commands and their initialisms, each whether it forks: a transport's, not
the engine's (a group chat is the platform's), the same on every platform."""


class MadeGroups(GroupMaker, Protocol):
    """A ``GroupMaker`` that keeps the last group it made (a chat's command replies with it)."""

    made: GroupChat | None


def group_notes(locale: str) -> Mapping[str, str]:
    """The notes of groups; ``made`` may name the group's ``{title}`` and its ``{chat}`` id."""
    if locale.startswith("zh"):
        return {
            "made": "已创建群聊「{title}」,任务在那里继续。",
            "welcome": "新任务 {title}({task})",
            "forked": "从任务 {source} 分叉",
            "agent": "智能体",
            "cwd": "目录",
            "model": "模型",
            "mode": "权限",
            "refused": "无法创建群聊: {reason}",
            "no_host": "这里无法创建群聊(没有运行中的 robota 服务)",
        }
    return {
        "made": "Group chat “{title}” created: the task goes on there.",
        "welcome": "New task {title} ({task})",
        "forked": "forked from task {source}",
        "agent": "agent",
        "cwd": "directory",
        "model": "model",
        "mode": "permissions",
        "refused": "The group chat could not be created: {reason}",
        "no_host": "Group chats cannot be created here (no robota host runs)",
    }


def welcome_text(task: Task | None, notes: Mapping[str, str]) -> str:
    """The note that opens a new group: the task and its settings, as the store has them."""
    if task is None:
        return notes["welcome"].format(title="", task="?")
    lines = [notes["welcome"].format(title=task.title or "", task=task.id)]
    if task.forked_from:
        lines.append(notes["forked"].format(source=task.forked_from))
    lines.append(f"{notes['agent']}: {task.agent}")
    lines.append(f"{notes['cwd']}: {task.cwd}")
    if task.model:
        lines.append(f"{notes['model']}: {task.model}")
    if task.permission_mode:
        lines.append(f"{notes['mode']}: {task.permission_mode}")
    return "\n".join(lines)


async def open_group(
    host: HostActions | None,
    maker: MadeGroups | None,
    route_key: str,
    *,
    fork: bool,
    title: str | None,
    notes: Mapping[str, str],
    task: str | None = None,
) -> tuple[bool, str]:
    """A chat's ``/newgroup`` or ``/forkgroup`` through the host, by ``maker`` (bound to the
    person who asked; ``task``: the source instead of the route's current task): whether it
    was made, and the reply for the chat that asked."""
    if host is None or maker is None:
        return False, notes["no_host"]
    try:
        await host.open_group(maker, route_key, fork=fork, title=title, task=task)
    except GroupRefused as refused:
        return False, notes["refused"].format(reason=refused)
    made = maker.made
    name = made.title if made is not None else title or ""
    return True, notes["made"].format(title=name, chat=made.chat_id if made is not None else "")


async def greet_group(
    service: ChatService, group: GroupChat, task_id: str, chat_kind: str, notes: Mapping[str, str]
) -> None:
    """A group the host made is the transport's route now: served, noted as a known chat of
    ``chat_kind`` (the start-up notes read it), and greeted with the welcome note."""
    # The chat named now: the route outlives this greeting, and its first message's reactions
    # and answers go to the route's chat.
    route = service.turns.route(group.route_key, group.chat_id)
    service.context.store.submit(NoteChat(group.route_key, chat_kind), service.turns.logged)

    def read() -> Task | None:
        with closing(open_reader(service.context.db_path)) as db:
            return load_task(db, task_id)

    task = await trio.to_thread.run_sync(read)
    await service.say(route, None, None, welcome_text(task, notes))
