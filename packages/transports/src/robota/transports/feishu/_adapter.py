"""Feishu as a chat platform: the adapter the host's chat service serves Feishu through.

``FeishuAdapter`` is a ``robota.core.frontend.Platform``; ``service`` composes it with
``robota.core.frontend.ChatService``, the one shell every chat platform runs on, which decides
a message's way (``_admission``), runs the connection machine (``_link``) and the routes'
turns. This module only says what is Feishu's:

* the clients of a run: the REST client, its ``Messenger`` and card sink (``FeishuSink``), the
  group maker (``_groups``), the known chats and which groups are muted (mention-only); the
  long connection (``LongConnectionClient``) as the inbound link, whose handler hands a
  message to the service before the frame is ACKed and answers a card's click in the ACK (a
  toast);
* who the bot is (its info: the open_id the mention filter needs, told to ``bot_read`` for the
  agents' environment); any outbound call that worked counts (the start-up notes too), and the
  link does not wait for it (``identify_first`` unset): the transport is ``connected`` once
  the link is up and one did;
* a message screened (``_inbound``'s filters; a muted group mention-only; a team's group by
  its door) into a ``Hearing`` (claim keys: the event id, ``feishu-message:`` + the message
  id); its own commands (``/mute``, ``/restart``, ``/newgroup``, ``/forkgroup``); a topic's
  first message forking the turn its root belongs to (``_threads``, ``divert``);
* its words: reactions (``OnIt`` while working, then ``DONE`` / ``ERROR`` / ``CrossMark``; a
  reaction's id recorded, and after a restart the bot's reactions on a message read before it
  is settled, ``_settle_unsure``), replies to the message, the card's Stop and Reset buttons,
  the ``/sessions`` card, note cards (queued prompts, the safe restart, start-up).

The card's turn id is the engine's attempt id with ``:feishu`` appended: the engine claims its
own ledger row for the attempt, the card renderer claims this one for the answer it sends to
the chat, and the two exactly-once gates never see each other.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import asynccontextmanager, closing
from typing import TYPE_CHECKING, Any

import trio

from robota.core.engine import (
    ForkTask,
    RouteReply,
    SessionsListing,
    UserInput,
)
from robota.core.frontend import (
    Card,
    ChatRoute,
    ChatService,
    ChatTurn,
    ClickVerdict,
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
    Refused,
    TransportContext,
    attachments_folder,
    greet_group,
    group_notes,
    media_notes,
    open_group,
    prompt_with,
    queue_texts,
)
from robota.core.store import (
    ActionBinding,
    BindCardActions,
    CardAction,
    ChatContext,
    ForgetReaction,
    RecordReaction,
    SetChatSetting,
    TurnAttempt,
    chat_contexts,
    message_reactions,
    open_reader,
)

from .._tls import OneTlsContext
from ._agents import declared
from ._client import LongConnectionClient
from ._errors import ApiError, ConnectionRefused
from ._groups import FeishuGroups
from ._inbound import (
    Admit,
    CardClick,
    ChatCommand,
    InboundMessage,
    Malformed,
    Screen,
    Unsupported,
    allowed,
    chat_route,
    command,
    parse_event,
    route_chat,
    screen,
    team_chat,
)
from ._media import fetch
from ._outbound import RESET, STOP, FeishuCards, FeishuSink, Messenger, ResetButton
from ._rest import RestClient
from ._sessions_card import sessions_card, sessions_notes
from ._settings import FeishuSettings
from ._team import team_message, team_say, team_screen
from ._texts import _note_card, _notes, _toast
from ._threads import ThreadForks

if TYPE_CHECKING:
    from robota.core import AgentCapabilities, Service
    from robota.core.frontend import GroupChat
    from robota.core.teams import GroupNote, TeamDoor, TeamMessage, ThreadReply

    from ._connection import Delivery

__all__ = ["CARD_SUFFIX", "SESSIONS", "FeishuAdapter", "message_key", "service"]

log = logging.getLogger("robota.transports.feishu")

STORE_TIMEOUT = 10.0
CARD_SUFFIX = ":feishu"
"""A card's turn id is the engine's attempt id and this (see the module docstring)."""
_MUTE = "mention_only"
SESSIONS = "sessions"
"""The ``approval_id`` of a ``/sessions`` card's buttons; the ``decision`` is ``kind:value``
(``SessionsAction``). One drawing's buttons share a turn id, so one click retires them all."""
REACTIONS: Mapping[Reaction, str] = {
    "working": "OnIt",
    "completed": "DONE",
    "failed": "ERROR",
    "interrupted": "CrossMark",
}
WORKING = REACTIONS["working"]


