"""The Feishu transport as the host's service: the bot, served end to end.

One ``FeishuService`` per host run of ``transports.feishu`` (the host's ``transports``
supervisor restarts it after a crash, built anew from the same context). In its nursery:

* the REST client, the card renderer's timers, its delivery service (``CardDelivery`` over
  ``FeishuSink``) and ``CardHost``, one card actor per running turn;
* the long connection (``LongConnectionClient``), whose handler decides fast and hands off:
  a message goes to its route's lane (one task per route, so a chat's messages keep their
  order and one slow chat holds no other), a card click is answered in the ACK;
* one reader per route the bot serves, on the front-end port (``TransportContext.port``), and
  the restart's recovery: ``robota.core.frontend.ChatTurns``, which this service extends:
  ``TurnBegan`` opens the turn's card, ``TurnUpdate`` feeds it, ``TurnFinished`` ends it; the
  card renderer delivers the final answer (the ledger) and says so, and the reaction on the
  person's message goes from ``OnIt`` to ``DONE`` / ``ERROR`` / ``CrossMark``.

A message's way in is ``_inbound``'s order: owner and mention filters before any write, the
durable claim of the event id and the message id, the stale guard, the awaited ``OnIt``, then
the route (verbatim text) or the transport's own command. Every message the screen admits
tells the host (``note_inbound``: a pending safe restart waits another quiet window).
Readiness (``context.report``):
``connected`` once the long connection is up and an outbound call succeeded (the bot's info
at start, the start-up notes).

The card's turn id is the engine's attempt id with ``:feishu`` appended: the engine claims its
own ledger row for the attempt (``TurnFinished`` is told once), the card renderer claims this
one for the answer it sends to the chat, and the two exactly-once gates never see each other.

The safe restart (``RestartNotes``, ``PendingFinals``; ``robota.core.frontend.RestartDesk``
keeps the notes' bookkeeping): the owner's ``/restart`` (or
``/restart --force``) enrolls the chat; its news is a note card there, in the profile's
locale. The ``scheduled`` card carries a cancel button whose token is bound server side to the
schedule id (an old card cannot cancel a newer restart) and is answered like any click;
``cancelled`` and ``restarting`` replace that card, ``restarted`` (the new host) is a new one.
``pending_finals`` counts the turns that ended but whose card has not delivered the answer.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Mapping, Sequence
from contextlib import closing
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import trio

from robota.core import LoopPort, Timers
from robota.core.cards import CardDelivery, CardHost
from robota.core.engine import (
    AnswerApproval,
    Interrupt,
    RouteReply,
    SessionsListing,
    UserInput,
)
from robota.core.frontend import (
    NOTE_TIMEOUT,
    QUEUE_CANCEL,
    RESTART_CANCEL,
    ChatRoute,
    ChatTurn,
    ChatTurns,
    Opening,
    Outcome,
    Pending,
    Prepared,
    QueueNote,
    RecoveredTurn,
    Refused,
    RestartDesk,
    RestartNote,
    TransportContext,
    TransportStatus,
    attachments_folder,
    inbound_claims,
    media_notes,
    prompt_with,
    queue_texts,
    recovery_notes,
)
from robota.core.store import (
    ActionBinding,
    AppendAuditEvent,
    BindCardActions,
    CardAction,
    ChatContext,
    ClaimCardAction,
    Claimed,
    ClaimInboundEvent,
    ForgetReaction,
    NoteChat,
    RecordReaction,
    SetChatSetting,
    Task,
    TurnAttempt,
    chat_contexts,
    message_reactions,
    open_reader,
)
from robota.core.store import task as load_task
from robota.core.teams import FollowUpInput, LoopReplies, StartRequest, TeamDoor, say_offline

from ._agents import declared
from ._client import LongConnectionClient
from ._connection import Delivery
from ._errors import ApiError, ConnectionRefused
from ._groups import FeishuGroups, group_notes, open_group, welcome_text
from ._inbound import (
    Admit,
    CardClick,
    ChatCommand,
    Ignore,
    InboundMessage,
    Malformed,
    Screen,
    Unsupported,
    allowed,
    chat_route,
    command,
    parse_event,
    screen,
)
from ._media import fetch
from ._outbound import RESET, STOP, FeishuCards, FeishuSink, Messenger, ResetButton
from ._rest import RestClient
from ._sessions_card import sessions_card, sessions_notes
from ._settings import _BOT_OPEN_IDS, FeishuSettings
from ._team import team_chat, team_message, team_say, team_screen
from ._texts import _note_card, _notes, _toast
from ._threads import ThreadForks

if TYPE_CHECKING:
    from robota.core import AgentCapabilities
    from robota.core.frontend import GroupChat

__all__ = ["FeishuService"]

log = logging.getLogger("robota.transports.feishu")

STORE_TIMEOUT = 10.0
CARD_SUFFIX = ":feishu"
"""A card's turn id is the engine's attempt id and this (see the module docstring)."""
_REACTIONS: Mapping[Outcome, str] = {
    "completed": "DONE",
    "failed": "ERROR",
    "interrupted": "CrossMark",
}
_MUTE = "mention_only"
SESSIONS = "sessions"
"""The ``approval_id`` of a ``/sessions`` card's buttons; the ``decision`` is ``kind:value``
(``SessionsAction``). One drawing's buttons share a turn id, so one click retires them all."""


