"""Slack as a chat platform: the adapter the host's chat service serves Slack through.

``SlackAdapter`` is a ``robota.core.frontend.Platform``; ``service`` composes it with
``robota.core.frontend.ChatService``, the one shell every chat platform runs on, which decides
a message's way (``_admission``), runs the connection machine (``_link``) and the routes'
turns. This module only says what is Slack's:

* the clients of a run: the Web API (the bot token) and its card sink (``SlackSink``); Socket
  Mode (``SocketModeClient``, the app token) as the inbound link, whose ``accept`` hands each
  message to the service before the envelope is acknowledged, and whose handler gets a click
  after it;
* who the bot is (``auth.test``: its user id, which the mention filter needs; a token refused
  for good is ``Refused``);
* a message screened (``_inbound``'s filters; a team's channel by its door) into a
  ``Hearing``: its route (a thread's own route in a team's channel), its claim keys
  (``slack-event:`` + the event id, ``slack-message:`` + channel + ``ts``), ``!name`` read as
  ``/name`` for the engine's commands and the transport's ``restart``, ``newgroup`` and
  ``forkgroup``;
* its group channels (``_groups``: ``SlackGroups``, the ``GroupMaker`` offered to the host
  once the Web API's client exists, inviting the owner; a command's binds its sender);
* its words: reactions (``eyes`` while working, then ``white_check_mark`` / ``x`` /
  ``no_entry_sign``), replies in the message's thread, the progress message's Stop button,
  the queued note's and the restart note's buttons (``restart_blocks``), the start-up notes
  (the owner's DM and each channel active in the minute before the start).

The card's turn id is the engine's attempt id with ``:slack`` appended: the engine's own
ledger row for the attempt and this one for the answer sent to Slack never see each other.
"""

from __future__ import annotations

import json
import logging
import secrets
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

import trio

from robota.core.engine import COMMANDS, ForkTask, RouteReply, UserInput
from robota.core.frontend import (
    GROUP_COMMANDS,
    QUEUE_CANCEL,
    Card,
    ChatRoute,
    ChatService,
    ChatTurn,
    GroupChat,
    Hearing,
    Identified,
    IdentifyFailed,
    Ignore,
    InboxLeft,
    LinkStatus,
    Opening,
    Outcome,
    Pending,
    PlatformRefused,
    Prepared,
    Reaction,
    TransportContext,
    agent_capabilities,
    attachments_folder,
    greet_group,
    media_notes,
    open_group,
    prompt_with,
)
from robota.core.frontend import Refused as FileRefused
from robota.core.store import (
    ActionBinding,
    CardAction,
    ChatContext,
    TurnAttempt,
    chat_contexts,
    open_reader,
)

from .._tls import OneTlsContext
from ._client import SocketModeClient
from ._errors import ApiError, ConnectionRefused
from ._files import fetch
from ._groups import SlackGroups, slack_group_notes
from ._inbound import (
    Admit,
    ButtonClick,
    GroupCommand,
    InboundMessage,
    Malformed,
    Restart,
    Screen,
    Unsupported,
    allowed,
    bang,
    chat_route,
    group_command,
    parse_envelope,
    restart_command,
    route_chat,
    screen,
)
from ._outbound import STOP, SlackCards, SlackSink, message_id, restart_blocks, split_message_id
from ._settings import SlackSettings
from ._team import PREFIX, team_message, team_say, team_screen, team_thread
from ._web import WebApi

if TYPE_CHECKING:
    from robota.core import Service
    from robota.core.teams import GroupNote, TeamDoor, TeamMessage, ThreadReply

    from ._socket import Envelope

__all__ = ["CARD_SUFFIX", "REACTIONS", "SlackAdapter", "message_key", "service"]

log = logging.getLogger("robota.transports.slack")

