"""Group chats: the transport's ``GroupMaker`` (``robota task newgroup | forkgroup``) and a
chat's ``/newgroup`` / ``/forkgroup``.

The host drives the protocol's steps (``robota.core.frontend.GroupMaker``): ``new_group``
creates the chat by ``POST /open-apis/im/v1/chats`` with the person to invite as its one member
(the bot creates it, so the bot is its owner; ``set_bot_manager`` keeps it a manager should the
ownership move), ``group_opened`` hands the group's route to the service, which subscribes to
it and posts the welcome note. A maker is bound to the person it invites: the one offered to
the host invites the owner (``userOpenId``; a CLI request has no chat user), a chat's command
makes one bound to its sender and asks the host for the same steps (``HostActions.open_group``),
with the chat's current task as the source (``robota.core.frontend.open_group``: every
transport's groups share it, their notes and the welcome note). The call's ``uuid`` is fresh
per request and kept across its retries, so a retried create makes at most one chat.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from robota.core.frontend import GroupChat, GroupRefused

from ._errors import ApiError
from ._inbound import chat_route
from ._rest import RestClient

__all__ = ["CHATS_PATH", "FeishuGroups"]

log = logging.getLogger("robota.transports.feishu")

CHATS_PATH = "/open-apis/im/v1/chats"
NAME_LIMIT = 60
"""Characters of a group's name kept (Feishu refuses longer names)."""

Opened = Callable[[GroupChat, str], Awaitable[None]]


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