@dataclass(slots=True)
class _Turn(ChatTurn):
    """A running turn's card and the person's messages it answers."""

    reset_token: str | None = None
    """The completed card's Reset button (``None``: the agent cannot fork through a turn)."""


class FeishuService(ChatTurns[_Turn]):
    """See the module docstring."""

    def __init__(self, context: TransportContext) -> None:
        super().__init__(
            context, name="feishu", route_prefix="feishu:", card_suffix=CARD_SUFFIX, log=log
        )
        settings = context.settings
        assert isinstance(settings, FeishuSettings), settings
        self.settings = settings
        self.notes = _notes(context.locale)
        self.screen = Screen(
            owner=settings.user_open_id,
            owner_only=settings.respond_to_owner_only,
            all_group_messages=settings.respond_to_all_group_messages,
        )
        self._card_routes: dict[str, str] = {}
        """Card message id -> route key, for clicks (a topic's route is not the chat's)."""
        self._reactions: dict[tuple[str, str], str] = {}
        self._muted: dict[str, bool] = {}
        self._known: list[ChatContext] = []
        self._messenger: Messenger | None = None
        self._sink: FeishuSink | None = None
        self._outbound_ok = False
        self._restarts = RestartDesk(
            self._store, self.notes, self._send_restart_note, name="feishu", log=log
        )
        self._groups: FeishuGroups | None = None
        """The ``GroupMaker`` (``_groups``), inviting the owner; a chat's binds its sender."""
        self._teams: list[LoopReplies] = []
        """The team groups' doors this service is attached to (``_team``)."""
        self._repaints: set[str] = set()
        """``/sessions`` cards whose Previous / Next was clicked: the reply redraws them."""
        self._threads = ThreadForks(context.db_path, CARD_SUFFIX)
        self._capabilities: dict[str | None, AgentCapabilities] = {}

    def _declared(self, agent: str | None) -> AgentCapabilities:
        """``declared``, asked once per agent: the config and the installed runtimes stay
        what they were while this runs, and the lookup stats every ``sys.path`` entry on the
        way to each card."""
        found = self._capabilities.get(agent)
        if found is None:
            found = self._capabilities[agent] = declared(self.context.config, agent)
        return found

    # -- the host's safe restart (RestartNotes, PendingFinals) ------------------------------

    def restart_note(self, note: RestartNote) -> None:
        self._restarts.note(note, self._nursery)

    async def _send_restart_note(
        self, route_key: str, text: str, token: str | None, earlier: str | None, anchor: str | None
    ) -> str | None:
        """``RestartDesk``'s ``send``: a note card (its cancel button when ``token`` is set)."""
        assert self._messenger is not None
        notes = self.notes
        card = _note_card(notes["title"], text, button=(notes["restart_cancel"], token))
        if earlier is not None:
            await self._messenger.patch_card(earlier, card)  # the cancel button goes
            return None
        message_id = await self._messenger.to_route(route_key, anchor, "interactive", card)
        if token is not None:
            self._card_routes[message_id] = route_key
        return message_id

    # -- the service ------------------------------------------------------------------------

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        s = self.settings
        async with (
            RestClient(domain=s.domain, app_id=s.app_id, app_secret=s.app_secret) as rest,
            trio.open_nursery() as nursery,
        ):
            self._nursery = nursery
            self._port = LoopPort()
            self._messenger = Messenger(rest)
            self._sink = FeishuSink(self._messenger)
            self._groups = FeishuGroups(rest, invite=s.user_open_id, opened=self._group_opened)
            timers = Timers()
            self._delivery = CardDelivery(self._sink, self._store)
            self._cards = CardHost(store=self._store, timers=timers)
            await nursery.start(timers.run)
            await nursery.start(self._delivery.run)
            await nursery.start(self._cards.run)
            await self._load_chats()
            await self.recover()
            await self._read_bot(rest)
            client = LongConnectionClient(
                domain=s.domain, app_id=s.app_id, app_secret=s.app_secret, handler=self._on_event
            )
            up = trio.Event()
            nursery.start_soon(self._connect, client, up)
            await up.wait()
            await self._startup_notes()
            self._attach_teams(nursery)
            task_status.started()
            try:
                # Readiness waits for one outbound call to succeed, however long that takes.
                while not await self._ready(rest):
                    await trio.sleep(5.0)
                self.context.report(TransportStatus("connected"))
                self.context.offer_groups(self._groups)
                await trio.sleep_forever()
            finally:
                await say_offline(self._teams, NOTE_TIMEOUT)  # on the way down

    async def _ready(self, rest: RestClient) -> bool:
        if not self._outbound_ok:
            await self._read_bot(rest)
        return self._outbound_ok

    async def _connect(self, client: LongConnectionClient, up: trio.Event) -> None:
        try:
            async with trio.open_nursery() as nursery:
                await nursery.start(client.run)
                log.info("feishu long connection ready")
                up.set()
        except* ConnectionRefused as group:
            reason = str(group.exceptions[0])
        else:
            return
        log.error("feishu transport stopped: %s", reason)
        self.context.report(TransportStatus("failed", reason))
        # Final for this run: no retry loop against refused credentials.
        await trio.sleep_forever()

    async def _read_bot(self, rest: RestClient) -> None:
        try:
            bot = await rest.bot_info()
        except ApiError as error:
            log.warning("feishu: the bot's info could not be read: %s", error)
            return
        open_id = bot.get("open_id")
        if isinstance(open_id, str) and open_id:
            self.screen = Screen(
                owner=self.screen.owner,
                owner_only=self.screen.owner_only,
                bot_open_id=open_id,
                all_group_messages=self.screen.all_group_messages,
            )
            _BOT_OPEN_IDS[self.settings.app_id] = open_id
        self._outbound_ok = True

    async def _load_chats(self) -> None:
        def read() -> list[ChatContext]:
            db = open_reader(self.context.db_path)
            try:
                return chat_contexts(db, "feishu:")
            finally:
                db.close()

        try:
            chats = await trio.to_thread.run_sync(read)
        except Exception:
            log.exception("feishu: the known chats could not be read")
            return
        self._known = chats
        for chat in chats:
            self._muted[chat.chat_id] = bool(chat.settings.get(_MUTE))

    async def _startup_notes(self) -> None:
        assert self._messenger is not None
        # Every known private chat, and each group active in the minute before this start.
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
                await self._messenger.send(receive_id, "interactive", card, id_type=id_type)
                self._outbound_ok = True
            except ApiError as error:
                log.warning("feishu: the start-up note to %s failed: %s", receive_id, error)

    async def _group_opened(self, group: GroupChat, task_id: str) -> None:
        """A group the host made is this transport's route now: served, and greeted."""
        self._route(group.route_key)
        self._store.submit(NoteChat(group.route_key, "feishu:group"), self.logged)
        task = await trio.to_thread.run_sync(self._read_task, task_id)
        await self._say(group.route_key, None, welcome_text(task, group_notes(self.context.locale)))

    def _read_task(self, task_id: str) -> Task | None:
        with closing(open_reader(self.context.db_path)) as db:
            return load_task(db, task_id)

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

    def _route(self, route_key: str) -> ChatRoute:
        return self.route(route_key)

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

    async def _on_click(self, click: CardClick) -> Mapping[str, Any]:
        notes = self.notes
        door = self._team_door(self._card_routes.get(click.message_id, ""))
        if door is not None:  # a team thread's card: admins answer its approvals
            if not door.may_approve(click.operator_open_id):
                log.info("feishu card action refused: not an admin of team %s", door.team.name)
                return _toast("error", door.refusal("approval_admins_only"))
        else:
            refused = allowed(click.operator_open_id, self.screen)
            if refused is not None:
                log.info("feishu card action refused: %s", refused.reason)
                return _toast("error", notes["owner_only"])
        if click.token is None:
            return _toast("warning", notes["not_ours"])
        first = await self._store.write(
            ClaimInboundEvent(click.event_id, "card_action"), timeout=STORE_TIMEOUT
        )
        if not first:
            return _toast("info", notes["duplicate"])
        route_key = self._card_routes.get(click.message_id, chat_route(click.chat_id))
        outcome = await self._store.write(
            ClaimCardAction(click.token, click.message_id, route_key), timeout=STORE_TIMEOUT
        )
        if not isinstance(outcome, Claimed):
            log.info("feishu card action refused: %s", outcome.reason)
            return _toast("warning", outcome.message)
        action = outcome.action
        if action.approval_id == RESTART_CANCEL:
            host = self.context.host
            if host is None or not host.cancel_restart(action.decision):
                return _toast("warning", notes["not_cancelled"])
            return _toast("success", notes["restart_cancelled"])
        if action.approval_id == STOP:
            self.context.port.tell(route_key, Interrupt())
            return _toast("info", notes["stopping"])
        if action.approval_id == QUEUE_CANCEL:
            return self._queue_click(route_key, click, action.decision)
        if action.approval_id == SESSIONS:
            return self._sessions_click(route_key, click, action.decision)
        if action.approval_id == RESET:  # the engine's /turns reset; its reply to the card
            self._route(route_key).commands.append(Pending(click.message_id, ""))
            self.context.port.tell(route_key, UserInput(f"/turns reset {action.decision}"))
            return _toast("info", notes["resetting"])
        self.context.port.tell(route_key, AnswerApproval(action.approval_id, action.decision))  # type: ignore[arg-type]
        return _toast("success", notes["answered"])

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
        action = CardAction(f"queue:{note.prompt_id}", QUEUE_CANCEL, str(note.prompt_id))
        await self._store.write(
            BindCardActions(message_id, note.route_key, (ActionBinding(token, action),)),
            timeout=STORE_TIMEOUT,
        )
        now = self.queue_notes.posted(note.route_key, note.prompt_id, message_id)
        if now is not None and now.state != "queued":  # it started (or went) meanwhile
            await self._settle_note(now)

    def queued_started(self, note: QueueNote) -> None:
        assert self._nursery is not None
        if note.message_id is not None:  # else the note, once posted, sees it started
            self._nursery.start_soon(self._settle_note, note)

    async def _settle_note(self, note: QueueNote) -> None:
        """The note without its action: ``started`` or ``cancelled``."""
        assert self._messenger is not None and note.message_id is not None
        texts = queue_texts(self.context.locale)
        card = _note_card(self.notes["title"], texts[note.state])
        try:
            await self._messenger.patch_card(note.message_id, card)
        except ApiError as error:
            log.warning("feishu: the queued note could not be updated: %s", error)

    def _queue_click(self, route_key: str, click: CardClick, decision: str) -> Mapping[str, Any]:
        """A claimed Cancel (``ChatTurns.cancel_queued``): the note says cancelled and the
        message gets CrossMark; too late once the prompt's turn began."""
        assert self._nursery is not None
        texts = queue_texts(self.context.locale)
        if not decision.isdigit():
            log.warning("feishu: a queue action names no prompt: %r", decision)
            return _toast("warning", self.notes["not_ours"])
        cancelled = self.cancel_queued(self._route(route_key), int(decision), click.message_id)
        if cancelled is None:
            return _toast("warning", texts["too_late"])
        if cancelled.anchor is not None:
            self._nursery.start_soon(self._settle_reaction, cancelled.anchor, "CrossMark")
        self._nursery.start_soon(self._settle_note, cancelled)
        return _toast("success", texts["cancelling"])

    # -- the /sessions card (``_sessions_card``) ------------------------------------------

    async def _sessions_card(
        self, route_key: str, anchor: str | None, listing: SessionsListing, *, replace: bool
    ) -> bool:
        """The listing drawn as a card, a reply to ``anchor`` (``replace``: ``anchor`` is the
        card, redrawn); its buttons bound before anyone can click them. Whether it went out."""
        assert self._messenger is not None
        drawn = sessions_card(
            listing, sessions_notes(self.context.locale), lambda: secrets.token_urlsafe(18)
        )

        async def bind(message_id: str) -> None:
            drawing = f"{SESSIONS}:{message_id}:{secrets.token_hex(6)}"
            bindings = tuple(
                ActionBinding(a.token, CardAction(drawing, SESSIONS, f"{a.kind}:{a.value}"))
                for a in drawn.actions
            )
            self._card_routes[message_id] = route_key
            await self._store.write(
                BindCardActions(message_id, route_key, bindings), timeout=STORE_TIMEOUT
            )

        try:
            if replace and anchor is not None:
                await bind(anchor)
                await self._messenger.patch_card(anchor, drawn.card)
            else:
                message_id = await self._messenger.to_route(
                    route_key, anchor, "interactive", drawn.card
                )
                await bind(message_id)
        except ApiError as error:
            log.warning("feishu: the sessions card could not be sent: %s", error)
            return False
        return True

    def _sessions_click(self, route_key: str, click: CardClick, decision: str) -> Mapping[str, Any]:
        """A ``/sessions`` card's button (claimed): the engine's command on the route, its
        reply to the card (a page: the card redrawn), or a group made of the entry."""
        assert self._nursery is not None
        notes = sessions_notes(self.context.locale)
        kind, _, value = decision.partition(":")
        route = self._route(route_key)
        if kind in ("page", "switch"):
            text = value if kind == "page" else f"/switch {value}"
            if kind == "page":
                self._repaints.add(click.message_id)
            route.commands.append(Pending(click.message_id, text))
            self.context.port.tell(route_key, UserInput(text))
            return _toast("info", notes["paging" if kind == "page" else "switching"])
        if kind in ("newgroup", "forkgroup"):
            self._nursery.start_soon(
                self._group_of_entry, route_key, click, value, kind == "forkgroup"
            )
            return _toast("info", notes["grouping"])
        log.warning("feishu: a sessions action of unknown kind %r refused", kind)
        return _toast("warning", self.notes["not_ours"])

    async def _group_of_entry(
        self, route_key: str, click: CardClick, task_id: str, fork: bool
    ) -> None:
        maker = self._groups.inviting(click.operator_open_id) if self._groups else None
        _, reply = await open_group(
            self.context.host,
            maker,
            route_key,
            fork=fork,
            title=None,
            notes=group_notes(self.context.locale),
            task=task_id,
        )
        await self._say(route_key, click.message_id, reply)

    def open_turn(self, route: ChatRoute, opening: Opening) -> _Turn:
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
        address = self.open_card(
            route,
            opening,
            lambda: FeishuCards(
                agent=agent,
                layout=layout,
                stop_token=stop_token,
                stop_label=stop_label,
                reset=reset,
            ),
        )
        messages = list(opening.messages)
        return _Turn(
            opening.card_id, route.key, address, stop_token, messages, reset_token=reset_token
        )

    # -- team groups (``_team``) -----------------------------------------------------------

    def _attach_teams(self, nursery: trio.Nursery) -> None:
        assert self._port is not None and self._messenger is not None
        messenger = self._messenger
        self._teams = LoopReplies.attach_all(
            self.context.teams.values(),
            self._port,
            nursery,
            inputs=self.team_input,
            say=lambda door: team_say(messenger, door.team.chat),
            owner=self.settings.user_open_id,
        )

    def _team_door(self, route_key: str) -> TeamDoor | None:
        chat = team_chat(route_key)
        return None if chat is None else self.context.teams.get(chat)

    def team_input(self, effect: StartRequest | FollowUpInput) -> None:
        """A team request starts, or text goes on to its thread's task (the loop)."""
        assert self._nursery is not None
        self._nursery.start_soon(self._team_input, self._route(effect.route), effect)

    async def _team_input(self, route: ChatRoute, effect: StartRequest | FollowUpInput) -> None:
        await self._react(effect.anchor, "OnIt")
        text = effect.text
        if text.startswith("/"):
            route.commands.append(Pending(effect.anchor, text))
        else:
            route.pending.append(Pending(effect.anchor, text))
        for request in effect.requests():
            self.context.port.tell(route.key, request)

    # -- after a restart (``ChatTurns.recover``) -------------------------------------------

    def recovering(self, unsettled: Sequence[tuple[TurnAttempt, str | None]]) -> None:
        self._reactions.update(self._read_reactions([a.anchor_message_id for a, _ in unsettled]))

    def recovered(self, plan: Sequence[RecoveredTurn]) -> None:
        """Tell each chat what became of its unsettled turns (``_recovery_notes``)."""
        assert self._nursery is not None
        for item, text in recovery_notes(plan, self.context.locale):
            turn = self._turns.get(item.attempt.id)
            anchor = self._sink.anchors.get(turn.card_id) if turn and self._sink else None
            if anchor is not None:  # said beside the message it concerns
                self._nursery.start_soon(self._say, item.attempt.route_key, anchor, text)

    def _read_reactions(self, message_ids: list[str | None]) -> dict[tuple[str, str], str]:
        found: dict[tuple[str, str], str] = {}
        db = open_reader(self.context.db_path)
        try:
            for message_id in filter(None, message_ids):
                for emoji, reaction_id in message_reactions(db, message_id).items():
                    if reaction_id is not None:
                        found[(message_id, emoji)] = reaction_id
        finally:
            db.close()
        return found

    def card_posted(self, attempt_id: str, turn: _Turn, message_id: str) -> None:
        self._card_routes[message_id] = turn.route_key
        bindings = [ActionBinding(turn.stop_token, CardAction(turn.card_id, STOP, "cancel"))]
        if turn.reset_token is not None:
            # Its own turn id: a turn's tokens end with its answer, Reset is for after it.
            action = CardAction(f"{turn.card_id}:reset", RESET, attempt_id)
            bindings.append(ActionBinding(turn.reset_token, action))
        self._store.submit(
            BindCardActions(message_id, turn.route_key, tuple(bindings)), self.logged
        )

    def answer_done(self, turn: _Turn, outcome: Outcome) -> None:
        assert self._nursery is not None
        if self._sink is not None:
            self._sink.anchors.pop(turn.card_id, None)
        for message_id in turn.messages:
            self._nursery.start_soon(self._settle_reaction, message_id, _REACTIONS[outcome])

    # -- outbound helpers ------------------------------------------------------------------

    async def _react(self, message_id: str, emoji: str) -> None:
        assert self._messenger is not None
        try:
            reaction_id = await self._messenger.react(message_id, emoji)
        except ApiError as error:
            log.warning("feishu: the %s reaction failed: %s", emoji, error)
            return
        if reaction_id is not None:
            self._reactions[(message_id, emoji)] = reaction_id
            self._store.submit(RecordReaction(message_id, emoji, reaction_id), self.logged)

    async def _settle_reaction(self, message_id: str, emoji: str) -> None:
        """``OnIt`` on ``message_id`` replaced by ``emoji``."""
        assert self._messenger is not None
        await self._react(message_id, emoji)
        reaction_id = self._reactions.pop((message_id, "OnIt"), None)
        if reaction_id is None:
            return
        try:
            await self._messenger.unreact(message_id, reaction_id)
        except ApiError as error:
            log.warning("feishu: the OnIt reaction could not be removed: %s", error)
            return
        self._store.submit(ForgetReaction(message_id, "OnIt"), self.logged)

    async def _say(self, route_key: str, anchor: str | None, text: str) -> None:
        assert self._messenger is not None
        try:
            await self._messenger.to_route(route_key, anchor, "text", {"text": text})
        except ApiError as error:
            log.warning("feishu: a reply could not be sent: %s", error)

    async def _reply_notice(self, route_key: str, anchor: str | None, reply: RouteReply) -> None:
        # /sessions: its page as a card; the text when the card could not go out.
        listing = reply.listing
        if listing is None or not await self._sessions_card(
            route_key, anchor, listing, replace=False
        ):
            await self._say(route_key, anchor, reply.text)
        if anchor is not None:
            await self._settle_reaction(anchor, "ERROR" if reply.level == "error" else "DONE")