def message_key(message_id: str) -> str:
    """A message's claim key, and its inbox row's (``robota.core.store._inbox``)."""
    return f"feishu-message:{message_id}"


def service(context: TransportContext, *, bot_read: Callable[[str, str], None]) -> Service:
    """The host's service of ``transports.feishu``: the chat service on this adapter."""
    adapter = FeishuAdapter(context, bot_read=bot_read)
    return ChatService(context, adapter, max_busy_chats=adapter.settings.max_busy_chats)


class FeishuAdapter:
    """See the module docstring."""

    name = "feishu"
    route_prefix = "feishu:"
    card_suffix = CARD_SUFFIX
    team_prefix = "/"
    identify_first = False
    own_actions = frozenset({SESSIONS, RESET})
    cards_outlive_turns = True
    """A completed card's Reset is clicked after its turn."""

    def __init__(self, context: TransportContext, *, bot_read: Callable[[str, str], None]) -> None:
        settings = context.settings
        assert isinstance(settings, FeishuSettings), settings
        self.context = context
        self.settings = settings
        self._bot_read = bot_read
        """Told ``(app_id, open_id)`` once the bot's open_id is read (``FeishuTransport``'s
        ``agent_env`` gives it to later agents)."""
        self.notes = _notes(context.locale)
        self.restart_texts: Mapping[str, str] = self.notes
        self.team_owner = settings.user_open_id
        self.screen = Screen(
            owner=settings.user_open_id,
            owner_only=settings.respond_to_owner_only,
            all_group_messages=settings.respond_to_all_group_messages,
        )
        self._service: ChatService | None = None
        self._messenger: Messenger | None = None
        self._tls_context = OneTlsContext()
        self._sink: FeishuSink | None = None
        self._groups: FeishuGroups | None = None
        """The ``GroupMaker`` (``_groups``), inviting the owner; a chat's binds its sender."""
        self._reactions: dict[tuple[str, str], str] = {}
        """(message id, emoji) -> the bot's reaction id, this run's or recorded."""
        self._unsure: set[str] = set()
        """Messages whose reactions the last run may have changed unrecorded (fed again,
        settled late): their settling reads the bot's reactions on the platform first."""
        self._muted: dict[str, bool] = {}
        self._known: list[ChatContext] = []
        self._repaints: set[str] = set()
        """``/sessions`` cards whose Previous / Next was clicked: the reply redraws them."""
        self._threads = ThreadForks(context.db_path, CARD_SUFFIX)
        self._capabilities: dict[str | None, AgentCapabilities] = {}
        queue = queue_texts(context.locale)
        notes = self.notes
        self._toasts: Mapping[ClickVerdict, tuple[str, str | None]] = {
            "not_admin": ("error", None),  # the door's refusal
            "not_owner": ("error", notes["owner_only"]),
            "not_ours": ("warning", notes["not_ours"]),
            "duplicate": ("info", notes["duplicate"]),
            "refused": ("warning", None),  # the claim's refusal
            "restart_cancelled": ("success", notes["restart_cancelled"]),
            "not_cancelled": ("warning", notes["not_cancelled"]),
            "stopping": ("info", notes["stopping"]),
            "queue_cancelled": ("success", queue["cancelling"]),
            "too_late": ("warning", queue["too_late"]),
            "answered": ("success", notes["answered"]),
            "claimed": ("warning", notes["not_ours"]),
        }
        """A click's verdict as its toast (``None``: the verdict's own detail)."""

    def bind(self, service: ChatService) -> None:
        self._service = service

    @property
    def service(self) -> ChatService:
        assert self._service is not None
        return self._service

    @property
    def messenger(self) -> Messenger:
        assert self._messenger is not None
        return self._messenger

    def _declared(self, agent: str | None) -> AgentCapabilities:
        """``declared``, asked once per agent: the config and the installed runtimes stay
        what they were while this runs, and the lookup stats every ``sys.path`` entry on the
        way to each card."""
        found = self._capabilities.get(agent)
        if found is None:
            found = self._capabilities[agent] = declared(self.context.config, agent)
        return found

    # -- the connection ---------------------------------------------------------------------

    @asynccontextmanager
    async def session(self) -> AsyncIterator[FeishuSink]:
        s = self.settings
        async with RestClient(
            domain=s.domain, app_id=s.app_id, app_secret=s.app_secret, tls=self._tls_context.get()
        ) as rest:
            self._messenger = Messenger(rest)
            self._sink = FeishuSink(self._messenger)
            self._groups = FeishuGroups(rest, invite=s.user_open_id, opened=self._group_opened)
            await self._load_chats()
            yield self._sink

    async def identify(self) -> Identified | IdentifyFailed | PlatformRefused:
        """The bot's info: its open_id (the mention filter's, and the agents')."""
        try:
            bot = await self.messenger.rest.bot_info()
        except ApiError as error:
            log.warning("feishu: the bot's info could not be read: %s", error)
            return IdentifyFailed(f"the bot's info could not be read ({error})")
        open_id = bot.get("open_id")
        if isinstance(open_id, str) and open_id:
            self.screen = Screen(
                owner=self.screen.owner,
                owner_only=self.screen.owner_only,
                bot_open_id=open_id,
                all_group_messages=self.screen.all_group_messages,
            )
            self._bot_read(self.settings.app_id, open_id)
        return Identified()

    async def link(
        self, status: LinkStatus, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED
    ) -> None:
        s = self.settings
        client = LongConnectionClient(
            domain=s.domain,
            app_id=s.app_id,
            app_secret=s.app_secret,
            handler=self._on_event,
            on_status=status,
            tls=self._tls_context.get(),
        )
        await client.run(task_status=task_status)

    def refusal(self, error: BaseException) -> str | None:
        return str(error) if isinstance(error, ConnectionRefused) else None

    def serving(self) -> None:
        assert self._groups is not None
        self.context.offer_groups(self._groups)

    async def went_quiet(self) -> None:
        if self._messenger is not None:
            await self._messenger.rest.went_quiet()

    async def _load_chats(self) -> None:
        def read() -> list[ChatContext]:
            with closing(open_reader(self.context.db_path)) as db:
                return chat_contexts(db, "feishu:")

        try:
            chats = await trio.to_thread.run_sync(read)
        except Exception:
            log.exception("feishu: the known chats could not be read")
            return
        self._known = chats
        for chat in chats:
            self._muted[chat.chat_id] = bool(chat.settings.get(_MUTE))

    async def startup_notes(self) -> None:
        """Every known private chat, and each group active in the minute before this start
        (the owner when none is known); one that went counts as an outbound call."""
        recent = self.context.started_at - 60.0
        chats = [
            c
            for c in self._known
            if c.kind == "feishu:p2p" or (c.kind == "feishu:group" and c.updated_at >= recent)
        ]
        card = _note_card(self.notes["title"], self.notes["online"])
        targets = [(c.chat_id.rpartition(":")[2], "chat_id") for c in chats]
        if not targets and self.settings.user_open_id:
            targets = [(self.settings.user_open_id, "open_id")]
        for receive_id, id_type in targets:
            try:
                await self.messenger.send(receive_id, "interactive", card, id_type=id_type)
            except ApiError as error:
                log.warning("feishu: the start-up note to %s failed: %s", receive_id, error)
            else:
                self.service.status(Identified())

    async def _group_opened(self, group: GroupChat, task_id: str) -> None:
        """A group the host made is this transport's route now: served, and greeted."""
        notes = group_notes(self.context.locale)
        await greet_group(self.service, group, task_id, "feishu:group", notes)

    # -- what the last run left ------------------------------------------------------------

    def recovering(self, unsettled: Sequence[tuple[TurnAttempt, str | None]]) -> None:
        anchors = [a.anchor_message_id for a, _ in unsettled]
        self._reactions.update(self._read_reactions(anchors))
        # The last run may have added a reaction it never recorded (killed in between).
        self._unsure.update(filter(None, anchors))

    async def resuming(self, left: InboxLeft) -> None:
        message_ids: list[str | None] = [
            row.message_id for row in (*left.untaken, *(r for r, _ in left.unsettled))
        ]
        if message_ids:
            found = await trio.to_thread.run_sync(self._read_reactions, message_ids)
            self._reactions.update(found)
        self._unsure.update(row.message_id for row, _ in left.unsettled)

    def _read_reactions(self, message_ids: list[str | None]) -> dict[tuple[str, str], str]:
        found: dict[tuple[str, str], str] = {}
        with closing(open_reader(self.context.db_path)) as db:
            for message_id in filter(None, message_ids):
                for emoji, reaction_id in message_reactions(db, message_id).items():
                    if reaction_id is not None:
                        found[(message_id, emoji)] = reaction_id
        return found

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
        await self.service.heard(self._hearing(parsed, delivery.payload.decode()))
        return None

    def hear(self, payload: str) -> Hearing | Ignore | None:
        parsed = parse_event(payload.encode())
        if not isinstance(parsed, InboundMessage):
            return None
        hearing = self._hearing(parsed, payload)
        if isinstance(hearing, Hearing):  # fed again: its OnIt may be the last run's
            self._unsure.add(hearing.message_id)
        return hearing

    def _hearing(self, message: InboundMessage, payload: str) -> Hearing | Ignore:
        """The screen's decision (no write): in a team's group, its door's."""
        door = self.context.teams.get(message.chat_id)
        chat_key = chat_route(message.chat_id)
        if door is not None:  # a team's group: its door decides who is heard
            decision = screen(message, team_screen(door, self.screen.bot_open_id))
        else:
            decision = screen(message, self.screen, muted=self._muted.get(chat_key, False))
        if isinstance(decision, Ignore):
            return decision
        route_key = team_message(decision).route if door is not None else message.route_key
        return Hearing(
            decision,
            route_key,
            message.chat_id,
            message.message_id,
            message.event_id,
            message_key(message.message_id),
            payload,
            decision.text,
            message.created_at,
            f"feishu:{message.chat_type}",
            {
                "message_id": message.message_id,
                "route": route_key,
                "created_at": message.created_at,
            },
            team=door is not None,
            attachments=bool(message.resources),
            message_kind="message_id",
            chat_key=chat_key,
        )

    def message_key(self, chat: str, message_id: str) -> str:
        del chat  # a Feishu message id is unique on its own
        return message_key(message_id)

    def chat_of(self, route_key: str) -> str | None:
        chat = route_chat(route_key)
        return None if chat is None else chat[0]

    def chat_route(self, chat: str) -> str:
        return chat_route(chat)

    def allowed(self, user: str) -> Ignore | None:
        return allowed(user, self.screen)

    def reacted(self, hearing: Hearing) -> bool:
        return (hearing.message_id, WORKING) in self._reactions

    def command(self, hearing: Hearing) -> ChatCommand | None:
        admit: Admit = hearing.item
        return command(admit)

    async def divert(self, hearing: Hearing, request: UserInput) -> ForkTask | None:
        """A topic's first message whose root belongs to a turn: the fork at that turn."""
        return await self._threads.fork_for(hearing.item.message, request)

    async def fetch(self, route: ChatRoute, hearing: Hearing) -> Prepared | Refused:
        """The message's images and files downloaded (``_media``)."""
        message: InboundMessage = hearing.item.message
        notes = media_notes(self.context.locale)
        folder = attachments_folder(self.context.profile.data_dir, message.chat_id)
        saved = await fetch(
            self.messenger.rest, message.message_id, message.resources, folder, notes
        )
        if isinstance(saved, Refused):
            return saved
        images = self._declared(route.agent).images
        return prompt_with(hearing.text, saved, takes_images=images, notes=notes)

    async def run_command(self, route: ChatRoute, hearing: Hearing, command: object) -> None:
        assert isinstance(command, ChatCommand)
        message_id = hearing.message_id
        say = self.service.say
        if command.refusal is not None:
            await say(route, message_id, None, command.refusal)
            await self.service.settle(hearing.chat, message_id, "failed")
            return
        if command.name in ("newgroup", "forkgroup"):
            sender = hearing.item.message.sender_open_id
            maker = self._groups.inviting(sender) if self._groups else None
            fork, title = command.name == "forkgroup", command.argument
            notes = group_notes(self.context.locale)
            host = self.context.host
            made, reply = await open_group(
                host, maker, route.key, fork=fork, title=title, notes=notes
            )
            await say(route, message_id, None, reply)
            await self.service.settle(hearing.chat, message_id, "completed" if made else "failed")
            return
        if command.name == "mute":
            chat_key = chat_route(hearing.chat)
            now = self._muted.get(chat_key, False)
            on = {"on": True, "off": False}.get(command.argument or "", not now)
            await self.context.store.write(
                SetChatSetting(chat_key, "feishu:group", _MUTE, on), timeout=STORE_TIMEOUT
            )
            self._muted[chat_key] = on
            await say(route, message_id, None, self.notes["muted" if on else "unmuted"])
        else:
            host = self.context.host
            if host is None:
                await say(route, message_id, None, self.notes["no_restart"])
                await self.service.settle(hearing.chat, message_id, "failed")
                return
            force = command.argument == "--force"
            schedule = self.service.restarts.request(host, route.key, message_id, force=force)
            if schedule is not None:  # already enrolled: no new note
                await say(route, message_id, None, f"{self.notes['restart']} ({schedule})")
        await self.service.settle(hearing.chat, message_id, "completed")

    # -- team groups (``_team``) -----------------------------------------------------------

    def team_of(self, route_key: str) -> TeamDoor | None:
        chat = team_chat(route_key)
        return None if chat is None else self.context.teams.get(chat)

    def team_message(self, hearing: Hearing) -> TeamMessage:
        admit: Admit = hearing.item
        return team_message(admit)

    def team_say(self, door: TeamDoor) -> Callable[[ThreadReply | GroupNote], Awaitable[None]]:
        return team_say(self.messenger, door.team.chat)

    # -- reactions ----------------------------------------------------------------------------

    async def react(self, chat: str, message_id: str, name: Reaction) -> None:
        if name == "working":
            if chat in self.context.teams:
                # A team's request the door starts again after a restart may carry the killed
                # run's OnIt too: its settling reads the bot's reactions first.
                self._unsure.add(message_id)
            await self._react(message_id, WORKING)
        elif message_id in self._unsure or (message_id, WORKING) not in self._reactions:
            # Its OnIt is not this run's (a message queued before a restart), or unknown.
            await self._settle_unsure(message_id, REACTIONS[name])
        else:
            await self._react(message_id, REACTIONS[name])

    async def unreact(self, chat: str, message_id: str, name: Reaction) -> None:
        del chat
        emoji = REACTIONS[name]
        await self._unreact(message_id, emoji, self._reactions.pop((message_id, emoji), None))

    async def _react(self, message_id: str, emoji: str) -> None:
        try:
            reaction_id = await self.messenger.react(message_id, emoji)
        except ApiError as error:
            log.warning("feishu: the %s reaction failed: %s", emoji, error)
            return
        if reaction_id is not None:
            if emoji == WORKING:
                # The one the service removes later; a terminal reaction is only recorded (a
                # host in many chats kept every message's, issue 28 s.3).
                self._reactions[(message_id, emoji)] = reaction_id
            self.context.store.submit(
                RecordReaction(message_id, emoji, reaction_id), self.service.turns.logged
            )

    async def _settle_unsure(self, message_id: str, emoji: str) -> None:
        """A message's reaction settled after a restart: the bot's reactions on it read
        first, so ``emoji`` is not added twice and no ``OnIt`` is left (one the last run added
        unrecorded, or added again when the message was fed again)."""
        self._unsure.discard(message_id)
        try:
            own = await self.messenger.own_reactions(message_id)
        except ApiError as error:
            log.warning("feishu: the reactions could not be read: %s", error)
            own = [(rid, e) for (m, e), rid in self._reactions.items() if m == message_id]
        if emoji not in {e for _, e in own}:
            await self._react(message_id, emoji)
        self._reactions.pop((message_id, WORKING), None)
        for reaction_id, found in own:
            if found == WORKING:
                await self._unreact(message_id, WORKING, reaction_id)

    async def _unreact(self, message_id: str, emoji: str, reaction_id: str | None) -> None:
        if reaction_id is None:
            return
        try:
            await self.messenger.unreact(message_id, reaction_id)
        except ApiError as error:
            log.warning("feishu: the %s reaction could not be removed: %s", emoji, error)
            return
        self.context.store.submit(ForgetReaction(message_id, emoji), self.service.turns.logged)

    # -- replies ----------------------------------------------------------------------------

    async def send(
        self, route_key: str, chat: str, text: str, thread: str | None, *, reply_to: str | None
    ) -> None:
        """A text, a reply to ``reply_to`` (else to the route's chat or topic)."""
        del chat, thread
        try:
            await self.messenger.to_route(route_key, reply_to, "text", {"text": text})
        except ApiError as error:
            log.warning("feishu: a reply could not be sent: %s", error)

    async def reply(self, route: ChatRoute, anchor: Pending | None, reply: RouteReply) -> bool:
        """A command's reply: a topic's fork said, a ``/sessions`` page drawn (or redrawn)."""
        anchor_id = anchor.message_id if anchor else None
        if self._threads.fork_reply(anchor_id):
            if reply.level != "error":  # forked: the prompt runs, its turn settles the message
                await self.service.say(route, anchor_id, None, reply.text)
                return True
            for dropped in [p for p in route.pending if p.message_id == anchor_id]:
                route.pending.remove(dropped)  # the refused fork dropped its prompt
        if anchor_id is not None and anchor_id in self._repaints:
            self._repaints.discard(anchor_id)
            if reply.listing is not None:  # a page click: the same card, the next page
                await self._sessions_card(route.key, anchor_id, reply.listing, replace=True)
                return True
        # /sessions: its page as a card; the text when the card could not go out.
        listing = reply.listing
        if listing is None or not await self._sessions_card(
            route.key, anchor_id, listing, replace=False
        ):
            await self.service.say(route, anchor_id, None, reply.text)
        if anchor_id is not None:
            outcome: Outcome = "failed" if reply.level == "error" else "completed"
            await self.service.settle(route.channel, anchor_id, outcome)
        return True

    async def _sessions_card(
        self, route_key: str, anchor: str | None, listing: SessionsListing, *, replace: bool
    ) -> bool:
        """The listing drawn as a card, a reply to ``anchor`` (``replace``: ``anchor`` is the
        card, redrawn); its buttons bound before anyone can click them. Whether it went out."""
        drawn = sessions_card(
            listing, sessions_notes(self.context.locale), lambda: secrets.token_urlsafe(18)
        )

        async def bind(message_id: str) -> None:
            drawing = f"{SESSIONS}:{message_id}:{secrets.token_hex(6)}"
            bindings = tuple(
                ActionBinding(a.token, CardAction(drawing, SESSIONS, f"{a.kind}:{a.value}"))
                for a in drawn.actions
            )
            self.service.card_routes[message_id] = route_key
            await self.context.store.write(
                BindCardActions(message_id, route_key, bindings), timeout=STORE_TIMEOUT
            )

        try:
            if replace and anchor is not None:
                await bind(anchor)
                await self.messenger.patch_card(anchor, drawn.card)
            else:
                message_id = await self.messenger.to_route(
                    route_key, anchor, "interactive", drawn.card
                )
                await bind(message_id)
        except ApiError as error:
            log.warning("feishu: the sessions card could not be sent: %s", error)
            return False
        return True

    # -- cards and notes --------------------------------------------------------------------

    def card(self, route: ChatRoute, opening: Opening) -> Card:
        """The turn's card beside the message it answers: Stop, and Reset once completed
        when the agent forks through a turn."""
        assert self._sink is not None
        stop_token = secrets.token_urlsafe(18)
        agent = route.agent or self.context.config.defaults.agent
        layout = self.settings.thinking_card_layout
        stop_label = self.notes["stop"]
        forks = self._declared(agent).fork_at_turn
        reset_token = secrets.token_urlsafe(18) if forks else None
        reset = (
            ResetButton(reset_token, self.notes["reset"], self.notes["reset_warning"])
            if reset_token
            else None
        )
        if opening.anchor is not None:
            self._sink.anchors[opening.card_id] = opening.anchor

        def platform() -> FeishuCards:
            return FeishuCards(
                agent=agent,
                layout=layout,
                stop_token=stop_token,
                stop_label=stop_label,
                reset=reset,
            )

        return Card(platform, stop_token, opening.anchor, reset_token)

    def card_bindings(self, attempt_id: str, turn: ChatTurn) -> tuple[ActionBinding, ...]:
        bindings = [ActionBinding(turn.stop_token, CardAction(turn.card_id, STOP, "cancel"))]
        reset_token: str | None = turn.extra
        if reset_token is not None:
            # Its own turn id: a turn's tokens end with its answer, Reset is for after it.
            action = CardAction(f"{turn.card_id}:reset", RESET, attempt_id)
            bindings.append(ActionBinding(reset_token, action))
        return tuple(bindings)

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
        """A note card beside the person's message, with its button."""
        del chat, thread
        card = _note_card(self.notes["title"], text, button=button)
        return await self.messenger.to_route(route_key, reply_to, "interactive", card)

    async def update_note(self, message_id: str, text: str) -> None:
        await self.messenger.patch_card(message_id, _note_card(self.notes["title"], text))

    async def send_restart_note(
        self, route_key: str, text: str, token: str | None, earlier: str | None, anchor: str | None
    ) -> str | None:
        """``RestartDesk``'s ``send``: a note card (its cancel button when ``token`` is set)."""
        card = _note_card(self.notes["title"], text, button=(self.notes["restart_cancel"], token))
        if earlier is not None:
            await self.messenger.patch_card(earlier, card)  # the cancel button goes
            return None
        message_id = await self.messenger.to_route(route_key, anchor, "interactive", card)
        if token is not None:
            self.service.card_routes[message_id] = route_key
        return message_id

    # -- a card's buttons, answered in the ACK (a toast) ------------------------------------

    async def _on_click(self, click: CardClick) -> Mapping[str, Any]:
        """The service's verdict as a toast; Reset and ``/sessions`` are this adapter's."""
        clicked = await self.service.clicked(
            click.message_id,
            click.operator_open_id,
            click.token,
            click.chat_id,
            event_key=click.event_id,
        )
        action = clicked.action
        if clicked.verdict == "claimed" and action is not None:
            if action.approval_id == SESSIONS:
                return self._sessions_click(clicked.route_key, click, action.decision)
            # RESET: the engine's /turns reset; its reply to the card
            self.service.turns.route(clicked.route_key).commands.append(
                Pending(click.message_id, "")
            )
            self.context.port.tell(clicked.route_key, UserInput(f"/turns reset {action.decision}"))
            return _toast("info", self.notes["resetting"])
        kind, text = self._toasts[clicked.verdict]
        return _toast(kind, text if text is not None else clicked.detail or "")

    def _sessions_click(self, route_key: str, click: CardClick, decision: str) -> Mapping[str, Any]:
        """A ``/sessions`` card's button (claimed): the engine's command on the route, its
        reply to the card (a page: the card redrawn), or a group made of the entry."""
        notes = sessions_notes(self.context.locale)
        kind, _, value = decision.partition(":")
        route = self.service.turns.route(route_key)
        if kind in ("page", "switch"):
            text = value if kind == "page" else f"/switch {value}"
            if kind == "page":
                self._repaints.add(click.message_id)
            route.commands.append(Pending(click.message_id, text))
            self.context.port.tell(route_key, UserInput(text))
            return _toast("info", notes["paging" if kind == "page" else "switching"])
        if kind in ("newgroup", "forkgroup"):
            self.service.nursery.start_soon(
                self._group_of_entry, route, click, value, kind == "forkgroup"
            )
            return _toast("info", notes["grouping"])
        log.warning("feishu: a sessions action of unknown kind %r refused", kind)
        return _toast("warning", self.notes["not_ours"])

    async def _group_of_entry(
        self, route: ChatRoute, click: CardClick, task_id: str, fork: bool
    ) -> None:
        maker = self._groups.inviting(click.operator_open_id) if self._groups else None
        _, reply = await open_group(
            self.context.host,
            maker,
            route.key,
            fork=fork,
            title=None,
            notes=group_notes(self.context.locale),
            task=task_id,
        )
        await self.service.say(route, click.message_id, None, reply)