CARD_SUFFIX = ":slack"
"""A card's turn id is the engine's attempt id and this (see the module docstring)."""
ONLINE = "robota is online: write here to start."
REACTIONS: Mapping[Reaction, str] = {
    "working": "eyes",
    "completed": "white_check_mark",
    "failed": "x",
    "interrupted": "no_entry_sign",
}
_COMMAND_NAMES = frozenset(
    {
        "restart",
        *GROUP_COMMANDS,
        *(name for c in COMMANDS for name in (c.name, c.initialism) if name is not None),
    }
)
"""What ``!name`` means ``/name`` for: the engine's commands and the transport's ``restart``,
``newgroup`` and ``forkgroup``."""
_RESTART = {
    "restart": "Restart scheduled",
    "no_restart": "Nothing can restart from here",
    "restart_scheduled": (
        "Restart scheduled: once running turns end, their answers are delivered and "
        "15 s pass without a message."
    ),
    "restart_forced": "Immediate restart scheduled.",
    "restart_cancel": "Cancel the restart",
    "restart_cancelled": "Restart cancelled.",
    "restart_restarting": "Restarting now...",
    "restart_restarted": "Restarted: robota is back online.",
    "reason": "Reason",
}


def message_key(channel: str, ts: str) -> str:
    """A message's claim key, and its inbox row's (``robota.core.store._inbox``)."""
    return f"slack-message:{channel}:{ts}"


def service(context: TransportContext) -> Service:
    """The host's service of ``transports.slack``: the chat service on this adapter."""
    adapter = SlackAdapter(context)
    return ChatService(context, adapter, max_busy_chats=adapter.settings.max_busy_chats)


