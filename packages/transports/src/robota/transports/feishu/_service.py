"""The Feishu transport as the host's service: the bot, served end to end.

One ``FeishuService`` per host run of ``transports.feishu`` (the host's ``transports``
supervisor restarts it after a crash, built anew from the same context). In its nursery:

* the REST client, the card renderer's timers, its delivery service (``CardDelivery`` over
  ``FeishuSink``) and ``CardHost``, one card actor per running turn;
* the long connection (``LongConnectionClient``), whose handler decides fast and hands off:
  a message goes to its route's lane (one task per route, so a chat's messages keep their
  order and one slow chat holds no other), a card click is answered in the ACK;
* one reader per route the bot serves, on the front-end port (``TransportContext.port``):
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

The safe restart (``RestartNotes``, ``PendingFinals``): the owner's ``/restart`` (or
``/restart --force``) enrolls the chat; its news is a note card there, in the profile's
locale. The ``scheduled`` card carries a cancel button whose token is bound server side to the
schedule id (an old card cannot cancel a newer restart) and is answered like any click;
``cancelled`` and ``restarting`` replace that card, ``restarted`` (the new host) is a new one.
``pending_finals`` counts the turns that ended but whose card has not delivered the answer.
"""

from __future__ import annotations

import logging
import secrets
import time
from collections import deque
from collections.abc import Mapping
from contextlib import closing
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import trio

from robota.core import Address, LoopPort, Timers
from robota.core.cards import (
    CardDelivery,
    CardHost,
    CardTurn,
    FinalAnswerDelivered,
    FinalAnswerFailed,
    ProgressCardPosted,
)
from robota.core.engine import (
    AnswerApproval,
    InputSteered,
    Interrupt,
    RouteReply,
    TaskOpened,
    TurnBegan,
    TurnFinished,
    TurnUpdate,
    UserInput,
    prompt_answers,
)
from robota.core.events import TurnCompleted, TurnError
from robota.core.frontend import Overflowed, RestartNote, TransportContext, TransportStatus
from robota.core.presentation import UserSteer
from robota.core.store import (
    ACTIVE_TURN_STATUSES,
    ActionBinding,
    AnchorTurnAttempt,
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
    Together,
    TurnAttempt,
    chat_contexts,
    message_reactions,
    open_reader,
    unsettled_chat_turns,
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
    freshness,
    parse_event,
    screen,
)
from ._media import Prepared, Refused, fetch, media_notes, prompt_with, safe_name
from ._outbound import RESET, STOP, FeishuCards, FeishuSink, Messenger, ResetButton
from ._recovery_notes import recovery_note, recovery_texts
from ._rest import RestClient
from ._settings import _BOT_OPEN_IDS, FeishuSettings
from ._team import team_chat, team_message, team_say, team_screen

if TYPE_CHECKING:
    from robota.core.frontend import GroupChat, RouteLink

__all__ = ["FeishuService"]

log = logging.getLogger("robota.transports.feishu")

STORE_TIMEOUT = 10.0
NOTE_TIMEOUT = 5.0
"""Seconds a restart note may take on its way out (it is shielded from the host's stop)."""
CARD_SUFFIX = ":feishu"
"""A card's turn id is the engine's attempt id and this (see the module docstring)."""
RECOVER_SINCE = 3600.0
"""Seconds back a restart looks for turns whose card or answer the last run left unsent."""
_REACTIONS = {"completed": "DONE", "failed": "ERROR", "interrupted": "CrossMark"}
_MUTE = "mention_only"
RESTART_CANCEL = "restart_cancel"
"""The ``approval_id`` of a restart note's cancel button (its ``decision`` is the schedule id)."""


@dataclass(slots=True)
class _Pending:
    message_id: str
    text: str


@dataclass(slots=True)
class _Turn:
    """A running turn's card and the person's messages it answers."""

    card_id: str
    route_key: str
    address: Address
    stop_token: str
    messages: list[str] = field(default_factory=list)
    status: str | None = None
    completed: bool = False
    """The card was told the turn's end (from the route, or from the store after a restart)."""
    reset_token: str | None = None
    """The completed card's Reset button (``None``: the agent cannot fork through a turn)."""


@dataclass(slots=True)
class _Route:
    key: str
    lane: trio.MemorySendChannel[Admit]
    link: RouteLink
    pending: deque[_Pending] = field(default_factory=deque)
    commands: deque[str] = field(default_factory=deque)
    agent: str | None = None


