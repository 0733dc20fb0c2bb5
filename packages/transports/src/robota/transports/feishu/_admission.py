"""The Feishu service's way in: a message screened, accepted, ``OnIt``, then the route.

``_inbound``'s order: owner and mention filters before any write, then in the handler, before
the event is ACKed, the durable accept (the claims of the event id and the message id and the
message's inbox row, ``robota.core.frontend._chat_inbox``), then in its route's lane the stale
guard, the awaited ``OnIt``, then the route (verbatim text, its inbox row named so the engine
consumes it) or the transport's own command. A message the last run accepted and no route took
in is fed again on start (``fed_again``), without a second ``OnIt`` when one is recorded.

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
    Accepted,
    ChatRoute,
    Pending,
    Prepared,
    Refused,
    attachments_folder,
    media_notes,
    prompt_with,
)
from robota.core.store import (
    AppendAuditEvent,
    InboxRow,
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
from ._replies import _MUTE, STORE_TIMEOUT, message_key
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
        await self._on_message(parsed, delivery.payload)
        return None

    def _screened(self, message: InboundMessage) -> tuple[Admit, str] | None:
        """The screen's decision (no write): the message admitted, and its route's key."""
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
            return None
        return decision, route_key

    async def _on_message(self, message: InboundMessage, payload: bytes) -> None:
        """Screened, then accepted (its claims and inbox row) before the handler returns and
        the event is ACKed, handed to its route's lane in the order it came."""
        screened = self._screened(message)
        if screened is None:
            return
        admit, route_key = screened
        if self.context.host is not None:
            self.context.host.note_inbound(route_key)
        accept = self.inbox.accept_op(
            message.event_id,
            message_key(message.message_id),
            route_key,
            message.message_id,
            payload.decode(),
            message_kind="message_id",
        )
        await self.accept(self._route(route_key), admit, accept, self.item_extra(admit))

    def fed_again(self, row: InboxRow) -> None:
        parsed = parse_event(row.payload.encode())
        screened = self._screened(parsed) if isinstance(parsed, InboundMessage) else None
        if screened is None:
            self.inbox.consume(row.id)
            return
        admit, route_key = screened
        self._unsure.add(admit.message.message_id)
        self.hand_to_lane(self._route(route_key), Accepted.fed_again(admit, row.id))

    def item_extra(self, item: Any) -> Mapping[str, object]:
        return {"message_id": item.message.message_id}

    async def admit(self, route: ChatRoute, item: Any) -> None:
        accepted: Accepted = item
        admit: Admit = accepted.item
        inbox = accepted.inbox
        assert inbox is not None
        message = admit.message
        fresh = await self.inbox.fresh(
            accepted,
            message,
            AppendAuditEvent(
                "feishu.stale_message",
                {
                    "message_id": message.message_id,
                    "route": route.key,
                    "created_at": message.created_at,
                },
            ),
            started_at=self.context.started_at,
            extra={"message_id": message.message_id},
        )
        if not fresh:
            return
        chat_key = chat_route(message.chat_id)
        door = self.context.teams.get(message.chat_id)
        if door is not None:
            door.handle(team_message(admit))  # its effects come back through _team
            # The door keeps a request (``team_requests``) and says what became of it.
            self.inbox.consume(inbox, door=True)
            return
        if not (accepted.again and self._reacted(message.message_id, "OnIt")):
            await self._react(message.message_id, "OnIt")
        self._store.submit(NoteChat(chat_key, f"feishu:{message.chat_type}"), self.logged)
        chat_command = command(admit)
        if chat_command is not None:
            self.inbox.consume(inbox)
            await self._chat_command(route, message, chat_command)
            return
        prepared: Prepared | None = Prepared(admit.text, ())
        if message.resources:
            prepared = await self._with_media(route, message, admit.text)
        if prepared is None:
            self.inbox.consume(inbox)
            return  # refused, and said why
        text = prepared.text
        input_ = UserInput(text, images=prepared.images, message_id=message.message_id, inbox=inbox)
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
