"""Team groups on Feishu: the transport's side of ``robota.core.teams.TeamDoor``.

A message in a team's group (``teams.<name>.chat``) does not take the bot's ordinary way: the
owner filter does not apply (the team's members are the audience; the door decides who is
heard), the group is mention-only unless ``respondToAllMessages``, and after the durable claim
and the stale guard the door gets it as a ``TeamMessage``. Every request is its own thread:
its route is ``feishu:chat_id:<chat>:request:<root message id>`` (``_inbound.team_route``,
beside the other route keys), where the root is the request's own message, so the follow-ups
in its thread (Feishu gives them the root's id as ``root_id``) reach the same task, and
everything the bot says there is a reply with ``reply_in_thread``. The door's effects are
performed on the service's loop (``robota.core.teams.LoopReplies``): its texts by
``team_say``, the start of a request and its follow-ups by the service, which shows the turn
as for any chat message (reaction, card, answer).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from robota.core.teams import GroupNote, TeamDoor, TeamMessage, ThreadReply

from ._errors import ApiError
from ._inbound import Admit, InboundMessage, Screen, team_route

if TYPE_CHECKING:
    from ._outbound import Messenger

__all__ = [
    "team_message",
    "team_say",
    "team_screen",
]

log = logging.getLogger("robota.transports.feishu")

Said = ThreadReply | GroupNote


def team_screen(door: TeamDoor, bot_open_id: str | None) -> Screen:
    """The filters of a team's group: no owner filter, mention-only unless configured."""
    return Screen(
        owner=None,
        owner_only=False,
        bot_open_id=bot_open_id,
        all_group_messages=door.team.respond_to_all_messages,
    )


def team_message(admit: Admit) -> TeamMessage:
    message: InboundMessage = admit.message
    root = message.root_id
    return TeamMessage(
        chat=message.chat_id,
        sender=message.sender_open_id,
        text=admit.text,
        message_id=message.message_id,
        route=team_route(message.chat_id, root or message.message_id),
        in_thread=root is not None,
    )


def team_say(
    messenger: Messenger, chat: str
) -> Callable[[ThreadReply | GroupNote], Awaitable[None]]:
    """The door's texts for ``LoopReplies``: a thread reply, or a message to the group."""

    async def say(effect: Said) -> None:
        content = {"text": effect.text}
        try:
            if isinstance(effect, ThreadReply):
                await messenger.reply(effect.anchor, "text", content, in_thread=True)
            else:
                await messenger.send(chat, "text", content)
        except ApiError as error:
            log.warning("feishu: a team reply could not be sent: %s", error)

    return say