def _notes(locale: str) -> Mapping[str, str]:
    if locale.startswith("zh"):
        return {
            "online": "robota 已上线。可以开始对话。",
            "title": "robota",
            "stop": "停止",
            "stopping": "正在停止",
            "answered": "已提交",
            "owner_only": "只有机器人的主人可以操作",
            "duplicate": "已处理",
            "muted": "本群已开启仅 @ 时回复",
            "unmuted": "本群所有消息都会回复",
            "restart": "已安排重启",
            "no_restart": "此处无法重启",
            "not_ours": "这不是 robota 的按钮",
            "restart_scheduled": "已安排重启。当前任务结束、回复送达且 15 秒内没有新消息后进行。",
            "restart_forced": "已安排立即重启。",
            "restart_cancel": "取消重启",
            "restart_cancelled": "重启已取消。",
            "restart_restarting": "正在重启……",
            "restart_restarted": "重启完成。robota 已重新上线。",
            "reason": "原因",
            "not_cancelled": "这次重启已无法取消",
            "reset": "重置到这一轮",
            "reset_warning": "会话回到这一轮之后; 磁盘上的文件不会还原。",
            "resetting": "正在重置",
        }
    return {
        "online": "robota is online: write here to start.",
        "title": "robota",
        "stop": "Stop",
        "stopping": "Stopping",
        "answered": "Answered",
        "owner_only": "Only the bot's owner can do that",
        "duplicate": "Already handled",
        "muted": "Mention-only in this group: @mention the bot to talk to it",
        "unmuted": "Every message in this group is read",
        "restart": "Restart scheduled",
        "no_restart": "Nothing can restart from here",
        "not_ours": "Not one of robota's buttons",
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
        "not_cancelled": "This restart can no longer be cancelled",
        "reset": "Reset to this turn",
        "reset_warning": "The conversation goes back to just after this turn; files on disk "
        "are not reverted.",
        "resetting": "Resetting",
    }


