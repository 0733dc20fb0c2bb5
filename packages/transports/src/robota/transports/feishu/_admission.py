"""The Feishu service's way in: a message screened, claimed, ``OnIt``, then the route.

``_inbound``'s order: owner and mention filters before any write, the durable claim of the event
id and the message id, the stale guard, the awaited ``OnIt``, then the route (verbatim text) or
the transport's own command.

One of ``FeishuService``'s layers, each a concept of the one service: ``_replies`` (the
state) < ``_turns`` < ``_notices`` < ``_clicks`` < ``_admission`` < ``_service``.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from robota.core.engine import (
    UserInput,
)
from robota.core.frontend import (
    ChatRoute,
    Pending,
    Prepared,
    Refused,
    attachments_folder,
    inbound_claims,
    media_notes,
    prompt_with,
)
from robota.core.store import (
    AppendAuditEvent,
    NoteChat,
    SetChatSetting,
)

from ._clicks import Clicks
from ._connection import Delivery
from ._groups import group_notes, open_group
from ._inbound import (
    Admit,
    CardClick,
    ChatCommand,
    Ignore,
    InboundMessage,
    Malformed,
    Unsupported,
    chat_route,
    command,
    parse_event,
    screen,
)
from ._media import fetch
from ._replies import _MUTE, STORE_TIMEOUT
from ._team import team_message, team_screen

__all__ = ["Admission"]

log = logging.getLogger("robota.transports.feishu")


class Admission(Clicks):
    """A frame's event decided, and a message admitted on its route's lane."""

    # -- inbound ----------------------------------------------------------------------------

    async def _on_event(self, delivery: Delivery) -> Mapping[str, Any] | None:
        """The long connection's handler: decide, hand off, answer the ACK (never raises)."""
        parsed = parse_event(delivery.payload)
        if isinstance(parsed, Malformed | Unsupported):
            log.warning(
                "feishu event dropped: %s", parsed.reason, extra={"frame": delivery.message_id}
            )
            return None
        if isinstance(parsed, CardClick):
            return await self._on_click(parsed)
        self._on_message(parsed)
        return None

    def _on_message(self, message: InboundMessage) -> None:
        door = self.context.teams.get(message.chat_id)
        if door is not None:  # a team's group: its door decides who is heard
            decision = screen(message, team_screen(door, self.screen.bot_open_id))
            route_key = (
                team_message(decision).route if isinstance(decision, Admit) else message.route_key
            )
        else:
            decision = screen(
                message, self.screen, muted=self._muted.get(chat_route(message.chat_id), False)
            )
            route_key = message.route_key
        if isinstance(decision, Ignore):
            log.info(
                "feishu message ignored: %s",
                decision.reason,
                extra={"message_id": message.message_id},
            )
            return
        if self.context.host is not None:
            self.context.host.note_inbound(route_key)
        self.hand_to_lane(self._route(route_key), decision)

    def item_extra(self, item: Any) -> Mapping[str, object]:
        return {"message_id": item.message.message_id}

    async def admit(self, route: ChatRoute, item: Any) -> None:
        admit: Admit = item
        message = admit.message
        fresh = await self.claimed_and_fresh(
            inbound_claims(
                message.event_id,
                f"feishu-message:{message.message_id}",
                message_kind="message_id",
            ),
            message,
            AppendAuditEvent(
                "feishu.stale_message",
                {
                    "message_id": message.message_id,
                    "route": route.key,
                    "created_at": message.created_at,
                },
            ),
            {"message_id": message.message_id},
        )
        if not fresh:
            return
        chat_key = chat_route(message.chat_id)
        door = self.context.teams.get(message.chat_id)
        if door is not None:
            door.handle(team_message(admit))  # its effects come back through _team
            return
        await self._react(message.message_id, "OnIt")
        self._store.submit(NoteChat(chat_key, f"feishu:{message.chat_type}"), self.logged)
        chat_command = command(admit)
        if chat_command is not None:
            await self._chat_command(route, message, chat_command)
            return
        prepared: Prepared | None = Prepared(admit.text, ())
        if message.resources:
            prepared = await self._with_media(route, message, admit.text)
        if prepared is None:
            return  # refused, and said why
        text = prepared.text
        input_ = UserInput(text, images=prepared.images, message_id=message.message_id)
        fork = None if text.startswith("/") else await self._threads.fork_for(message, input_)
        if text.startswith("/") or fork is not None:  # the fork's reply comes first
            route.commands.append(Pending(message.message_id, text))
        if not text.startswith("/"):
            route.pending.append(Pending(message.message_id, text))
        self.context.port.tell(route.key, input_ if fork is None else fork)

    async def _with_media(
        self, route: ChatRoute, message: InboundMessage, text: str
    ) -> Prepared | None:
        """The message's images and files downloaded (``_media``), or ``None`` once the
        person was told why not."""
        assert self._messenger is not None
        notes = media_notes(self.context.locale)
        folder = attachments_folder(self.context.profile.data_dir, message.chat_id)
        saved = await fetch(
            self._messenger.rest, message.message_id, message.resources, folder, notes
        )
        if isinstance(saved, Refused):
            log.info("feishu: a message's attachment was refused: %s", saved.reason)
            await self._say(route.key, message.message_id, saved.reason)
            await self._settle_reaction(message.message_id, "ERROR")
            return None
        images = self._declared(route.agent).images
        return prompt_with(text, saved, takes_images=images, notes=notes)

    async def _chat_command(
        self, route: ChatRoute, message: InboundMessage, chat_command: ChatCommand
    ) -> None:
        if chat_command.refusal is not None:
            await self._say(route.key, message.message_id, chat_command.refusal)
            await self._settle_reaction(message.message_id, "ERROR")
            return
        if chat_command.name in ("newgroup", "forkgroup"):
            maker = self._groups.inviting(message.sender_open_id) if self._groups else None
            fork, title = chat_command.name == "forkgroup", chat_command.argument
            notes = group_notes(self.context.locale)
            host = self.context.host
            made, reply = await open_group(
                host, maker, route.key, fork=fork, title=title, notes=notes
            )
            await self._say(route.key, message.message_id, reply)
            await self._settle_reaction(message.message_id, "DONE" if made else "ERROR")
            return
        if chat_command.name == "mute":
            chat_key = chat_route(message.chat_id)
            now = self._muted.get(chat_key, False)
            on = {"on": True, "off": False}.get(chat_command.argument or "", not now)
            await self._store.write(
                SetChatSetting(chat_key, "feishu:group", _MUTE, on), timeout=STORE_TIMEOUT
            )
            self._muted[chat_key] = on
            await self._say(route.key, message.message_id, self.notes["muted" if on else "unmuted"])
        else:
            host = self.context.host
            if host is None:
                await self._say(route.key, message.message_id, self.notes["no_restart"])
                await self._settle_reaction(message.message_id, "ERROR")
                return
            force = chat_command.argument == "--force"
            schedule = self._restarts.request(host, route.key, message.message_id, force=force)
            if schedule is not None:  # already enrolled: no new note
                text = f"{self.notes['restart']} ({schedule})"
                await self._say(route.key, message.message_id, text)
        await self._settle_reaction(message.message_id, "DONE")
