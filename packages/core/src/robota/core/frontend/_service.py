"""One chat service, composed: the shell that serves any chat platform through its adapter
(docs/architecture/chat-transports.md §10).

A chat transport is a ``Platform`` (this module's protocol): its wire and REST calls (send,
update, react and unreact, download), its inbound link (its event stream: ``link`` runs it and
hands each message to ``ChatService.heard`` before the platform is acknowledged, each click to
``clicked``) and what only it knows (its cards, its own commands, its teams' words). It
decides nothing of the way a message goes; ``ChatService`` does, in one place for every
platform:

* the run: the card renderer's services, what the last run left (the inbox read, the turns
  recovered), ``started`` before the platform answers (the host's start never waits on a
  platform that refuses or does not answer), the bot identified (retried with back-off), the
  inbox resumed, the link run, the start-up notes, the team doors attached; every step of the
  connection fed to the machine of ``_link``, which says the status the host is told;
* a message's way in: the adapter's screen says ``Hearing`` or why not, ``_admission``'s
  ``accepted`` and ``admission`` (pure) say what follows, and this shell performs each effect
  (the accept written before the ack, the stale guard, the team door, the ``working``
  reaction, the transport's own command, the attachments, the route told);
* the routes' notices: the service owns a ``ChatTurns`` (``turns``: the routes, their lanes
  and readers, the turns' cards, the restart's recovery) and is its ``TurnHooks``, the part
  that knows the platform: a turn's card opened through the adapter, its buttons bound when
  posted, its messages' reactions settled from ``working`` to the outcome's (the inbox row
  marked), a command's reply, a queued prompt's note and its Cancel;
* a click (``clicked``): handed to ``_clicks``, which checks the clicker, claims it once and
  acts on it through this service (``ClickSite``) and its routes (``ClickRoutes``: ``turns``).

Nothing here extends anything: an adapter reaches a route through ``turns`` (``route``), the
service's own calls (``say``, ``settle``, ``heard``, ``clicked``) through the service, and the
host's asks (``serve_route``, ``pending_finals``, ``restart_note``) are the service's, handed on.

Every reaction is named neutrally (``working`` or an ``Outcome``); the adapter says what its
platform calls it.
"""

from __future__ import annotations

import logging
import secrets
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

import trio

from ..cards import CardDelivery, CardHost, CardPlatform, CardSink
from ..engine import ForkTask, RouteReply, UserInput
from ..kernel import LoopPort, Timers
from ..store import (
    ActionBinding,
    AppendAuditEvent,
    BindCardActions,
    ConsumeInbox,
    InboxRow,
    JSONValue,
    NoteChat,
    Together,
    TurnAttempt,
)
from ..teams import FollowUpInput, LoopReplies, StartRequest, TeamDoor, say_offline
from ._admission import (
    Accept,
    Arrived,
    Consume,
    Effect,
    Fetch,
    NoteInbound,
    React,
    RecordStale,
    Reply,
    RunCommand,
    Settle,
    Tell,
    ToDoor,
    accepted,
    admission,
    fetched,
)
from ._admission import NoteChat as NoteChatEffect
from ._chat import ChatTurns
from ._chat_gate import MAX_BUSY_CHATS
from ._chat_inbox import Accepted, InboxLeft
from ._chat_values import ChatRoute, ChatTurn, Opening, Outcome, Pending
from ._clicks import Clicked, Clicks
from ._inbound import Ignore
from ._link import (
    Event,
    Identified,
    IdentifyFailed,
    LinkConnecting,
    LinkUp,
    LinkView,
    PlatformRefused,
    step,
)
from ._media import Prepared
from ._media import Refused as FileRefused
from ._queue import QueueNote, queue_texts
from ._recovery_notes import recovery_notes
from ._recovery_plan import RecoveredTurn
from ._restarts import NOTE_TIMEOUT, RestartDesk

if TYPE_CHECKING:
    from ..teams import GroupNote, TeamMessage, ThreadReply
    from ._transport import RestartNote, TransportContext

__all__ = [
    "ChatService",
    "Hearing",
    "LinkStatus",
    "Platform",
    "Reaction",
]