class FeishuService:
    """See the module docstring."""

    def __init__(self, context: TransportContext) -> None:
        settings = context.settings
        assert isinstance(settings, FeishuSettings), settings
        self.context = context
        self.settings = settings
        self.notes = _notes(context.locale)
        self.screen = Screen(
            owner=settings.user_open_id,
            owner_only=settings.respond_to_owner_only,
            all_group_messages=settings.respond_to_all_group_messages,
        )
        self._store = context.store
        self._routes: dict[str, _Route] = {}
        self._turns: dict[str, _Turn] = {}
        self._card_routes: dict[str, str] = {}
        """Card message id -> route key, for clicks (a topic's route is not the chat's)."""
        self._reactions: dict[tuple[str, str], str] = {}
        self._muted: dict[str, bool] = {}
        self._known: list[ChatContext] = []
        self._nursery: trio.Nursery | None = None
        self._port: LoopPort | None = None
        self._messenger: Messenger | None = None
        self._sink: FeishuSink | None = None
        self._delivery: CardDelivery | None = None
        self._cards: CardHost | None = None
        self._outbound_ok = False
        self._restart_anchors: dict[str, str] = {}
        """Route key -> the ``/restart`` message its scheduled note answers."""
        self._restart_cards: dict[tuple[str, str], str] = {}
        """(schedule id, route key) -> the message id of its scheduled note card."""
        self._noted: set[tuple[str, str]] = set()
        """(schedule id, route key) told ``scheduled`` (so a second ``/restart`` says so)."""
        self._groups: FeishuGroups | None = None
        """The ``GroupMaker`` (``_groups``), inviting the owner; a chat's binds its sender."""
        self._teams: list[LoopReplies] = []
        """The team groups' doors this service is attached to (``_team``)."""

    # -- the host's safe restart (RestartNotes, PendingFinals) ------------------------------

    def restart_note(self, note: RestartNote) -> None:
        if self._nursery is None:
            log.warning("feishu: restart note %s to %s dropped (not running)", note.phase, note)
            return
        if note.phase == "scheduled":
            self._noted.add((note.schedule_id, note.route_key))
        self._nursery.start_soon(self._show_restart_note, note)

    def pending_finals(self) -> int:
        return sum(1 for turn in self._turns.values() if turn.completed)

    async def _show_restart_note(self, note: RestartNote) -> None:
        notes = self.notes
        text = notes[f"restart_{note.phase}"]
        if note.phase == "scheduled" and note.forced:
            text = notes["restart_forced"]
        if note.reason:
            text = f"{text}\n\n{notes['reason']}: {note.reason}"
        token = secrets.token_urlsafe(18) if note.phase == "scheduled" else None
        card = _note_card(notes["title"], text, button=(notes["restart_cancel"], token))
        # Shielded, and bounded: the restarting note is told just before the host stops its
        # transports, and would otherwise be cancelled on its way out.
        with trio.move_on_after(NOTE_TIMEOUT) as scope:
            scope.shield = True
            await self._send_restart_note(note, card, token)

    async def _send_restart_note(
        self, note: RestartNote, card: dict[str, Any], token: str | None
    ) -> None:
        """A new note card (its cancel button bound), or the scheduled one replaced."""
        assert self._messenger is not None
        key = (note.schedule_id, note.route_key)
        try:
            earlier = self._restart_cards.get(key)
            if note.phase in ("cancelled", "restarting") and earlier is not None:
                await self._messenger.patch_card(earlier, card)  # the cancel button goes
                return
            anchor = self._restart_anchors.pop(note.route_key, None)
            message_id = await self._messenger.to_route(note.route_key, anchor, "interactive", card)
        except ApiError as error:
            log.warning("feishu: the restart note to %s failed: %s", note.route_key, error)
            return
        if token is not None:
            self._restart_cards[key] = message_id
            self._card_routes[message_id] = note.route_key
            action = CardAction(f"restart:{note.schedule_id}", RESTART_CANCEL, note.schedule_id)
            await self._store.write(
                BindCardActions(message_id, note.route_key, (ActionBinding(token, action),)),
                timeout=STORE_TIMEOUT,
            )

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
            await self._recover()
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
        self._store.submit(NoteChat(group.route_key, "feishu:group"), _logged)
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
        route = self._route(route_key)
        try:
            route.lane.send_nowait(decision)
        except trio.WouldBlock:
            full = True
        else:
            full = False
        if full:
            log.error("feishu: the lane of %s is full; message dropped", route.key)

    def _route(self, route_key: str) -> _Route:
        route = self._routes.get(route_key)
        if route is not None:
            return route
        assert self._nursery is not None
        send, receive = trio.open_memory_channel[Admit](1000)
        # Subscribed before the first input is told: no notice of its turn can be missed.
        link = self.context.port.subscribe(route_key, shared=True)
        route = _Route(route_key, send, link)
        self._routes[route_key] = route
        self._nursery.start_soon(self._lane, route, receive)
        self._nursery.start_soon(self._read_route, route)
        return route

    async def _lane(self, route: _Route, receive: trio.MemoryReceiveChannel[Admit]) -> None:
        async for admit in receive:
            try:
                await self._admit(route, admit)
            except Exception:
                log.exception(
                    "feishu: a message could not be handled",
                    extra={"message_id": admit.message.message_id},
                )

    async def _admit(self, route: _Route, admit: Admit) -> None:
        message = admit.message
        claims = await self._store.write(
            Together(
                (
                    ClaimInboundEvent(message.event_id, "message"),
                    ClaimInboundEvent(f"feishu-message:{message.message_id}", "message_id"),
                )
            ),
            timeout=STORE_TIMEOUT,
        )
        if not all(claims):
            log.info("feishu message already claimed", extra={"message_id": message.message_id})
            return
        chat_key = chat_route(message.chat_id)
        if freshness(message, now=time.time(), started_at=self.context.started_at) == "stale":
            await self._store.write(
                AppendAuditEvent(
                    "feishu.stale_message",
                    {
                        "message_id": message.message_id,
                        "route": route.key,
                        "created_at": message.created_at,
                    },
                ),
                timeout=STORE_TIMEOUT,
            )
            log.info(
                "feishu: a stale message was recorded, not run",
                extra={"message_id": message.message_id},
            )
            return
        door = self.context.teams.get(message.chat_id)
        if door is not None:
            door.handle(team_message(admit))  # its effects come back through _team
            return
        await self._react(message.message_id, "OnIt")
        self._store.submit(NoteChat(chat_key, f"feishu:{message.chat_type}"), _logged)
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
        if text.startswith("/"):
            route.commands.append(message.message_id)
        else:
            route.pending.append(_Pending(message.message_id, text))
        input_ = UserInput(text, images=prepared.images, message_id=message.message_id)
        self.context.port.tell(route.key, input_)

    async def _with_media(
        self, route: _Route, message: InboundMessage, text: str
    ) -> Prepared | None:
        """The message's images and files downloaded (``_media``), or ``None`` once the
        person was told why not."""
        assert self._messenger is not None
        notes = media_notes(self.context.locale)
        folder = self.context.profile.data_dir / "attachments" / safe_name(message.chat_id, "chat")
        saved = await fetch(
            self._messenger.rest, message.message_id, message.resources, folder, notes
        )
        if isinstance(saved, Refused):
            log.info("feishu: a message's attachment was refused: %s", saved.reason)
            await self._say(route.key, message.message_id, saved.reason)
            await self._settle_reaction(message.message_id, "ERROR")
            return None
        images = declared(self.context.config, route.agent).images
        return prompt_with(text, saved, takes_images=images, notes=notes)

    async def _chat_command(
        self, route: _Route, message: InboundMessage, chat_command: ChatCommand
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
            self._restart_anchors[route.key] = message.message_id
            force = chat_command.argument == "--force"
            schedule = host.request_restart(route.key, force=force)
            if (schedule, route.key) not in self._noted:  # already enrolled: no new note
                self._restart_anchors.pop(route.key, None)
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
        if action.approval_id == RESET:  # the engine's /turns reset; its reply to the card
            self._route(route_key).commands.append(click.message_id)
            self.context.port.tell(route_key, UserInput(f"/turns reset {action.decision}"))
            return _toast("info", notes["resetting"])
        self.context.port.tell(route_key, AnswerApproval(action.approval_id, action.decision))  # type: ignore[arg-type]
        return _toast("success", notes["answered"])

    # -- the routes' notices ----------------------------------------------------------------

    async def _read_route(self, route: _Route) -> None:
        while True:
            async for batch in route.link:  # ends quietly on LinkEnded
                for notice in batch:
                    try:
                        self._notice(route, notice)
                    except Exception:
                        log.exception("feishu: a route notice could not be shown")
            reason = route.link.reason
            log.warning("feishu: the subscription of %s ended (%s)", route.key, reason)
            if not isinstance(reason, Overflowed):
                return  # closed, or another front end took the route over: leave it be
            # Fell behind: what was missed is in the store; the cards carry on from here.
            route.link = self.context.port.subscribe(route.key, shared=True)

    def _notice(self, route: _Route, notice: object) -> None:
        if isinstance(notice, TaskOpened):
            route.agent = notice.agent
        elif isinstance(notice, TurnBegan):
            self._open_card(route, notice)
        elif isinstance(notice, TurnUpdate):
            turn = self._turns.get(notice.attempt_id)
            if turn is not None and not isinstance(notice.event, TurnCompleted):
                turn.address.tell(notice.event)
        elif isinstance(notice, InputSteered):
            turn = self._turns.get(notice.attempt_id)
            pending = _take(route.pending, notice.text)
            if turn is not None:
                if pending is not None:
                    turn.messages.append(pending.message_id)
                turn.address.tell(UserSteer(notice.text))
        elif isinstance(notice, TurnFinished):
            turn = self._turns.get(notice.attempt_id)
            if turn is not None and not turn.completed:
                turn.completed = True
                turn.status = notice.status
                turn.address.tell(notice.as_event())
            door = self._team_door(route.key)
            if door is not None:
                door.turn_ended(route.key)
        elif isinstance(notice, RouteReply):
            anchor = route.commands.popleft() if route.commands else None
            assert self._nursery is not None
            self._nursery.start_soon(self._reply_notice, route.key, anchor, notice)

    def _open_card(self, route: _Route, began: TurnBegan) -> None:
        if began.attempt_id in self._turns:
            return  # opened from the store after a restart
        pending = _take(route.pending, began.prompt)
        if pending is None and route.pending and not began.recovery:
            pending = route.pending.popleft()
        anchor = pending.message_id if pending is not None else None
        if anchor is not None:
            self._store.submit(AnchorTurnAttempt(began.attempt_id, anchor), _logged)
        self._open(route, began.attempt_id, began.task_id, anchor, [anchor] if anchor else [])

    def _open(  # noqa: PLR0917 (the one place a card opens; every caller names them all)
        self,
        route: _Route,
        attempt_id: str,
        task_id: str,
        anchor: str | None,
        messages: list[str],
        started_at: float | None = None,
    ) -> _Turn:
        assert self._cards is not None and self._delivery is not None and self._sink is not None
        assert self._port is not None
        card_id = f"{attempt_id}{CARD_SUFFIX}"
        stop_token = secrets.token_urlsafe(18)
        agent = route.agent or self.context.config.defaults.agent
        layout = self.settings.thinking_card_layout
        stop_label = self.notes["stop"]
        forks = declared(self.context.config, agent).fork_at_turn
        reset_token = secrets.token_urlsafe(18) if forks else None
        reset = (
            ResetButton(reset_token, self.notes["reset"], self.notes["reset_warning"])
            if reset_token
            else None
        )
        if anchor is not None:
            self._sink.anchors[card_id] = anchor
        port = self._port

        def notify(notice: object) -> None:  # the card actor's thread
            port.post(self._card_notice, attempt_id, notice)

        address = self._cards.open(
            CardTurn(
                card_id,
                task_id,
                route.key,
                started_at=started_at or time.time(),
                restricted=self.context.restricted(task_id),
            ),
            lambda: FeishuCards(
                agent=agent,
                layout=layout,
                stop_token=stop_token,
                stop_label=stop_label,
                reset=reset,
            ),
            self._delivery,
            notify=notify,
        )
        turn = _Turn(card_id, route.key, address, stop_token, messages, reset_token=reset_token)
        self._turns[attempt_id] = turn
        return turn

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

    async def _team_input(self, route: _Route, effect: StartRequest | FollowUpInput) -> None:
        await self._react(effect.anchor, "OnIt")
        text = effect.text
        if text.startswith("/"):
            route.commands.append(effect.anchor)
        else:
            route.pending.append(_Pending(effect.anchor, text))
        for request in effect.requests():
            self.context.port.tell(route.key, request)

    # -- after a restart --------------------------------------------------------------------

    async def _recover(self) -> None:
        """Finish what the last run left on Feishu: cards still running, answers not sent.

        The engine recovered before this service started (the host starts it first), so the
        notices of a continued turn's start may be gone. The store says what is unsettled;
        the routes are subscribed first and the store read again on the loop, with no await
        between the read and the cards' opening: a turn that ended before the second read is
        ended from the store, one that ends after it is told by its route."""
        since = time.time() - RECOVER_SINCE
        try:
            first = await trio.to_thread.run_sync(self._unsettled, since)
        except Exception:
            log.exception("feishu: what the last run left could not be read")
            return
        if not first:
            return
        for attempt, _ in first:
            self._route(attempt.route_key)
        unsettled = self._unsettled(since)  # on the loop: see the docstring
        attempts = [
            attempt
            for attempt, card in unsettled
            # An interrupted or failed turn that never showed a card needs none now.
            if card is not None or attempt.status in (*ACTIVE_TURN_STATUSES, "completed")
        ]
        reactions = self._read_reactions([a.anchor_message_id for a, _ in unsettled])
        self._reactions.update(reactions)
        taken: set[str] = set()
        continuing: set[str] = set()
        for attempt in attempts:
            if attempt.id in self._turns:
                continue
            anchor, messages = attempt.anchor_message_id, []
            if attempt.status in ACTIVE_TURN_STATUSES and anchor is None:
                # A continued turn answers the message its interrupted predecessor did (its
                # prompt ends with that message's text).
                for earlier, _ in unsettled:
                    if (
                        earlier.route_key == attempt.route_key
                        and earlier.status == "interrupted"
                        and earlier.anchor_message_id
                        and attempt.prompt.endswith(earlier.prompt)
                    ):
                        anchor = earlier.anchor_message_id
                        taken.add(earlier.id)
                        continuing.add(attempt.id)
            if anchor is not None and (attempt.id not in taken):
                messages = [anchor]
            route = self._route(attempt.route_key)
            turn = self._open(
                route, attempt.id, attempt.task_id, anchor, messages, attempt.created_at
            )
            log.info("feishu: turn %s of %s recovered (%s)", attempt.id, route.key, attempt.status)
            if attempt.status not in ACTIVE_TURN_STATUSES:
                status = attempt.status if attempt.status in _REACTIONS else "failed"
                error = None
                if status == "failed":
                    error = TurnError(attempt.error or "failed", "unknown", retryable=False)
                turn.completed = True
                turn.status = status
                turn.address.tell(
                    TurnCompleted(
                        attempt.remote_turn_id or "",
                        status,  # type: ignore[arg-type]
                        error,
                        final_text=attempt.final_text if status == "completed" else None,
                    )
                )
        for attempt_id in taken:
            turn_ = self._turns.get(attempt_id)
            if turn_ is not None:
                turn_.messages.clear()  # its successor settles the message's reaction
        self._recovery_notes(attempts, continuing, taken)

    def _recovery_notes(
        self, attempts: list[TurnAttempt], continuing: set[str], taken: set[str]
    ) -> None:
        """Tell each chat what became of its unsettled turns (``_recovery_notes``)."""
        assert self._nursery is not None
        texts = recovery_texts(self.context.locale)
        for attempt in attempts:
            note = recovery_note(
                attempt.status, continues=attempt.id in continuing, continued=attempt.id in taken
            )
            turn = self._turns.get(attempt.id)
            anchor = self._sink.anchors.get(turn.card_id) if turn and self._sink else None
            if note is not None and anchor is not None:  # said beside the message it concerns
                self._nursery.start_soon(self._say, attempt.route_key, anchor, texts[note])

    def _unsettled(self, since: float) -> list[tuple[TurnAttempt, str | None]]:
        db = open_reader(self.context.db_path)
        try:
            return unsettled_chat_turns(db, "feishu:", CARD_SUFFIX, since=since)
        finally:
            db.close()

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

    def _card_notice(self, attempt_id: str, notice: object) -> None:
        turn = self._turns.get(attempt_id)
        if turn is None:
            return
        assert self._nursery is not None
        if isinstance(notice, ProgressCardPosted):
            self._card_routes[notice.message_id] = turn.route_key
            bindings = [ActionBinding(turn.stop_token, CardAction(turn.card_id, STOP, "cancel"))]
            if turn.reset_token is not None:
                # Its own turn id: a turn's tokens end with its answer, Reset is for after it.
                action = CardAction(f"{turn.card_id}:reset", RESET, attempt_id)
                bindings.append(ActionBinding(turn.reset_token, action))
            self._store.submit(
                BindCardActions(notice.message_id, turn.route_key, tuple(bindings)), _logged
            )
        elif isinstance(notice, FinalAnswerDelivered | FinalAnswerFailed):
            del self._turns[attempt_id]
            if self._sink is not None:
                self._sink.anchors.pop(turn.card_id, None)
            if isinstance(notice, FinalAnswerFailed):
                log.error(
                    "feishu: the answer of %s was not delivered: %s", attempt_id, notice.error
                )
                emoji = "ERROR"
            else:
                emoji = _REACTIONS.get(turn.status or "", "DONE")
            for message_id in turn.messages:
                self._nursery.start_soon(self._settle_reaction, message_id, emoji)

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
            self._store.submit(RecordReaction(message_id, emoji, reaction_id), _logged)

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
        self._store.submit(ForgetReaction(message_id, "OnIt"), _logged)

    async def _say(self, route_key: str, anchor: str | None, text: str) -> None:
        assert self._messenger is not None
        try:
            await self._messenger.to_route(route_key, anchor, "text", {"text": text})
        except ApiError as error:
            log.warning("feishu: a reply could not be sent: %s", error)

    async def _reply_notice(self, route_key: str, anchor: str | None, reply: RouteReply) -> None:
        await self._say(route_key, anchor, reply.text)
        if anchor is not None:
            await self._settle_reaction(anchor, "ERROR" if reply.level == "error" else "DONE")


def _take(pending: deque[_Pending], text: str) -> _Pending | None:
    """The oldest pending message whose text is ``text`` (a recovered turn's prompt ends with
    it), taken out of the queue."""
    for index, item in enumerate(pending):
        if prompt_answers(text, item.text):
            del pending[index]
            return item
    return None


def _toast(kind: str, content: str) -> Mapping[str, Any]:
    return {"toast": {"type": kind, "content": content}}


def _note_card(
    title: str, text: str, *, button: tuple[str, str | None] | None = None
) -> dict[str, Any]:
    """A note card; ``button`` (label, token) adds a callback button when the token is set."""
    elements: list[dict[str, Any]] = [{"tag": "markdown", "element_id": "note", "content": text}]
    if button is not None and button[1] is not None:
        elements.append(
            {
                "tag": "button",
                "element_id": "note_action",
                "text": {"tag": "plain_text", "content": button[0]},
                "type": "default",
                "behaviors": [{"type": "callback", "value": {"token": button[1]}}],
            }
        )
    return {
        "schema": "2.0",
        "config": {"update_multi": True, "width_mode": "fill"},
        "header": {"title": {"tag": "plain_text", "content": title}, "template": "blue"},
        "body": {"elements": elements},
    }


def _logged(value: object, /) -> None:
    """The ack of a write nobody waits for: a failure is logged (the writer's thread)."""
    if isinstance(value, BaseException):
        log.error("feishu: a store write failed: %s: %s", type(value).__name__, value)
