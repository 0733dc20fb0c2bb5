"""Group chats: the transport's ``GroupMaker`` (``robota task newgroup | forkgroup``) and a
chat's ``/newgroup`` / ``/forkgroup``.

The host drives the protocol's steps (``robota.core.frontend.GroupMaker``): ``new_group``
creates the chat by ``POST /open-apis/im/v1/chats`` with the person to invite as its one member
(the bot creates it, so the bot is its owner; ``set_bot_manager`` keeps it a manager should the
ownership move), ``group_opened`` hands the group's route to the service, which subscribes to
it and posts the welcome note. A maker is bound to the person it invites: the one offered to
the host invites the owner (``userOpenId``; a CLI request has no chat user), a chat's command
makes one bound to its sender and asks the host for the same steps (``HostActions.open_group``),
with the chat's current task as the source. The call's ``uuid`` is fresh per request and kept
across its retries, so a retried create makes at most one chat.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from robota.core.frontend import GroupChat, GroupRefused, HostActions
from robota.core.store import Task

from ._errors import ApiError
from ._inbound import chat_route
from ._rest import RestClient

__all__ = ["CHATS_PATH", "FeishuGroups", "group_notes", "open_group", "welcome_text"]

log = logging.getLogger("robota.transports.feishu")

CHATS_PATH = "/open-apis/im/v1/chats"
NAME_LIMIT = 60
"""Characters of a group's name kept (Feishu refuses longer names)."""

Opened = Callable[[GroupChat, str], Awaitable[None]]


def group_notes(locale: str) -> Mapping[str, str]:
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
            "nobody": "没有可邀请的人: 请设置 transports.feishu.userOpenId",
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
        "nobody": "Nobody to invite: set transports.feishu.userOpenId",
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


class FeishuGroups:
    """The transport's ``GroupMaker``, bound to the open_id it invites."""

    def __init__(self, rest: RestClient, *, invite: str | None, opened: Opened) -> None:
        self.rest = rest
        self.invite = invite
        self._opened = opened
        self.made: GroupChat | None = None
        """The last group this maker made (a chat's command replies with its name)."""

    def inviting(self, open_id: str) -> FeishuGroups:
        """The same maker, inviting ``open_id`` (a chat's sender)."""
        return FeishuGroups(self.rest, invite=open_id, opened=self._opened)

    async def new_group(self, title: str) -> GroupChat:
        if not self.invite:
            raise GroupRefused("nobody to invite: set transports.feishu.userOpenId")
        name = " ".join(title.split())[:NAME_LIMIT] or "robota"
        body = {
            "name": name,
            "user_id_list": [self.invite],
            "chat_mode": "group",
            "chat_type": "private",
        }
        params = {
            "user_id_type": "open_id",
            "set_bot_manager": "true",
            "uuid": secrets.token_hex(16),
        }
        try:
            answer = await self.rest.call("POST", CHATS_PATH, json_body=body, params=params)
        except ApiError as error:
            raise GroupRefused(f"Feishu refused to create the group ({error})") from None
        chat_id = _chat_id(answer)
        if chat_id is None:
            raise GroupRefused("Feishu's answer to the group's creation names no chat_id")
        log.info("feishu: group %s created", chat_id)
        self.made = GroupChat(chat_route(chat_id), chat_id, name)
        return self.made

    async def group_opened(self, group: GroupChat, task_id: str) -> None:
        await self._opened(group, task_id)


def _chat_id(answer: Mapping[str, Any]) -> str | None:
    data = answer.get("data")
    chat_id = data.get("chat_id") if isinstance(data, Mapping) else None
    return chat_id if isinstance(chat_id, str) and chat_id.startswith("oc_") else None


async def open_group(
    host: HostActions | None,
    maker: FeishuGroups | None,
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
    return True, notes["made"].format(title=made.title if made is not None else title or "")