STORE_TIMEOUT = 10.0
IDENTIFY_CAP = 30.0
"""Seconds between two tries to identify the bot, at the most (doubling from 1)."""
IDENTIFY_AGAIN = 5.0
"""Seconds between two tries beside the running link (``Platform.identify_first`` unset)."""

Reaction = Literal["working", "completed", "failed", "interrupted"]
LinkStatus = Callable[[str, "str | None"], None]
"""How the inbound link goes: ``connecting`` (with the last error and the next attempt) or
``connected``; any other state is the adapter's (a refusal is raised, ``refusal``)."""


@dataclass(frozen=True, slots=True)
class Hearing:
    """A message the adapter's screen heard: what the shell needs to accept and admit it."""

    item: Any
    """The adapter's own (its screened message), handed back to its hooks."""
    route_key: str
    chat: str
    """The platform's conversation (a channel, a chat id)."""
    message_id: str
    """The message as a turn's anchor names it."""
    event_key: str
    message_key: str
    """The claim keys of its event and of the message (the inbox row's key is the latter)."""
    payload: str
    """The event as it came, kept in the inbox to be heard again after a crash."""
    text: str
    created_at: float
    chat_kind: str
    """The chat's kind as ``NoteChat`` keeps it (the start-up notes read it)."""
    stale: Mapping[str, JSONValue]
    """The audit fields of a stale message."""
    thread: str | None = None
    """Where the platform answers it, when that is not the message itself."""
    team: bool = False
    attachments: bool = False
    message_kind: str = "message"
    chat_key: str | None = None
    """The chat's key as ``NoteChat`` keeps it (``None``: the route prefix and ``chat``)."""


@dataclass(frozen=True, slots=True)
class Card:
    """A turn's card as the adapter opens it: its renderer, its Stop token, what it keeps."""

    platform: Callable[[], CardPlatform]
    stop_token: str
    anchor: str | None = None
    """The message (or thread) the card's answer goes beside."""
    extra: Any = None


