"""The Slack transport as the host's service: the bot, served end to end.

One ``SlackService`` per host run of ``transports.slack`` (the host's ``transports``
supervisor restarts it after a crash, built anew from the same context). In its nursery:

* the Web API client (the bot token), the card renderer's timers, its delivery service
  (``CardDelivery`` over ``SlackSink``) and ``CardHost``, one card actor per running turn;
* Socket Mode (``SocketModeClient``, the app token), whose handler gets each envelope after it
  was acknowledged and hands a message to its route's lane (one task per route, so a
  conversation's messages keep their order and one slow conversation holds no other);
* one reader per route on the front-end port (``TransportContext.port``): ``TurnBegan`` opens
  the turn's progress message, ``TurnUpdate`` feeds it, ``TurnFinished`` ends it; the card
  renderer delivers the final answer once (the ledger) and says so, and the reaction on the
  person's message goes from ``eyes`` to ``white_check_mark`` / ``x`` / ``no_entry_sign``.

A message's way in is ``_inbound``'s order: filters before any write, the durable claim of the
event id and of ``channel`` + ``ts``, the stale guard, the awaited ``eyes``, then the route.
Readiness (``context.report``): ``connected`` once Socket Mode is up and ``auth.test``
succeeded (it also gives the bot's user id the mention filter needs).

The card's turn id is the engine's attempt id with ``:slack`` appended: the engine's own
ledger row for the attempt and this one for the answer sent to Slack never see each other.
"""

from __future__ import annotations

import logging
import secrets
import time
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

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
    COMMANDS,
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
from robota.core.frontend import Overflowed, TransportContext, TransportStatus
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
    NoteChat,
    Together,
    TurnAttempt,
    chat_contexts,
    open_reader,
    unsettled_chat_turns,
)
from robota.core.teams import FollowUpInput, LoopReplies, StartRequest, TeamDoor, say_offline

from ._client import SocketModeClient
from ._errors import ApiError, ConnectionRefused
from ._inbound import (
    Admit,
    ButtonClick,
    Ignore,
    InboundMessage,
    Malformed,
    Screen,
    Unsupported,
    allowed,
    bang,
    chat_route,
    freshness,
    parse_envelope,
    route_chat,
    screen,
)
from ._outbound import STOP, SlackCards, SlackSink, message_id
from ._settings import SlackSettings
from ._team import PREFIX, team_message, team_say, team_screen, team_thread
from ._web import WebApi

if TYPE_CHECKING:
    from robota.core.frontend import RouteLink

    from ._socket import Envelope

__all__ = ["CARD_SUFFIX", "REACTIONS", "SlackService"]

log = logging.getLogger("robota.transports.slack")

STORE_TIMEOUT = 10.0
NOTE_TIMEOUT = 5.0
"""Seconds the team channels' offline notes may take on the way down (shielded)."""
CARD_SUFFIX = ":slack"
"""A card's turn id is the engine's attempt id and this (see the module docstring)."""
ONLINE = "robota is online: write here to start."
RECOVER_SINCE = 3600.0
"""Seconds back a restart looks for turns whose progress message or answer was left unsent."""
WORKING = "eyes"
_COMMAND_NAMES = frozenset(
    name for c in COMMANDS for name in (c.name, c.initialism) if name is not None
)
REACTIONS = {"completed": "white_check_mark", "failed": "x", "interrupted": "no_entry_sign"}


@dataclass(slots=True)
class _Pending:
    ts: str
    text: str
    thread: str


@dataclass(slots=True)
class _Turn:
    card_id: str
    route_key: str
    channel: str
    address: Address
    stop_token: str
    messages: list[str] = field(default_factory=list)
    """The ``ts`` of the person's messages the turn answers (their reactions settle with it)."""
    status: str | None = None
    completed: bool = False
    posted: str | None = None
    """The progress message's id once it exists (its buttons' clicks find the route by it)."""


@dataclass(slots=True)
class _Route:
    key: str
    channel: str
    lane: trio.MemorySendChannel[Admit]
    link: RouteLink
    pending: deque[_Pending] = field(default_factory=deque)
    commands: deque[_Pending] = field(default_factory=deque)
    agent: str | None = None