class SlackAdapter:
    """See the module docstring."""

    name = "slack"
    route_prefix = "slack:"
    card_suffix = CARD_SUFFIX
    restart_texts: Mapping[str, str] = _RESTART
    team_prefix = PREFIX
    identify_first = True
    """Socket Mode waits for ``auth.test``: the screen needs the bot's user id."""
    own_actions: frozenset[str] = frozenset()
    cards_outlive_turns = False

    def __init__(self, context: TransportContext) -> None:
        settings = context.settings
        assert isinstance(settings, SlackSettings), settings
        self.context = context
        self.settings = settings
        self.team_owner = settings.user_id
        self.screen = Screen(
            owner=settings.user_id,
            owner_only=settings.respond_to_owner_only,
            all_channel_messages=settings.respond_to_all_channel_messages,
        )
        self._service: ChatService | None = None
        self._web: WebApi | None = None
        self._tls_context = OneTlsContext()
        self._sink: SlackSink | None = None
        self._groups: SlackGroups | None = None
        """The ``GroupMaker`` (``_groups``), inviting the owner; a command's binds its sender."""

    def bind(self, service: ChatService) -> None:
        self._service = service

    @property
    def web(self) -> WebApi:
        assert self._web is not None
        return self._web

    @property
    def service(self) -> ChatService:
        assert self._service is not None
        return self._service

    # -- the connection ---------------------------------------------------------------------

    @asynccontextmanager
    async def session(self) -> AsyncIterator[SlackSink]:
        tls = self._tls_context.get()
        async with WebApi(
            api_url=self.settings.api_url, token=self.settings.bot_token, tls=tls
        ) as web:
            self._web = web
            self._sink = SlackSink(web)
            self._groups = SlackGroups(web, invite=self.settings.user_id, opened=self._group_opened)
            yield self._sink

    async def identify(self) -> Identified | IdentifyFailed | PlatformRefused:
        """``auth.test``: the bot's user id (the mention filter's)."""
        try:
            bot = await self.web.auth_test()
        except ApiError as error:
            if error.fatal:
                return PlatformRefused(f"auth.test refused the bot token: {error.error}")
            log.warning("slack: auth.test failed: %s", error)
            return IdentifyFailed(f"auth.test failed ({error})")
        self.screen = Screen(
            owner=self.screen.owner,
            owner_only=self.screen.owner_only,
            bot_user_id=bot.user_id,
            all_channel_messages=self.screen.all_channel_messages,
        )
        return Identified()

    async def link(
        self, status: LinkStatus, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED
    ) -> None:
        client = SocketModeClient(
            api_url=self.settings.api_url,
            app_token=self.settings.app_token,
            handler=self._on_envelope,
            accept=self._accept,
            on_status=status,
            tls=self._tls_context.get(),
        )
        await client.run(task_status=task_status)

    def refusal(self, error: BaseException) -> str | None:
        return str(error) if isinstance(error, ConnectionRefused) else None

    async def went_quiet(self) -> None:
        if self._web is not None:
            await self._web.went_quiet()

    def serving(self) -> None:
        assert self._groups is not None
        self.context.offer_groups(self._groups)

    async def _group_opened(self, group: GroupChat, task_id: str) -> None:
        """A channel the host made is this transport's route now: served, and greeted."""
        notes = slack_group_notes(self.context.locale)
        await greet_group(self.service, group, task_id, "slack:channel", notes)

    def recovering(self, unsettled: Sequence[tuple[TurnAttempt, str | None]]) -> None:
        pass

    async def resuming(self, left: InboxLeft) -> None:
        pass

    async def startup_notes(self) -> None:
        """One note to the owner's DM (``conversations.open``) and to each channel active in
        the minute before this start."""

        def read() -> list[ChatContext]:
            db = open_reader(self.context.db_path)
            try:
                return chat_contexts(db, "slack:")
            finally:
                db.close()

        try:
            known = await trio.to_thread.run_sync(read)
        except Exception:
            log.exception("slack: the known conversations could not be read")
            known = []
        recent = self.context.started_at - 60.0
        channels = [
            c.chat_id.removeprefix("slack:")
            for c in known
            if c.kind == "slack:channel" and c.updated_at >= recent
        ]
        try:
            if self.settings.user_id:
                answer = await self.web.call("conversations.open", {"users": self.settings.user_id})
                opened = answer.get("channel")
                dm_id = opened.get("id") if isinstance(opened, Mapping) else None
                if isinstance(dm_id, str) and dm_id:
                    channels.insert(0, dm_id)
        except ApiError as error:
            log.warning("slack: the owner's DM could not be opened: %s", error)
        for channel in channels:
            try:
                await self.web.post_message(channel, text=ONLINE)
            except ApiError as error:
                log.warning("slack: the start-up note to %s failed: %s", channel, error)

    # -- inbound ----------------------------------------------------------------------------

    async def _accept(self, envelope: Envelope) -> None:
        """Socket Mode's ``accept``, awaited before the envelope is acknowledged: a message
        screened, then accepted by the service."""
        parsed = parse_envelope(
            envelope.type, envelope.payload, retry_attempt=envelope.retry_attempt
        )
        if isinstance(parsed, InboundMessage):
            await self.service.heard(self._hearing(parsed, json.dumps(envelope.payload)))

    async def _on_envelope(self, envelope: Envelope) -> None:
        """Socket Mode's handler (the envelope is acknowledged already): a click."""
        parsed = parse_envelope(
            envelope.type, envelope.payload, retry_attempt=envelope.retry_attempt
        )
        if isinstance(parsed, Malformed | Unsupported):
            log.info(
                "slack envelope dropped: %s",
                parsed.reason,
                extra={"envelope_id": envelope.envelope_id},
            )
        elif isinstance(parsed, ButtonClick):
            card = message_id(parsed.channel, parsed.message_ts)
            await self.service.clicked(card, parsed.user, parsed.token, parsed.channel)

    def hear(self, payload: str) -> Hearing | Ignore | None:
        parsed = parse_envelope("events_api", json.loads(payload))
        return self._hearing(parsed, payload) if isinstance(parsed, InboundMessage) else None

    def _hearing(self, message: InboundMessage, payload: str) -> Hearing | Ignore:
        """The screen's decision (no write): in a team's channel, its door's."""
        door = self.context.teams.get(message.channel)
        rules = self.screen if door is None else team_screen(door, self.screen.bot_user_id)
        decision = screen(message, rules)
        if isinstance(decision, Ignore):
            return decision
        route_key = team_message(decision).route if door is not None else message.route_key
        return Hearing(
            decision,
            route_key,
            message.channel,
            message.ts,  # as a turn's anchor names it; the channel is the route's
            f"slack-event:{message.event_id}",
            message_key(message.channel, message.ts),
            payload,
            bang(decision.text, _COMMAND_NAMES),
            message.created_at,
            "slack:im" if message.is_dm else "slack:channel",
            {"channel": message.channel, "ts": message.ts, "route": route_key},
            thread=message.reply_thread,
            team=door is not None,
            attachments=bool(message.files),
        )

    def message_key(self, chat: str, message_id: str) -> str:
        return message_key(chat, message_id)

    def chat_of(self, route_key: str) -> str | None:
        chat = route_chat(route_key)
        return None if chat is None else chat[0]

    def chat_route(self, chat: str) -> str:
        return chat_route(chat)

    def allowed(self, user: str) -> Ignore | None:
        return allowed(user, self.screen)

    def reacted(self, hearing: Hearing) -> bool:
        del hearing  # Slack keeps one reaction per emoji: adding it again does no harm
        return False

    def command(self, hearing: Hearing) -> Restart | GroupCommand | None:
        return restart_command(hearing.text) or group_command(hearing.text)

    async def run_command(self, route: ChatRoute, hearing: Hearing, command: object) -> None:
        """The owner's ``/restart`` (``!restart``): the route enrolled in the host's restart;
        ``!newgroup`` / ``!forkgroup``: a private channel for the sender (``_group_command``)."""
        if isinstance(command, GroupCommand):
            await self._group_command(route, hearing, command)
            return
        assert isinstance(command, Restart)
        host = self.context.host
        refusal = command.refusal or (None if host is not None else _RESTART["no_restart"])
        reply = refusal
        if host is not None and refusal is None:
            thread = hearing.thread or hearing.message_id
            schedule = self.service.restarts.request(host, route.key, thread, force=command.force)
            if schedule is not None:  # already enrolled: no new note
                reply = f"{_RESTART['restart']} ({schedule})"
        if reply is not None:
            await self.service.say(route, hearing.message_id, hearing.thread, reply)
        outcome: Outcome = "failed" if refusal is not None else "completed"
        await self.service.settle(route.channel, hearing.message_id, outcome)

    async def _group_command(
        self, route: ChatRoute, hearing: Hearing, command: GroupCommand
    ) -> None:
        """A channel made through the host, the conversation's current task its source; the
        reply (the channel's mention, or why not) in the command's thread."""
        sender = hearing.item.message.user
        maker = self._groups.inviting(sender) if self._groups is not None else None
        made, reply = await open_group(
            self.context.host,
            maker,
            route.key,
            fork=command.fork,
            title=command.title,
            notes=slack_group_notes(self.context.locale),
        )
        await self.service.say(route, hearing.message_id, hearing.thread, reply)
        outcome: Outcome = "completed" if made else "failed"
        await self.service.settle(route.channel, hearing.message_id, outcome)

    async def divert(self, hearing: Hearing, request: UserInput) -> ForkTask | None:
        del hearing, request  # no message of Slack's is told anything else
        return None

    async def reply(self, route: ChatRoute, anchor: Pending | None, reply: RouteReply) -> bool:
        del route, anchor, reply
        return False  # a text reply in the thread, the message settled (the service's)

    async def fetch(self, route: ChatRoute, hearing: Hearing) -> Prepared | FileRefused:
        """The message's files downloaded (``_files``)."""
        message: InboundMessage = hearing.item.message
        notes = media_notes(self.context.locale)
        folder = attachments_folder(self.context.profile.data_dir, message.channel)
        saved = await fetch(self.web, message.ts, message.files, folder, notes)
        if isinstance(saved, FileRefused):
            return saved
        takes = agent_capabilities(self.context.config, route.agent).images
        return prompt_with(hearing.text, saved, takes_images=takes, notes=notes)

    # -- team channels (``_team``) ---------------------------------------------------------

    def team_of(self, route_key: str) -> TeamDoor | None:
        thread = team_thread(route_key)
        return None if thread is None else self.context.teams.get(thread[0])

    def team_message(self, hearing: Hearing) -> TeamMessage:
        admit: Admit = hearing.item
        return team_message(admit)

    def team_say(self, door: TeamDoor) -> Callable[[ThreadReply | GroupNote], Awaitable[None]]:
        return team_say(self.web, door.team.chat)

    # -- outbound ---------------------------------------------------------------------------

    async def react(self, chat: str, message_id: str, name: Reaction) -> None:
        try:
            await self.web.add_reaction(chat, message_id, REACTIONS[name])
        except ApiError as error:
            log.warning("slack: the %s reaction failed: %s", REACTIONS[name], error)

    async def unreact(self, chat: str, message_id: str, name: Reaction) -> None:
        try:
            await self.web.remove_reaction(chat, message_id, REACTIONS[name])
        except ApiError as error:
            log.warning("slack: the %s reaction could not be removed: %s", REACTIONS[name], error)

    async def send(
        self, route_key: str, chat: str, text: str, thread: str | None, *, reply_to: str | None
    ) -> None:
        """In ``thread``, else the route's thread (``reply_to`` needs no more on Slack)."""
        del reply_to
        try:
            await self.web.post_message(chat, text=text, thread_ts=thread or _thread(route_key))
        except ApiError as error:
            log.warning("slack: a reply could not be sent: %s", error)

    def card(self, route: ChatRoute, opening: Opening) -> Card:
        """The turn's progress message, in the route's thread or the message's."""
        assert self._sink is not None
        thread = _thread(route.key) or opening.anchor
        if thread is not None:
            self._sink.anchors[opening.card_id] = thread
        agent = route.agent or self.context.config.defaults.agent
        stop_token = secrets.token_urlsafe(18)
        return Card(lambda: SlackCards(agent=agent, stop_token=stop_token), stop_token, thread)

    def card_bindings(self, attempt_id: str, turn: ChatTurn) -> tuple[ActionBinding, ...]:
        del attempt_id  # Slack's card has no Reset action to bind to it
        return (ActionBinding(turn.stop_token, CardAction(turn.card_id, STOP, "cancel")),)

    def card_done(self, turn: ChatTurn) -> None:
        if self._sink is not None:
            self._sink.anchors.pop(turn.card_id, None)

    async def post_note(
        self,
        route_key: str,
        chat: str,
        thread: str | None,
        text: str,
        button: tuple[str, str],
        *,
        reply_to: str | None,
    ) -> str:
        """A queued prompt's note in the message's thread, its Cancel button."""
        del reply_to
        label, token = button
        blocks = restart_blocks(text, label, token, action_id=QUEUE_CANCEL)
        ts = await self.web.post_message(
            chat, text=text, blocks=blocks, thread_ts=thread or _thread(route_key)
        )
        return message_id(chat, ts)

    async def update_note(self, message_id: str, text: str) -> None:
        channel, ts = split_message_id(message_id)
        await self.web.update_message(channel, ts, text=text, blocks=restart_blocks(text, "", None))

    async def send_restart_note(
        self, route_key: str, text: str, token: str | None, earlier: str | None, anchor: str | None
    ) -> str | None:
        """``RestartDesk``'s ``send``: a thread reply (its cancel button when ``token`` is set),
        or the scheduled note updated."""
        blocks = restart_blocks(text, _RESTART["restart_cancel"], token)
        if earlier is not None:
            channel, ts = split_message_id(earlier)
            await self.web.update_message(channel, ts, text=text, blocks=blocks)
            return None
        chat = route_chat(route_key)
        if chat is None:
            return None
        channel, thread = chat
        ts = await self.web.post_message(
            channel, text=text, blocks=blocks, thread_ts=anchor or thread
        )
        posted = message_id(channel, ts)
        if token is not None:
            self.service.card_routes[posted] = route_key
        return posted


def _thread(route_key: str) -> str | None:
    chat = route_chat(route_key)
    return None if chat is None else chat[1]