class Platform(Protocol):
    """A chat platform's adapter (see the module docstring)."""

    name: str
    route_prefix: str
    card_suffix: str
    restart_texts: Mapping[str, str]
    team_owner: str | None
    team_prefix: str
    identify_first: bool
    own_actions: frozenset[str]
    """The card actions it acts on itself once claimed (``Clicked.action``)."""
    cards_outlive_turns: bool
    """A card keeps a button once its turn ended (Feishu's Reset): its route is kept for its
    clicks (a topic's card is not its chat's)."""
    """The link waits until the bot is identified (else one try first, then retried beside
    the running link: the platform counts any outbound call that worked)."""

    def bind(self, service: ChatService) -> None:
        """The service it serves (its handler's calls go there)."""

    def session(self) -> AbstractAsyncContextManager[CardSink]:
        """The platform's clients open for the run, and its card sink."""
        ...

    async def identify(self) -> Identified | IdentifyFailed | PlatformRefused:
        """One try to read who the bot is (the screen needs it)."""
        ...

    async def link(
        self, status: LinkStatus, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED
    ) -> None:
        """The inbound link, run (``started`` once up; ``status``: how it goes); raises what
        ``refusal`` names when the platform refuses it for good."""

    def refusal(self, error: BaseException) -> str | None:
        """Why ``error`` means the platform refused the link for good, or ``None``."""
        ...

    def hear(self, payload: str) -> Hearing | Ignore | None:
        """An event as the inbox keeps it (``Hearing.payload``), screened again after a
        restart: heard, ignored and why, or not a message (``None``)."""
        ...

    def message_key(self, chat: str, message_id: str) -> str:
        """A message's claim key, and its inbox row's."""
        ...

    def chat_of(self, route_key: str) -> str | None:
        """The conversation of one of its route keys (``None``: not one of its)."""
        ...

    def chat_route(self, chat: str) -> str:
        """The route key of a conversation itself (a click on a card no route holds)."""
        ...

    def allowed(self, user: str) -> Ignore | None:
        """The owner filter for a clicker."""
        ...

    def team_of(self, route_key: str) -> TeamDoor | None: ...

    def team_message(self, hearing: Hearing) -> TeamMessage: ...

    def team_say(self, door: TeamDoor) -> Callable[[ThreadReply | GroupNote], Awaitable[None]]: ...

    def reacted(self, hearing: Hearing) -> bool:
        """Its ``working`` reaction is known to be on the message."""
        ...

    async def react(self, chat: str, message_id: str, name: Reaction) -> None: ...

    async def unreact(self, chat: str, message_id: str, name: Reaction) -> None: ...

    async def send(
        self, route_key: str, chat: str, text: str, thread: str | None, *, reply_to: str | None
    ) -> None:
        """A text reply (``reply_to``: the message it answers; ``thread``: where)."""

    def command(self, hearing: Hearing) -> object | None:
        """The transport's own command in the message, or ``None``."""
        ...

    async def run_command(self, route: ChatRoute, hearing: Hearing, command: object) -> None: ...

    async def fetch(self, route: ChatRoute, hearing: Hearing) -> Prepared | FileRefused:
        """The message's attachments downloaded."""
        ...

    def card(self, route: ChatRoute, opening: Opening) -> Card: ...

    def card_bindings(self, attempt_id: str, turn: ChatTurn) -> tuple[ActionBinding, ...]:
        """Its card's buttons, bound once it is posted."""
        ...

    def card_done(self, turn: ChatTurn) -> None:
        """The turn's answer went (or failed): what the adapter kept of its card goes."""

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
        """A note with one button (``(label, token)``), beside ``reply_to`` or in
        ``thread`` (``None``: the route's); its message id."""
        ...

    async def update_note(self, message_id: str, text: str) -> None:
        """The note without its button, saying ``text``."""

    async def send_restart_note(
        self, route_key: str, text: str, token: str | None, earlier: str | None, anchor: str | None
    ) -> str | None:
        """``RestartDesk``'s ``send``."""
        ...

    async def startup_notes(self) -> None: ...

    def serving(self) -> None:
        """The transport said ``connected`` the first time."""

    def recovering(self, unsettled: Sequence[tuple[TurnAttempt, str | None]]) -> None:
        """What the last run left unsettled, before its cards open again (``ChatTurns``)."""

    async def went_quiet(self) -> None:
        """A batch of quiet chats was let go (``TurnHooks.went_quiet``): what only a busy
        adapter needs goes (idle connections, rate windows)."""

    async def resuming(self, left: InboxLeft) -> None:
        """What the last run left in the inbox, before it is fed again or settled."""

    async def divert(self, hearing: Hearing, request: UserInput) -> ForkTask | None:
        """What to tell the route instead of ``request`` (a reply comes first), or ``None``."""
        ...

    async def reply(self, route: ChatRoute, anchor: Pending | None, reply: RouteReply) -> bool:
        """A command's reply, answered by the adapter itself (``True``) or left to the
        service (a text reply, the message settled)."""
        ...


