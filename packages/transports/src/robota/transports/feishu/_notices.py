"""The Feishu service's notices: a route's reply, a queued prompt's note.

One of ``FeishuService``'s layers, each a concept of the one service: ``_replies`` (the
state) < ``_turns`` < ``_notices`` < ``_clicks`` < ``_admission`` < ``_service``.
"""

from __future__ import annotations

import logging
import secrets

from robota.core.engine import (
    RouteReply,
)
from robota.core.frontend import (
    ChatRoute,
    Pending,
    QueueNote,
    queue_texts,
)

from ._errors import ApiError
from ._texts import _note_card
from ._turns import Turns

__all__ = ["Notices"]

log = logging.getLogger("robota.transports.feishu")


class Notices(Turns):
    """The routes' notices (``ChatTurns``) and a queued prompt's note."""

    # -- the routes' notices (``ChatTurns``) ------------------------------------------------

    def turn_ended(self, route_key: str) -> None:
        door = self._team_door(route_key)
        if door is not None:
            door.turn_ended(route_key)

    async def route_reply(
        self, route: ChatRoute, anchor: Pending | None, reply: RouteReply
    ) -> None:
        anchor_id = anchor.message_id if anchor else None
        if self._threads.fork_reply(anchor_id):
            if reply.level != "error":  # forked: the prompt runs, its turn settles the message
                await self._say(route.key, anchor_id, reply.text)
                return
            for dropped in [p for p in route.pending if p.message_id == anchor_id]:
                route.pending.remove(dropped)  # the refused fork dropped its prompt
        if anchor_id is not None and anchor_id in self._repaints:
            self._repaints.discard(anchor_id)
            if reply.listing is not None:  # a page click: the same card, the next page
                await self._sessions_card(route.key, anchor_id, reply.listing, replace=True)
                return
        await self._reply_notice(route.key, anchor_id, reply)

    # -- a queued prompt's note (``robota.core.frontend.QueueNotes``) ----------------------

    def input_queued(self, note: QueueNote) -> None:
        assert self._nursery is not None
        self._nursery.start_soon(self._queued_note, note)

    async def _queued_note(self, note: QueueNote) -> None:
        """The note beside the person's message, its Cancel bound to the route and prompt."""
        assert self._messenger is not None
        texts = queue_texts(self.context.locale)
        token = secrets.token_urlsafe(18)
        text = texts["queued"].format(ahead=note.ahead)
        card = _note_card(self.notes["title"], text, button=(texts["cancel"], token))
        try:
            message_id = await self._messenger.to_route(
                note.route_key, note.anchor, "interactive", card
            )
        except ApiError as error:
            log.warning("feishu: the queued note could not be sent: %s", error)
            return
        self._card_routes[message_id] = note.route_key
        await self.queued_note_posted(note, message_id, token)

    async def settle_note(self, note: QueueNote) -> None:
        """The note without its action: ``started`` or ``cancelled``."""
        assert self._messenger is not None and note.message_id is not None
        texts = queue_texts(self.context.locale)
        card = _note_card(self.notes["title"], texts[note.state])
        try:
            await self._messenger.patch_card(note.message_id, card)
        except ApiError as error:
            log.warning("feishu: the queued note could not be updated: %s", error)
