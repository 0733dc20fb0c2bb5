"""Team groups on Slack: the transport's side of ``robota.core.teams.TeamDoor``.

As on Feishu: a message in a team's channel (``teams.<name>.chat``) skips the owner filter
(the door decides who is heard), is mention-only unless ``respondToAllMessages``, and after the
durable claim and the stale guard goes to the door as a ``TeamMessage``. Every request is its
own thread: its route is ``slack:<channel>:<ts of the request>`` (the thread Slack's replies
name in ``thread_ts``), so follow-ups in the thread reach the same task, and every reply goes
to that thread. Intents are ``!<key>`` (a leading ``/`` is Slack's own).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from robota.core.teams import GroupNote, TeamDoor, TeamMessage, ThreadReply

from ._errors import ApiError
from ._inbound import Admit, Screen, chat_route, route_chat

if TYPE_CHECKING:
    from ._web import WebApi

__all__ = ["PREFIX", "team_message", "team_say", "team_screen", "team_thread"]

log = logging.getLogger("robota.transports.slack")

PREFIX = "!"
"""A team intent's prefix on Slack."""

Said = ThreadReply | GroupNote


def team_screen(door: TeamDoor, bot_user_id: str | None) -> Screen:
    """The filters of a team's channel: no owner filter, mention-only unless configured."""
    return Screen(
        owner=None,
        owner_only=False,
        bot_user_id=bot_user_id,
        all_channel_messages=door.team.respond_to_all_messages,
    )


def team_message(admit: Admit) -> TeamMessage:
    message = admit.message
    return TeamMessage(
        chat=message.channel,
        sender=message.user,
        text=admit.text,
        message_id=message.ts,
        route=chat_route(message.channel, message.reply_thread),
        in_thread=message.thread_ts is not None and message.thread_ts != message.ts,
    )


def team_thread(route_key: str) -> tuple[str, str] | None:
    """``(channel, thread ts)`` of a team request's route."""
    chat = route_chat(route_key)
    return None if chat is None or chat[1] is None else (chat[0], chat[1])


def team_say(web: WebApi, channel: str) -> Callable[[Said], Awaitable[None]]:
    """The door's texts for ``LoopReplies``: a reply in the request's thread, or a note to the
    channel."""

    async def say(effect: Said) -> None:
        thread = team_thread(effect.route) if isinstance(effect, ThreadReply) else None
        try:
            await web.post_message(
                channel, text=effect.text, thread_ts=thread[1] if thread else None
            )
        except ApiError as error:
            log.warning("slack: a team reply could not be sent: %s", error)

    return say