class ChatService:
    """See the module docstring. It is its ``turns``' ``TurnHooks``."""

    def __init__(
        self, context: TransportContext, platform: Platform, *, max_busy_chats: int | None = None
    ) -> None:
        log = logging.getLogger(f"robota.transports.{platform.name}")
        self.context = context
        self.platform = platform
        self._store = context.store
        self._chat_name = platform.name
        self._log = log
        self._nursery: trio.Nursery | None = None
        self._port: LoopPort | None = None
        self.turns = ChatTurns(
            context,
            self,
            name=platform.name,
            route_prefix=platform.route_prefix,
            card_suffix=platform.card_suffix,
            log=log,
            max_busy=MAX_BUSY_CHATS if max_busy_chats is None else max_busy_chats,
        )
        """The routes, their lanes and notices, the turns' cards and the restart's recovery
        (``_chat``): what the adapter reaches a route through (``turns.route``)."""
        self.card_routes: dict[str, str] = {}
        """A posted card or note's message id -> its route key, for clicks."""
        self.restarts = RestartDesk(
            self._store,
            platform.restart_texts,
            platform.send_restart_note,
            name=platform.name,
            log=log,
        )
        self._link = LinkView()
        self._served = False
        self._refused = trio.Event()
        self._teams: list[LoopReplies] = []
        self.clicks = Clicks(self, self.turns, platform, context, name=platform.name, log=log)
        platform.bind(self)

    @property
    def nursery(self) -> trio.Nursery:
        assert self._nursery is not None
        return self._nursery

    # -- the run ------------------------------------------------------------------------------

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        async with self.platform.session() as sink, trio.open_nursery() as nursery:
            self._nursery = nursery
            self._port = LoopPort()
            timers = Timers()
            delivery = CardDelivery(sink, self._store)
            cards = CardHost(store=self._store, timers=timers)
            self.turns.attach(nursery, self._port, cards, delivery)
            await nursery.start(timers.run)
            await nursery.start(delivery.run)
            await nursery.start(cards.run)
            nursery.start_soon(self.turns.follow_routes)
            nursery.start_soon(self.turns.serve_waiting)
            left = await self.turns.read_inbox()  # before any card of this run can end
            await self.turns.recover()
            # Started before the platform answers: the host's start never waits on it.
            task_status.started()
            if not await self._identify():
                await trio.sleep_forever()  # refused, and reported failed
            await self.platform.resuming(left)
            self.turns.resume_inbox(left)  # before the platform's events: what was left comes first
            up = trio.Event()
            nursery.start_soon(self._connect, up)
            await up.wait()
            if self._refused.is_set():
                await trio.sleep_forever()  # reported failed; this run serves nothing more
            self.status(LinkUp())
            await self.platform.startup_notes()
            self._teams = LoopReplies.attach_all(
                self.context.teams.values(),
                self._port,
                nursery,
                inputs=self.team_input,
                say=self.platform.team_say,
                owner=self.platform.team_owner,
                prefix=self.platform.team_prefix,
            )
            try:
                await trio.sleep_forever()
            finally:
                await say_offline(self._teams, NOTE_TIMEOUT)  # on the way down

    def status(self, event: Event) -> None:
        """Feed the connection machine; report what it says."""
        self._link, said = step(self._link, event)
        if said is None:
            return
        self.context.report(said)
        if said.state == "connected" and not self._served:
            self._served = True
            self.platform.serving()

    def _link_status(self, state: str, detail: str | None) -> None:
        if state == "connecting":
            self.status(LinkConnecting(detail))
        elif state == "connected":
            self.status(LinkUp())

    async def _identify(self) -> bool:
        """Until the bot is identified (``True``) or refused (``False``, reported failed);
        a platform that does not identify first: one try, then on beside the link."""
        delay = 1.0
        while True:
            found = await self.platform.identify()
            if isinstance(found, IdentifyFailed) and not self.platform.identify_first:
                self.nursery.start_soon(self._identify_beside)
                return True
            if isinstance(found, IdentifyFailed):
                after = f"within {delay:g} s" if delay <= 1.0 else f"in {delay:g} s"
                self.status(IdentifyFailed(f"{found.detail}; next attempt {after}"))
                await trio.sleep(delay)
                delay = min(delay * 2, IDENTIFY_CAP)
                continue
            if isinstance(found, PlatformRefused):
                self._log.error("%s transport stopped: %s", self._chat_name, found.reason)
            self.status(found)
            return isinstance(found, Identified)

    async def _identify_beside(self) -> None:
        """Tried again quietly while the link runs (its status says how the transport goes),
        until it, or any other outbound call (``status(Identified())``), worked."""
        while not self._link.identified and self._link.refused is None:
            await trio.sleep(IDENTIFY_AGAIN)
            found = await self.platform.identify()
            if not isinstance(found, IdentifyFailed):
                self.status(found)

    async def _connect(self, up: trio.Event) -> None:
        try:
            async with trio.open_nursery() as nursery:
                await nursery.start(self.platform.link, self._link_status)
                self._log.info("%s link ready", self._chat_name)
                up.set()
        except* Exception as group:
            reasons = [self.platform.refusal(error) for error in group.exceptions]
            reason = next((r for r in reasons if r is not None), None)
            if reason is None:
                raise
        else:
            return
        self._log.error("%s transport stopped: %s", self._chat_name, reason)
        self.status(PlatformRefused(reason))
        # Final for this run: no retry loop against a refused credential. ``up`` is set too:
        # ``run`` waits on it, and a refusal before the link's first hello must not leave the
        # service never started.
        self._refused.set()
        up.set()
        await trio.sleep_forever()

    # -- a message's way in ---------------------------------------------------------------

    async def heard(self, hearing: Hearing | Ignore) -> None:
        """The adapter's handler, awaited before the platform is acknowledged, with what its
        screen said: the message accepted (claims and inbox row) and handed to its lane in the
        order it came, or why not logged."""
        verdict = hearing if isinstance(hearing, Ignore) else None
        for effect in accepted(verdict):
            if isinstance(effect, Ignore):
                self._log.info("%s message ignored: %s", self._chat_name, effect.reason)
            elif isinstance(effect, NoteInbound):
                assert isinstance(hearing, Hearing)
                if self.context.host is not None:
                    self.context.host.note_inbound(hearing.route_key)
            elif isinstance(effect, Accept):
                assert isinstance(hearing, Hearing)
                op = self.turns.inbox.accept_op(
                    hearing.event_key,
                    hearing.message_key,
                    hearing.route_key,
                    hearing.message_id,
                    hearing.payload,
                    message_kind=hearing.message_kind,
                )
                await self.turns.accept(
                    hearing.route_key,
                    hearing.chat,
                    hearing,
                    payload=hearing.payload,
                    op=op,
                    extra=self.item_extra(hearing),
                )

    def fed_again(self, row: InboxRow) -> None:
        hearing = self.hear_again(row.payload)
        if hearing is None:
            self.turns.inbox.consume(row.id)
            return
        accepted = Accepted.fed_again(hearing, row.id)
        self.turns.offer(hearing.route_key, hearing.chat, accepted, row.payload)

    def hear_again(self, payload: str) -> Hearing | None:
        hearing = self.platform.hear(payload)
        return hearing if isinstance(hearing, Hearing) else None

    def item_extra(self, item: Any) -> Mapping[str, object]:
        hearing = item.item if isinstance(item, Accepted) else item
        return {"message_id": hearing.message_id} if isinstance(hearing, Hearing) else {}

    async def admit(self, route: ChatRoute, item: Any) -> None:
        assert isinstance(item, Accepted) and isinstance(item.item, Hearing)
        hearing = item.item
        inbox = item.inbox
        assert inbox is not None  # a message claimed before never reaches ``admit``
        arrived = Arrived(
            claimed=True,
            text=hearing.text,
            created_at=hearing.created_at,
            now=time.time(),
            started_at=self.context.started_at,
            again=item.again,
            reacted=self.platform.reacted(hearing),
            team=hearing.team,
            command=self.platform.command(hearing) if not hearing.team else None,
            attachments=hearing.attachments,
        )
        await self._perform(route, hearing, inbox, admission(arrived))

    async def _perform(
        self,
        route: ChatRoute,
        hearing: Hearing,
        inbox: int,
        effects: Sequence[Effect | Ignore],
        images: tuple[Path, ...] = (),
    ) -> None:
        for effect in effects:
            if isinstance(effect, RecordStale):
                stale = AppendAuditEvent(f"{self._chat_name}.stale_message", dict(hearing.stale))
                await self._store.write(
                    Together((stale, ConsumeInbox(inbox))), timeout=STORE_TIMEOUT
                )
                self._log.info(
                    "%s: a stale message was recorded, not run",
                    self._chat_name,
                    extra=dict(self.item_extra(hearing)),
                )
            elif isinstance(effect, ToDoor):
                door = self.context.teams.get(hearing.chat)
                assert door is not None
                door.handle(self.platform.team_message(hearing))  # effects: team_input
            elif isinstance(effect, Consume):
                # A door keeps a request (``team_requests``) and says what became of it.
                self.turns.inbox.consume(inbox, door=effect.door)
            elif isinstance(effect, React):
                await self.platform.react(hearing.chat, hearing.message_id, "working")
            elif isinstance(effect, NoteChatEffect):
                chat_key = hearing.chat_key or f"{self.platform.route_prefix}{hearing.chat}"
                self._store.submit(NoteChat(chat_key, hearing.chat_kind), self.turns.logged)
            elif isinstance(effect, RunCommand):
                await self.platform.run_command(route, hearing, effect.command)
            elif isinstance(effect, Fetch):
                prepared = await self.platform.fetch(route, hearing)
                if isinstance(prepared, FileRefused):
                    self._log.info(
                        "%s: a message's attachment was refused: %s",
                        self._chat_name,
                        prepared.reason,
                    )
                    await self._perform(route, hearing, inbox, fetched("", prepared.reason))
                else:
                    after = fetched(prepared.text, None)
                    await self._perform(route, hearing, inbox, after, prepared.images)
            elif isinstance(effect, Reply):
                await self.say(route, hearing.message_id, hearing.thread, effect.text)
            elif isinstance(effect, Settle):
                await self.settle(hearing.chat, hearing.message_id, effect.outcome)
            elif isinstance(effect, Tell):
                await self._tell(route, hearing, inbox, effect, images)

    async def _tell(
        self, route: ChatRoute, hearing: Hearing, inbox: int, tell: Tell, images: tuple[Path, ...]
    ) -> None:
        request = UserInput(tell.text, images=images, message_id=hearing.message_id, inbox=inbox)
        diverted = None if tell.command else await self.platform.divert(hearing, request)
        pending = Pending(hearing.message_id, tell.text, hearing.thread)
        if tell.command or diverted is not None:  # the diverted request's reply comes first
            route.commands.append(pending)
        if not tell.command:
            route.pending.append(pending)
        self.context.port.tell(route.key, request if diverted is None else diverted)

    # -- replies and reactions ------------------------------------------------------------

    async def say(
        self, route: ChatRoute, reply_to: str | None, thread: str | None, text: str
    ) -> None:
        chat = self.platform.chat_of(route.key) or route.channel
        await self.platform.send(route.key, chat, text, thread, reply_to=reply_to)

    async def settle(self, chat: str, message_id: str, outcome: Outcome) -> None:
        """``working`` on the message replaced by ``outcome``'s reaction; its inbox row marked."""
        await self.platform.react(chat, message_id, outcome)
        await self.platform.unreact(chat, message_id, "working")
        self.turns.inbox.settled(self.platform.message_key(chat, message_id))

    async def settle_left(self, row: InboxRow, outcome: Outcome) -> None:
        chat = self.platform.chat_of(row.route_key)
        if chat is not None:
            await self.settle(chat, row.message_id, outcome)

    async def route_reply(
        self, route: ChatRoute, anchor: Pending | None, reply: RouteReply
    ) -> None:
        if await self.platform.reply(route, anchor, reply):
            return
        thread = anchor.thread if anchor is not None else None
        await self.say(route, anchor.message_id if anchor else None, thread, reply.text)
        if anchor is not None:
            outcome: Outcome = "failed" if reply.level == "error" else "completed"
            await self.settle(route.channel, anchor.message_id, outcome)

    # -- what the host asks (``RestartNotes``, ``ServesRoutes``, ``PendingFinals``) -----------

    def restart_note(self, note: RestartNote) -> None:
        self.restarts.note(note, self._nursery)

    def serve_route(self, route_key: str) -> bool:
        return self.turns.serve_route(route_key)

    def pending_finals(self) -> int:
        return self.turns.pending_finals()

    # -- turns (``TurnHooks``: what ``turns`` tells) --------------------------------------------

    async def went_quiet(self) -> None:
        await self.platform.went_quiet()

    def turn_ended(self, route_key: str) -> None:
        door = self.platform.team_of(route_key)
        if door is not None:
            door.turn_ended(route_key)

    def open_turn(self, route: ChatRoute, opening: Opening) -> ChatTurn:
        card = self.platform.card(route, opening)
        address = self.turns.open_card(route, opening, card.platform)
        return ChatTurn(
            opening.card_id,
            route.key,
            address,
            card.stop_token,
            list(opening.messages),
            chat=route.channel,
            anchor=card.anchor,
            extra=card.extra,
        )

    def card_posted(self, attempt_id: str, turn: ChatTurn, message_id: str) -> None:
        self.card_routes[message_id] = turn.route_key
        turn.posted = message_id
        bindings = self.platform.card_bindings(attempt_id, turn)
        self._store.submit(BindCardActions(message_id, turn.route_key, bindings), self.turns.logged)

    def answer_done(self, turn: ChatTurn, outcome: Outcome) -> None:
        if turn.posted is not None and not self.platform.cards_outlive_turns:
            self.card_routes.pop(turn.posted, None)
        self.platform.card_done(turn)
        for message_id in turn.messages:
            self.nursery.start_soon(self.settle, turn.chat, message_id, outcome)

    def recovering(self, unsettled: Sequence[tuple[TurnAttempt, str | None]]) -> None:
        self.platform.recovering(unsettled)

    def chat_of(self, route_key: str) -> str | None:
        return self.platform.chat_of(route_key)

    def recovered(self, plan: Sequence[RecoveredTurn]) -> None:
        """Tell each conversation what became of its unsettled turn (``recovery_notes``),
        beside the message it concerns."""
        for item, text in recovery_notes(plan, self.context.locale):
            turn = self.turns.turn_of(item.attempt.id)
            route = self.turns.route_of(item.attempt.route_key)
            if route is not None and turn is not None and turn.anchor is not None:
                self.nursery.start_soon(self.say, route, turn.anchor, turn.anchor, text)

    # -- team channels ----------------------------------------------------------------------

    def team_input(self, effect: StartRequest | FollowUpInput) -> None:
        """A team request starts, or text goes on to its thread's task (the loop)."""
        route = self.turns.route_of(effect.route)
        assert route is not None
        self.nursery.start_soon(self._team_input, route, effect)

    async def _team_input(self, route: ChatRoute, effect: StartRequest | FollowUpInput) -> None:
        await self.platform.react(route.channel, effect.anchor, "working")
        text = effect.text
        pending = Pending(effect.anchor, text)
        (route.commands if text.startswith("/") else route.pending).append(pending)
        for request in effect.requests():
            self.context.port.tell(route.key, request)

    # -- a queued prompt's note ----------------------------------------------------------------

    def input_queued(self, note: QueueNote) -> None:
        route = self.turns.followed(note.route_key)
        if route is None:
            return
        thread = next((p.thread for p in route.pending if p.message_id == note.anchor), None)
        self.nursery.start_soon(self._queued_note, note, route, thread)

    async def _queued_note(self, note: QueueNote, route: ChatRoute, thread: str | None) -> None:
        texts = queue_texts(self.context.locale)
        token = secrets.token_urlsafe(18)
        text = texts["queued"].format(ahead=note.ahead)
        try:
            posted = await self.platform.post_note(
                note.route_key,
                route.channel,
                thread,
                text,
                (texts["cancel"], token),
                reply_to=note.anchor,
            )
        except Exception as error:
            self._log.warning("%s: the queued note could not be sent: %s", self._chat_name, error)
            return
        self.card_routes[posted] = note.route_key
        await self.turns.queued_note_posted(note, posted, token)

    async def settle_note(self, note: QueueNote) -> None:
        assert note.message_id is not None
        text = queue_texts(self.context.locale)[note.state]
        try:
            await self.platform.update_note(note.message_id, text)
        except Exception as error:
            self._log.warning(
                "%s: the queued note could not be updated: %s", self._chat_name, error
            )

    # -- clicks (``_clicks``) -------------------------------------------------------------------

    async def clicked(
        self, card: str, user: str, token: str | None, chat: str, *, event_key: str | None = None
    ) -> Clicked:
        """A button on ``card`` (a message id): the clicker checked like a sender (in a
        team's thread: an admin of the team), the click's event (``event_key``, when the
        platform names one) and its token claimed once, then acted on; what became of it (an
        action of the platform's own, ``Platform.own_actions``, is left to it, claimed)."""
        return await self.clicks.clicked(card, user, token, chat, event_key=event_key)
