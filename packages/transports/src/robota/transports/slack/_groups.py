"""Group channels: the transport's ``GroupMaker`` (``robota task newgroup | forkgroup``) and a
conversation's ``!newgroup`` / ``!forkgroup``.

The host drives the protocol's steps (``robota.core.frontend.GroupMaker``): ``new_group``
creates a private channel (``conversations.create`` with ``is_private``; the bot creates it,
so the bot is in it) named by Slack's rules (``channel_name``), a taken name tried again with
a suffix (``name_candidates``), then invites the person (``conversations.invite``); an invite
refused archives the new channel (best effort) so no empty channel is left behind.
``group_opened`` hands the channel's route to the chat service, which serves it, notes it as
a known channel and posts the welcome note (``robota.core.frontend.greet_group``).

A maker is bound to the Slack user it invites: the one offered to the host invites the owner
(``userId``; a CLI request has no chat user), a conversation's command makes one bound to its
sender and asks the host for the same steps (``robota.core.frontend.open_group``).

``conversations.create`` is called without retries: Slack has no idempotency key, so a create
retried after a lost answer would meet its own channel's ``name_taken`` and make a second.
Every refusal names Slack's ``error`` code, never a token (``ApiError`` is scrubbed).
"""

from __future__ import annotations

import logging
import re
import secrets
import unicodedata
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from robota.core.frontend import GroupChat, GroupRefused, group_notes

from ._errors import ApiError
from ._inbound import chat_route
from ._web import WebApi

__all__ = [
    "NAME_LIMIT",
    "SlackGroups",
    "channel_name",
    "name_candidates",
    "slack_group_notes",
]

log = logging.getLogger("robota.transports.slack")

NAME_LIMIT = 80
"""Characters of a channel's name Slack takes."""
DEFAULT_NAME = "robota"
NAME_TRIES = 4
"""Names tried when each is taken: the name, ``-2``, ``-3``, then a few random hex digits."""
INVITED_ALREADY = "already_in_channel"
"""The invite's error that means its purpose is met: the person is in the channel."""

Opened = Callable[[GroupChat, str], Awaitable[None]]

_NOT_IN_A_NAME = re.compile(r"[^a-z0-9_]+")
_CHANNEL_ID = re.compile(r"^[CG][A-Z0-9]{2,}$")


def channel_name(title: str) -> str:
    """``title`` by Slack's rules for a channel's name: lowercase letters (accents dropped),
    digits, hyphens and underscores; every run of other characters (spaces, hyphens, ...) one
    hyphen, none at either end; at most ``NAME_LIMIT`` characters; ``robota`` when nothing is
    left."""
    plain = unicodedata.normalize("NFKD", title).encode("ascii", "ignore").decode().lower()
    name = _NOT_IN_A_NAME.sub("-", plain).strip("-")
    return name[:NAME_LIMIT].rstrip("-") or DEFAULT_NAME


def name_candidates(name: str, salt: str, tries: int = NAME_TRIES) -> list[str]:
    """The names tried in order while each is taken: ``name``, ``name-2``, ``name-3`` ... and
    last ``name-<salt>`` (random, so a last try does not meet the same taken names), each cut
    to fit ``NAME_LIMIT``."""
    suffixes = [""] + [f"-{n}" for n in range(2, tries)] + [f"-{salt}"]
    return [_fitted(name, suffix) for suffix in suffixes[: max(tries, 1)]]


def _fitted(name: str, suffix: str) -> str:
    if not suffix:
        return name
    return name[: NAME_LIMIT - len(suffix)].rstrip("-") + suffix


def slack_group_notes(locale: str) -> Mapping[str, str]:
    """The shared group notes in Slack's words: a channel, mentioned so it is one click away."""
    if locale.startswith("zh"):
        own = {
            "made": "已创建频道 <#{chat}>,任务在那里继续。",
            "refused": "无法创建频道: {reason}",
            "no_host": "这里无法创建频道(没有运行中的 robota 服务)",
        }
    else:
        own = {
            "made": "Channel <#{chat}> created: the task goes on there.",
            "refused": "The channel could not be created: {reason}",
            "no_host": "Channels cannot be created here (no robota host runs)",
        }
    return {**group_notes(locale), **own}


class SlackGroups:
    """The transport's ``GroupMaker``, bound to the Slack user it invites."""

    def __init__(
        self,
        web: WebApi,
        *,
        invite: str | None,
        opened: Opened,
        salt: Callable[[], str] = lambda: secrets.token_hex(2),
    ) -> None:
        self.web = web
        self.invite = invite
        self._opened = opened
        self._salt = salt
        self.made: GroupChat | None = None
        """The last channel this maker made (a conversation's command replies with it)."""

    def inviting(self, user: str) -> SlackGroups:
        """The same maker, inviting ``user`` (a conversation's sender)."""
        return SlackGroups(self.web, invite=user, opened=self._opened, salt=self._salt)

    async def new_group(self, title: str) -> GroupChat:
        if not self.invite:
            raise GroupRefused("nobody to invite: set transports.slack.userId")
        channel, name = await self._create(channel_name(title))
        try:
            await self.web.call("conversations.invite", {"channel": channel, "users": self.invite})
        except ApiError as error:
            if error.error != INVITED_ALREADY:
                await self._archive(channel)
                raise GroupRefused(
                    f"Slack refused to invite {self.invite} to #{name}: {error.error}"
                ) from None
        log.info("slack: private channel %s created", channel)
        self.made = GroupChat(chat_route(channel), channel, name)
        return self.made

    async def group_opened(self, group: GroupChat, task_id: str) -> None:
        await self._opened(group, task_id)

    async def _create(self, name: str) -> tuple[str, str]:
        """The new private channel's id and name: the first of ``name``'s candidates not
        taken."""
        error = "name_taken"
        for candidate in name_candidates(name, self._salt()):
            body = {"name": candidate, "is_private": True}
            try:
                answer = await self.web.call("conversations.create", body, retries=0)
            except ApiError as refused:
                if refused.error != "name_taken":
                    reason = f"Slack refused to create #{candidate}: {refused.error}"
                    raise GroupRefused(reason) from None
                error = refused.error
                continue
            channel = _channel_id(answer)
            if channel is None:
                raise GroupRefused("Slack's answer to conversations.create names no channel id")
            return channel, candidate
        raise GroupRefused(f"Slack refused to create #{name}: {error} (tried {NAME_TRIES} names)")

    async def _archive(self, channel: str) -> None:
        """The channel an invite failed for, archived so it is not left empty (best effort)."""
        try:
            await self.web.call("conversations.archive", {"channel": channel})
        except ApiError as error:
            log.warning("slack: the empty channel %s could not be archived: %s", channel, error)
        else:
            log.info("slack: the empty channel %s archived", channel)


def _channel_id(answer: Mapping[str, Any]) -> str | None:
    channel = answer.get("channel")
    found = channel.get("id") if isinstance(channel, Mapping) else None
    return found if isinstance(found, str) and _CHANNEL_ID.match(found) else None