class SlackService:
    """See the module docstring."""

    def __init__(self, context: TransportContext) -> None:
        settings = context.settings
        assert isinstance(settings, SlackSettings), settings
        self.context = context
        self.settings = settings
        self.screen = Screen(
            owner=settings.user_id,
            owner_only=settings.respond_to_owner_only,
            all_channel_messages=settings.respond_to_all_channel_messages,
        )
        self._store = context.store
        self._routes: dict[str, _Route] = {}
        self._turns: dict[str, _Turn] = {}
        self._card_routes: dict[str, str] = {}
        """Progress message id -> route key, for clicks (a thread's route is not the channel's)."""
        self._nursery: trio.Nursery | None = None
        self._port: LoopPort | None = None
        self._web: WebApi | None = None
        self._sink: SlackSink | None = None
        self._delivery: CardDelivery | None = None
        self._cards: CardHost | None = None
        self._teams: list[LoopReplies] = []
        """The team channels' doors this service is attached to (``_team``)."""

    # -- the service ------------------------------------------------------------------------

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        s = self.settings
        async with (
            WebApi(api_url=s.api_url, token=s.bot_token) as web,
            trio.open_nursery() as nursery,
        ):
            self._nursery = nursery
            self._web = web
            self._port = LoopPort()
            self._sink = SlackSink(web)
            timers = Timers()
            self._delivery = CardDelivery(self._sink, self._store)
            self._cards = CardHost(store=self._store, timers=timers)
            await nursery.start(timers.run)
            await nursery.start(self._delivery.run)
            await nursery.start(self._cards.run)
            await self._recover()
            if not await self._identify(web):
                task_status.started()
                await trio.sleep_forever()
            client = SocketModeClient(
                api_url=s.api_url, app_token=s.app_token, handler=self._on_envelope
            )
            up = trio.Event()
            nursery.start_soon(self._connect, client, up)
            await up.wait()
            task_status.started()
            self.context.report(TransportStatus("connected"))
            await self._startup_notes(web)
            self._attach_teams(nursery, web)
            try:
                await trio.sleep_forever()
            finally:
                await say_offline(self._teams, NOTE_TIMEOUT)  # on the way down

    async def _identify(self, web: WebApi) -> bool:
        """``auth.test`` until it answers: the bot's user id. ``False``: refused for good."""
        delay = 1.0
        while True:
            try:
                bot = await web.auth_test()
            except ApiError as error:
                refused = error.error if error.fatal else None
                if refused is None:
                    log.warning("slack: auth.test failed: %s", error)
                    await trio.sleep(delay)
                    delay = min(delay * 2, 30.0)
                    continue
            else:
                refused = None
            if refused is not None:
                reason = f"auth.test refused the bot token: {refused}"
                log.error("slack transport stopped: %s", reason)
                self.context.report(TransportStatus("failed", reason))
                return False
            self.screen = Screen(
                owner=self.screen.owner,
                owner_only=self.screen.owner_only,
                bot_user_id=bot.user_id,
                all_channel_messages=self.screen.all_channel_messages,
            )
            return True

    async def _startup_notes(self, web: WebApi) -> None:
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
                answer = await web.call("conversations.open", {"users": self.settings.user_id})
                opened = answer.get("channel")
                dm_id = opened.get("id") if isinstance(opened, Mapping) else None
                if isinstance(dm_id, str) and dm_id:
                    channels.insert(0, dm_id)
        except ApiError as error:
            log.warning("slack: the owner's DM could not be opened: %s", error)
        for channel in channels:
            try:
                await web.post_message(channel, text=ONLINE)
            except ApiError as error:
                log.warning("slack: the start-up note to %s failed: %s", channel, error)

    async def _connect(self, client: SocketModeClient, up: trio.Event) -> None:
        try:
            async with trio.open_nursery() as nursery:
                await nursery.start(client.run)
                log.info("slack socket mode ready")
                up.set()
        except* ConnectionRefused as group:
            reason = str(group.exceptions[0])
        else:
            return
        log.error("slack transport stopped: %s", reason)
        self.context.report(TransportStatus("failed", reason))
        # Final for this run: no retry loop against a refused app token.
        await trio.sleep_forever()

    # -- inbound ----------------------------------------------------------------------------

    async def _on_envelope(self, envelope: Envelope) -> None:
        """Socket Mode's handler (the envelope is acknowledged already): decide, hand off."""
        parsed = parse_envelope(
            envelope.type, envelope.payload, retry_attempt=envelope.retry_attempt
        )
        if isinstance(parsed, Malformed | Unsupported):
            log.info(
                "slack envelope dropped: %s",
                parsed.reason,
                extra={"envelope_id": envelope.envelope_id},
            )
            return
        if isinstance(parsed, ButtonClick):
            await self._on_click(parsed)
            return
        self._on_message(parsed)

    async def _on_click(self, click: ButtonClick) -> None:
        """An approval's button: the clicker checked like a sender (in a team's thread: an
        admin of the team), the token claimed once."""
        card_key = message_id(click.channel, click.message_ts)
        door = self._team_door(self._card_routes.get(card_key, ""))
        if door is not None:
            if not door.may_approve(click.user):
                log.info("slack button refused: not an admin of team %s", door.team.name)
                return
        else:
            refused = allowed(click.user, self.screen)
            if refused is not None:
                log.info("slack button refused: %s", refused.reason)
                return
        if click.token is None:
            log.info("slack button dropped: not one of robota's buttons")
            return
        card = message_id(click.channel, click.message_ts)
        route_key = self._card_routes.get(card, chat_route(click.channel))
        outcome = await self._store.write(
            ClaimCardAction(click.token, card, route_key), timeout=STORE_TIMEOUT
        )
        if not isinstance(outcome, Claimed):
            log.info("slack button refused: %s", outcome.reason)
            return
        action = outcome.action
        if action.approval_id == STOP:
            self.context.port.tell(route_key, Interrupt())
            return
        self.context.port.tell(route_key, AnswerApproval(action.approval_id, action.decision))  # type: ignore[arg-type]

    def _on_message(self, message: InboundMessage) -> None:
        door = self.context.teams.get(message.channel)
        if door is not None:  # a team's channel: its door decides who is heard
            decision = screen(message, team_screen(door, self.screen.bot_user_id))
        else:
            decision = screen(message, self.screen)
        if isinstance(decision, Ignore):
            log.info("slack message ignored: %s", decision.reason, extra={"ts": message.ts})
            return
        route_key = team_message(decision).route if door is not None else message.route_key
        route = self._route(route_key, message.channel)
        try:
            route.lane.send_nowait(decision)
        except trio.WouldBlock:
            full = True
        else:
            full = False
        if full:
            log.error("slack: the lane of %s is full; message dropped", route.key)

    def _route(self, route_key: str, channel: str) -> _Route:
        route = self._routes.get(route_key)
        if route is not None:
            return route
        assert self._nursery is not None
        send, receive = trio.open_memory_channel[Admit](1000)
        # Subscribed before the first input is told: no notice of its turn can be missed.
        link = self.context.port.subscribe(route_key, shared=True)
        route = _Route(route_key, channel, send, link)
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
                    "slack: a message could not be handled", extra={"ts": admit.message.ts}
                )

    async def _admit(self, route: _Route, admit: Admit) -> None:
        message = admit.message
        claims = await self._store.write(
            Together(
                (
                    ClaimInboundEvent(f"slack-event:{message.event_id}", "message"),
                    ClaimInboundEvent(f"slack-message:{message.channel}:{message.ts}", "message"),
                )
            ),
            timeout=STORE_TIMEOUT,
        )
        if not all(claims):
            log.info(
                "slack message already claimed",
                extra={"ts": message.ts, "retry_attempt": message.retry_attempt},
            )
            return
        if freshness(message, now=time.time(), started_at=self.context.started_at) == "stale":
            await self._store.write(
                AppendAuditEvent(
                    "slack.stale_message",
                    {"channel": message.channel, "ts": message.ts, "route": route.key},
                ),
                timeout=STORE_TIMEOUT,
            )
            log.info("slack: a stale message was recorded, not run", extra={"ts": message.ts})
            return
        door = self.context.teams.get(message.channel)
        if door is not None:
            door.handle(team_message(admit))  # its effects come back through _team
            return
        await self._react(message.channel, message.ts, WORKING)
        kind = "slack:im" if message.is_dm else "slack:channel"
        self._store.submit(NoteChat(f"slack:{message.channel}", kind), _logged)
        text = bang(admit.text, _COMMAND_NAMES)
        pending = _Pending(message.ts, text, message.reply_thread)
        if text.startswith("/"):
            route.commands.append(pending)
        else:
            route.pending.append(pending)
        self.context.port.tell(route.key, UserInput(text, message_id=message.ts))

    # -- the routes' notices ----------------------------------------------------------------

    async def _read_route(self, route: _Route) -> None:
        while True:
            async for batch in route.link:  # ends quietly on LinkEnded
                for notice in batch:
                    try:
                        self._notice(route, notice)
                    except Exception:
                        log.exception("slack: a route notice could not be shown")
            reason = route.link.reason
            log.warning("slack: the subscription of %s ended (%s)", route.key, reason)
            if not isinstance(reason, Overflowed):
                return  # closed, or another front end took the route over: leave it be
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
                    turn.messages.append(pending.ts)
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
            self._nursery.start_soon(self._reply_notice, route, anchor, notice)

    def _open_card(self, route: _Route, began: TurnBegan) -> None:
        if began.attempt_id in self._turns:
            return  # opened from the store after a restart
        pending = _take(route.pending, began.prompt)
        if pending is None and route.pending and not began.recovery:
            pending = route.pending.popleft()
        anchor = pending.ts if pending is not None else None
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
        """The turn's card actor; ``anchor``: the ``ts`` of the message it answers."""
        assert self._cards is not None and self._delivery is not None and self._sink is not None
        assert self._port is not None
        card_id = f"{attempt_id}{CARD_SUFFIX}"
        chat = route_chat(route.key)
        thread = chat[1] if chat is not None and chat[1] else anchor
        if thread is not None:
            self._sink.anchors[card_id] = thread
        agent = route.agent or self.context.config.defaults.agent
        port = self._port
        stop_token = secrets.token_urlsafe(18)

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
            lambda: SlackCards(agent=agent, stop_token=stop_token),
            self._delivery,
            notify=notify,
        )
        turn = _Turn(card_id, route.key, route.channel, address, stop_token, messages)
        self._turns[attempt_id] = turn
        return turn

    # -- team channels (``_team``) ---------------------------------------------------------

    def _attach_teams(self, nursery: trio.Nursery, web: WebApi) -> None:
        assert self._port is not None
        self._teams = LoopReplies.attach_all(
            self.context.teams.values(),
            self._port,
            nursery,
            inputs=self.team_input,
            say=lambda door: team_say(web, door.team.chat),
            owner=self.settings.user_id,
            prefix=PREFIX,
        )

    def _team_door(self, route_key: str) -> TeamDoor | None:
        thread = team_thread(route_key)
        return None if thread is None else self.context.teams.get(thread[0])

    def team_input(self, effect: StartRequest | FollowUpInput) -> None:
        """A team request starts, or text goes on to its thread's task (the loop)."""
        thread = team_thread(effect.route)
        assert self._nursery is not None and thread is not None
        route = self._route(effect.route, thread[0])
        self._nursery.start_soon(self._team_input, route, thread[1], effect)

    async def _team_input(
        self, route: _Route, thread: str, effect: StartRequest | FollowUpInput
    ) -> None:
        await self._react(route.channel, effect.anchor, WORKING)
        text = effect.text
        pending = _Pending(effect.anchor, text, thread)
        (route.commands if text.startswith("/") else route.pending).append(pending)
        for request in effect.requests():
            self.context.port.tell(route.key, request)

    # -- after a restart --------------------------------------------------------------------

    async def _recover(self) -> None:
        """Finish what the last run left on Slack: progress messages still running, answers
        not sent. The same reading as the Feishu transport's (see its docstring): the routes
        are subscribed first and the store read again on the loop, with no await between the
        read and the cards' opening, so a turn is ended either from the store or by its
        route, never both and never neither."""
        since = time.time() - RECOVER_SINCE
        try:
            first = await trio.to_thread.run_sync(self._unsettled, since)
        except Exception:
            log.exception("slack: what the last run left could not be read")
            return
        for attempt, _ in first:
            self._route_of(attempt.route_key)
        if not first:
            return
        unsettled = self._unsettled(since)  # on the loop: see the docstring
        attempts = [
            attempt
            for attempt, card in unsettled
            # An interrupted or failed turn that never showed a card needs none now.
            if card is not None or attempt.status in (*ACTIVE_TURN_STATUSES, "completed")
        ]
        taken: set[str] = set()
        for attempt in attempts:
            route = self._route_of(attempt.route_key)
            if attempt.id in self._turns or route is None:
                continue
            anchor = attempt.anchor_message_id
            if attempt.status in ACTIVE_TURN_STATUSES and anchor is None:
                # A continued turn answers the message its interrupted predecessor did.
                for earlier, _ in unsettled:
                    if (
                        earlier.route_key == attempt.route_key
                        and earlier.status == "interrupted"
                        and earlier.anchor_message_id
                        and attempt.prompt.endswith(earlier.prompt)
                    ):
                        anchor = earlier.anchor_message_id
                        taken.add(earlier.id)
            messages = [anchor] if anchor is not None and attempt.id not in taken else []
            turn = self._open(
                route, attempt.id, attempt.task_id, anchor, messages, attempt.created_at
            )
            log.info("slack: turn %s of %s recovered (%s)", attempt.id, route.key, attempt.status)
            if attempt.status not in ACTIVE_TURN_STATUSES:
                status = attempt.status if attempt.status in REACTIONS else "failed"
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
            earlier_turn = self._turns.get(attempt_id)
            if earlier_turn is not None:
                earlier_turn.messages.clear()  # its successor settles the message's reaction

    def _route_of(self, route_key: str) -> _Route | None:
        chat = route_chat(route_key)
        return None if chat is None else self._route(route_key, chat[0])

    def _unsettled(self, since: float) -> list[tuple[TurnAttempt, str | None]]:
        db = open_reader(self.context.db_path)
        try:
            return unsettled_chat_turns(db, "slack:", CARD_SUFFIX, since=since)
        finally:
            db.close()

    def _card_notice(self, attempt_id: str, notice: object) -> None:
        turn = self._turns.get(attempt_id)
        if turn is not None and isinstance(notice, ProgressCardPosted):
            self._card_routes[notice.message_id] = turn.route_key
            turn.posted = notice.message_id
            binding = ActionBinding(turn.stop_token, CardAction(turn.card_id, STOP, "cancel"))
            self._store.submit(
                BindCardActions(notice.message_id, turn.route_key, (binding,)), _logged
            )
        if turn is None or not isinstance(notice, FinalAnswerDelivered | FinalAnswerFailed):
            return
        assert self._nursery is not None
        del self._turns[attempt_id]
        if turn.posted is not None:
            self._card_routes.pop(turn.posted, None)
        if self._sink is not None:
            self._sink.anchors.pop(turn.card_id, None)
        if isinstance(notice, FinalAnswerFailed):
            log.error("slack: the answer of %s was not delivered: %s", attempt_id, notice.error)
            emoji = REACTIONS["failed"]
        else:
            emoji = REACTIONS.get(turn.status or "", REACTIONS["completed"])
        for ts in turn.messages:
            self._nursery.start_soon(self._settle_reaction, turn.channel, ts, emoji)

    # -- outbound helpers ------------------------------------------------------------------

    async def _react(self, channel: str, ts: str, name: str) -> None:
        assert self._web is not None
        try:
            await self._web.add_reaction(channel, ts, name)
        except ApiError as error:
            log.warning("slack: the %s reaction failed: %s", name, error)

    async def _settle_reaction(self, channel: str, ts: str, name: str) -> None:
        """``eyes`` on the message replaced by ``name``."""
        assert self._web is not None
        await self._react(channel, ts, name)
        try:
            await self._web.remove_reaction(channel, ts, WORKING)
        except ApiError as error:
            log.warning("slack: the eyes reaction could not be removed: %s", error)

    async def _reply_notice(
        self, route: _Route, anchor: _Pending | None, reply: RouteReply
    ) -> None:
        assert self._web is not None
        chat = route_chat(route.key)
        thread = anchor.thread if anchor is not None else (chat[1] if chat else None)
        try:
            await self._web.post_message(route.channel, text=reply.text, thread_ts=thread)
        except ApiError as error:
            log.warning("slack: a reply could not be sent: %s", error)
        if anchor is not None:
            name = REACTIONS["failed"] if reply.level == "error" else REACTIONS["completed"]
            await self._settle_reaction(route.channel, anchor.ts, name)


def _take(pending: deque[_Pending], text: str) -> _Pending | None:
    """The oldest pending message whose text is ``text`` (a recovered turn's prompt ends with
    it), taken out of the queue."""
    for index, item in enumerate(pending):
        if prompt_answers(text, item.text):
            del pending[index]
            return item
    return None


def _logged(value: object, /) -> None:
    """The ack of a write nobody waits for: a failure is logged (the writer's thread)."""
    if isinstance(value, BaseException):
        log.error("slack: a store write failed: %s: %s", type(value).__name__, value)
