"""The Slack transport as the host's service: the bot, served end to end.

One ``SlackService`` per host run of ``transports.slack`` (the host's ``transports``
supervisor restarts it after a crash, built anew from the same context). In its nursery:

* the Web API client (the bot token), the card renderer's timers, its delivery service
  (``CardDelivery`` over ``SlackSink``) and ``CardHost``, one card actor per running turn;
* Socket Mode (``SocketModeClient``, the app token), whose handler gets each envelope after it
  was acknowledged and hands a message to its route's lane (one task per route, so a
  conversation's messages keep their order and one slow conversation holds no other);
* one reader per route on the front-end port (``TransportContext.port``), and the restart's
  recovery (each unsettled turn's thread told what became of it, ``recovered``):
  ``robota.core.frontend.ChatTurns``, which this service extends: ``TurnBegan`` opens
  the turn's progress message, ``TurnUpdate`` feeds it, ``TurnFinished`` ends it; the card
  renderer delivers the final answer once (the ledger) and says so, and the reaction on the
  person's message goes from ``eyes`` to ``white_check_mark`` / ``x`` / ``no_entry_sign``.

A message's way in is ``_inbound``'s order: filters before any write, the durable claim of the
event id and of ``channel`` + ``ts``, the stale guard, the awaited ``eyes``, then the route.
Readiness (``context.report``): ``connected`` once Socket Mode is up and ``auth.test``
succeeded (it also gives the bot's user id the mention filter needs); ``connecting`` with the
last error and the next attempt while either cannot be made; ``failed`` when a token is
refused. The service counts as started before it connects: the host's start never waits on
Slack.

The card's turn id is the engine's attempt id with ``:slack`` appended: the engine's own
ledger row for the attempt and this one for the answer sent to Slack never see each other.
"""

from __future__ import annotations

import json
import logging
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import trio

from robota.core import LoopPort, Timers
from robota.core.cards import CardDelivery, CardHost
from robota.core.engine import COMMANDS, AnswerApproval, Interrupt, RouteReply, UserInput
from robota.core.frontend import (
    QUEUE_CANCEL,
    RESTART_CANCEL,
    Accepted,
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
    agent_capabilities,
    attachments_folder,
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
    InboxRow,
    NoteChat,
    chat_contexts,
    open_reader,
)
from robota.core.teams import FollowUpInput, LoopReplies, StartRequest, TeamDoor, say_offline

from ._client import SocketModeClient
from ._errors import ApiError, ConnectionRefused
from ._files import fetch
from ._inbound import (
    Admit,
    ButtonClick,
    Ignore,
    InboundMessage,
    Malformed,
    Restart,
    Screen,
    Unsupported,
    allowed,
    bang,
    chat_route,
    parse_envelope,
    restart_command,
    route_chat,
    screen,
)
from ._outbound import (
    STOP,
    SlackCards,
    SlackSink,
    message_id,
    restart_blocks,
    split_message_id,
)
from ._settings import SlackSettings
from ._team import PREFIX, team_message, team_say, team_screen, team_thread
from ._web import WebApi

if TYPE_CHECKING:
    from ._socket import Envelope, LinkState

__all__ = ["CARD_SUFFIX", "REACTIONS", "SlackService", "message_key"]

log = logging.getLogger("robota.transports.slack")


def message_key(channel: str, ts: str) -> str:
    """A message's claim key, and its inbox row's (``robota.core.store._inbox``)."""
    return f"slack-message:{channel}:{ts}"


STORE_TIMEOUT = 10.0
NOTE_TIMEOUT = 5.0
"""Seconds the team channels' offline notes may take on the way down (shielded)."""
CARD_SUFFIX = ":slack"
"""A card's turn id is the engine's attempt id and this (see the module docstring)."""
ONLINE = "robota is online: write here to start."
WORKING = "eyes"
_COMMAND_NAMES = frozenset(
    {"restart", *(name for c in COMMANDS for name in (c.name, c.initialism) if name is not None)}
)
"""What ``!name`` means ``/name`` for: the engine's commands and the transport's ``restart``."""
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
REACTIONS: Mapping[Outcome, str] = {
    "completed": "white_check_mark",
    "failed": "x",
    "interrupted": "no_entry_sign",
}


@dataclass(slots=True)
class _Turn(ChatTurn):
    channel: str = ""
    posted: str | None = None
    """The progress message's id once it exists (its buttons' clicks find the route by it)."""


class SlackService(ChatTurns[_Turn]):
    """See the module docstring."""

    def __init__(self, context: TransportContext) -> None:
        super().__init__(
            context, name="slack", route_prefix="slack:", card_suffix=CARD_SUFFIX, log=log
        )
        settings = context.settings
        assert isinstance(settings, SlackSettings), settings
        self.settings = settings
        self.screen = Screen(
            owner=settings.user_id,
            owner_only=settings.respond_to_owner_only,
            all_channel_messages=settings.respond_to_all_channel_messages,
        )
        self._card_routes: dict[str, str] = {}
        """Progress message id -> route key, for clicks (a thread's route is not the channel's)."""
        self._web: WebApi | None = None
        self._sink: SlackSink | None = None
        self._teams: list[LoopReplies] = []
        self._refused: str | None = None
        """Why Socket Mode was refused for good (the app token), once it was."""
        self._serving = False
        """Reported ``connected`` once: a link that comes back says so again."""
        self._restarts = RestartDesk(
            self._store, _RESTART, self._send_restart_note, name="slack", log=log
        )
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
            nursery.start_soon(self.follow_routes)
            left = await self.read_inbox()  # before any card of this run can end
            await self.recover()
            # Started before the platform answers: the host's start never waits on Slack,
            # which may refuse a token or not answer at all; the status says which.
            task_status.started()
            if not await self._identify(web):
                await trio.sleep_forever()
            self.resume_inbox(left)  # before Slack's envelopes: what was left comes first
            client = SocketModeClient(
                api_url=s.api_url,
                app_token=s.app_token,
                handler=self._on_envelope,
                accept=self._accept,
                on_status=self._link_status,
            )
            up = trio.Event()
            nursery.start_soon(self._connect, client, up)
            await up.wait()
            if self._refused is not None:  # reported failed; this run serves nothing more
                await trio.sleep_forever()
            self._serving = True
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
                    after = f"within {delay:g} s" if delay <= 1.0 else f"in {delay:g} s"
                    detail = f"auth.test failed ({error}); next attempt {after}"
                    self.context.report(TransportStatus("connecting", detail))
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

    def _link_status(self, state: LinkState, detail: str | None) -> None:
        """Socket Mode's status, while it tries (a refusal reports ``failed`` in ``_connect``;
        ``connected`` is reported by ``run`` the first time)."""
        if state == "connecting":
            self.context.report(TransportStatus("connecting", detail))
        elif state == "connected" and self._serving:
            self.context.report(TransportStatus("connected"))

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
        # Final for this run: no retry loop against a refused app token. ``up`` is set too:
        # ``run`` waits on it, and a refusal before the first ``hello`` once left the
        # service never started (the host's start-up waited on it for good).
        self._refused = reason
        up.set()
        await trio.sleep_forever()

    # -- inbound ----------------------------------------------------------------------------

    async def _on_envelope(self, envelope: Envelope) -> None:
        """Socket Mode's handler (the envelope is acknowledged already): a click is decided;
        a message was accepted before the acknowledgement (``_accept``)."""
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

    async def _accept(self, envelope: Envelope) -> None:
        """Socket Mode's ``accept``, awaited before the envelope is acknowledged: a message
        screened, then its claims and inbox row written and the message handed to its
        route's lane in the order it came."""
        parsed = parse_envelope(
            envelope.type, envelope.payload, retry_attempt=envelope.retry_attempt
        )
        if not isinstance(parsed, InboundMessage):
            return
        screened = self._screened(parsed)
        if screened is None:
            return
        admit, route_key = screened
        message = admit.message
        if self.context.host is not None:
            self.context.host.note_inbound(route_key)
        accept = self.inbox.accept_op(
            f"slack-event:{message.event_id}",
            message_key(message.channel, message.ts),
            route_key,
            message.ts,  # as a turn's anchor names it; the channel is the route's
            json.dumps(envelope.payload),
        )
        route = self.route(route_key, message.channel)
        await self.accept(route, admit, accept, self.item_extra(admit))

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
        if action.approval_id == RESTART_CANCEL:
            host = self.context.host
            if host is None or not host.cancel_restart(action.decision):
                log.info("slack: the restart %s can no longer be cancelled", action.decision)
            return
        if action.approval_id == STOP:
            self.context.port.tell(route_key, Interrupt())
            return
        if action.approval_id == QUEUE_CANCEL:
            self._queue_click(route_key, card, action.decision)
            return
        self.context.port.tell(route_key, AnswerApproval(action.approval_id, action.decision))  # type: ignore[arg-type]

    def _screened(self, message: InboundMessage) -> tuple[Admit, str] | None:
        """The screen's decision (no write): the message admitted, and its route's key."""
        door = self.context.teams.get(message.channel)
        if door is not None:  # a team's channel: its door decides who is heard
            decision = screen(message, team_screen(door, self.screen.bot_user_id))
        else:
            decision = screen(message, self.screen)
        if isinstance(decision, Ignore):
            log.info("slack message ignored: %s", decision.reason, extra={"ts": message.ts})
            return None
        route_key = team_message(decision).route if door is not None else message.route_key
        return decision, route_key

    def fed_again(self, row: InboxRow) -> None:
        parsed = parse_envelope("events_api", json.loads(row.payload))
        screened = self._screened(parsed) if isinstance(parsed, InboundMessage) else None
        if screened is None:
            self.inbox.consume(row.id)
            return
        admit, route_key = screened
        route = self.route(route_key, admit.message.channel)
        self.hand_to_lane(route, Accepted.fed_again(admit, row.id))

    def item_extra(self, item: Any) -> Mapping[str, object]:
        return {"ts": item.message.ts}

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
                "slack.stale_message",
                {"channel": message.channel, "ts": message.ts, "route": route.key},
            ),
            started_at=self.context.started_at,
            extra={"ts": message.ts, "retry_attempt": message.retry_attempt},
        )
        if not fresh:
            return
        door = self.context.teams.get(message.channel)
        if door is not None:
            door.handle(team_message(admit))  # its effects come back through _team
            # The door keeps a request (``team_requests``) and says what became of it.
            self.inbox.consume(inbox, door=True)
            return
        await self._react(message.channel, message.ts, WORKING)  # Slack keeps one per emoji
        kind = "slack:im" if message.is_dm else "slack:channel"
        self._store.submit(NoteChat(f"slack:{message.channel}", kind), self.logged)
        text = bang(admit.text, _COMMAND_NAMES)
        restart = restart_command(text)
        if restart is not None:
            self.inbox.consume(inbox)
            await self._restart(route, message, restart)
            return
        prepared: Prepared | None = Prepared(text, ())
        if message.files:
            prepared = await self._with_files(route, message, text)
        if prepared is None:
            self.inbox.consume(inbox)
            return  # refused, and said why
        text = prepared.text
        pending = Pending(message.ts, text, message.reply_thread)
        if text.startswith("/"):
            route.commands.append(pending)
        else:
            route.pending.append(pending)
        input_ = UserInput(text, images=prepared.images, message_id=message.ts, inbox=inbox)
        self.context.port.tell(route.key, input_)

    async def _with_files(
        self, route: ChatRoute, message: InboundMessage, text: str
    ) -> Prepared | None:
        """The message's files downloaded (``_files``), or ``None`` once the person was told
        why not."""
        assert self._web is not None
        notes = media_notes(self.context.locale)
        folder = attachments_folder(self.context.profile.data_dir, message.channel)
        saved = await fetch(self._web, message.ts, message.files, folder, notes)
        if isinstance(saved, Refused):
            log.info("slack: a message's file was refused: %s", saved.reason)
            await self._post(route.channel, saved.reason, message.reply_thread)
            await self._settle_reaction(route.channel, message.ts, REACTIONS["failed"])
            return None
        takes = agent_capabilities(self.context.config, route.agent).images
        return prompt_with(text, saved, takes_images=takes, notes=notes)

    # -- the host's safe restart (RestartNotes, PendingFinals) ------------------------------

    def restart_note(self, note: RestartNote) -> None:
        self._restarts.note(note, self._nursery)

    async def _restart(self, route: ChatRoute, message: InboundMessage, restart: Restart) -> None:
        """The owner's ``/restart`` (``!restart``): the route enrolled in the host's restart."""
        host = self.context.host
        refusal = restart.refusal or (None if host is not None else _RESTART["no_restart"])
        reply = refusal
        if host is not None and refusal is None:
            schedule = self._restarts.request(
                host, route.key, message.reply_thread, force=restart.force
            )
            if schedule is not None:  # already enrolled: no new note
                reply = f"{_RESTART['restart']} ({schedule})"
        if reply is not None:
            await self._post(route.channel, reply, message.reply_thread)
        name = REACTIONS["failed"] if refusal is not None else REACTIONS["completed"]
        await self._settle_reaction(route.channel, message.ts, name)

    async def _send_restart_note(
        self, route_key: str, text: str, token: str | None, earlier: str | None, anchor: str | None
    ) -> str | None:
        """``RestartDesk``'s ``send``: a thread reply (its cancel button when ``token`` is set),
        or the scheduled note updated."""
        assert self._web is not None
        blocks = restart_blocks(text, _RESTART["restart_cancel"], token)
        if earlier is not None:
            channel, ts = split_message_id(earlier)
            await self._web.update_message(channel, ts, text=text, blocks=blocks)
            return None
        chat = route_chat(route_key)
        if chat is None:
            return None
        channel, thread = chat
        ts = await self._web.post_message(
            channel, text=text, blocks=blocks, thread_ts=anchor or thread
        )
        posted = message_id(channel, ts)
        if token is not None:
            self._card_routes[posted] = route_key
        return posted

    async def _post(self, channel: str, text: str, thread: str | None) -> None:
        assert self._web is not None
        try:
            await self._web.post_message(channel, text=text, thread_ts=thread)
        except ApiError as error:
            log.warning("slack: a reply could not be sent: %s", error)

    # -- the routes' notices (``ChatTurns``) ------------------------------------------------

    def turn_ended(self, route_key: str) -> None:
        door = self._team_door(route_key)
        if door is not None:
            door.turn_ended(route_key)

    def open_turn(self, route: ChatRoute, opening: Opening) -> _Turn:
        """The turn's card actor; its anchor: the ``ts`` of the message it answers."""
        assert self._sink is not None
        chat = route_chat(route.key)
        thread = chat[1] if chat is not None and chat[1] else opening.anchor
        if thread is not None:
            self._sink.anchors[opening.card_id] = thread
        agent = route.agent or self.context.config.defaults.agent
        stop_token = secrets.token_urlsafe(18)
        address = self.open_card(
            route, opening, lambda: SlackCards(agent=agent, stop_token=stop_token)
        )
        messages = list(opening.messages)
        return _Turn(
            opening.card_id, route.key, address, stop_token, messages, channel=route.channel
        )

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
        route = self.route(effect.route, thread[0])
        self._nursery.start_soon(self._team_input, route, thread[1], effect)

    async def _team_input(
        self, route: ChatRoute, thread: str, effect: StartRequest | FollowUpInput
    ) -> None:
        await self._react(route.channel, effect.anchor, WORKING)
        text = effect.text
        pending = Pending(effect.anchor, text, thread)
        (route.commands if text.startswith("/") else route.pending).append(pending)
        for request in effect.requests():
            self.context.port.tell(route.key, request)

    # -- after a restart (``ChatTurns.recover``) -------------------------------------------

    def route_of(self, route_key: str) -> ChatRoute | None:
        chat = route_chat(route_key)
        return None if chat is None else self.route(route_key, chat[0])

    def recovered(self, plan: Sequence[RecoveredTurn]) -> None:
        """Tell each thread what became of its unsettled turn (``recovery_notes``): carried
        on after the restart, or cut short and to be sent again."""
        assert self._nursery is not None
        for item, text in recovery_notes(plan, self.context.locale):
            turn = self._turns.get(item.attempt.id)
            thread = self._sink.anchors.get(turn.card_id) if turn and self._sink else None
            chat = route_chat(item.attempt.route_key)
            if thread is not None and chat is not None:  # in the thread it concerns
                self._nursery.start_soon(self._post, chat[0], text, thread)

    # -- the card renderer's notices (``ChatTurns``) -------------------------------------------

    def card_posted(self, attempt_id: str, turn: _Turn, message_id: str) -> None:
        del attempt_id  # Slack's card has no Reset action to bind to it
        self._card_routes[message_id] = turn.route_key
        turn.posted = message_id
        binding = ActionBinding(turn.stop_token, CardAction(turn.card_id, STOP, "cancel"))
        self._store.submit(BindCardActions(message_id, turn.route_key, (binding,)), self.logged)

    def answer_done(self, turn: _Turn, outcome: Outcome) -> None:
        assert self._nursery is not None
        if turn.posted is not None:
            self._card_routes.pop(turn.posted, None)
        if self._sink is not None:
            self._sink.anchors.pop(turn.card_id, None)
        for ts in turn.messages:
            self._nursery.start_soon(self._settle_reaction, turn.channel, ts, REACTIONS[outcome])

    # -- a queued prompt's note (``robota.core.frontend.QueueNotes``) ----------------------

    def input_queued(self, note: QueueNote) -> None:
        assert self._nursery is not None
        route = self._routes.get(note.route_key)
        if route is None:
            return
        chat = route_chat(route.key)
        thread = next(
            (p.thread for p in route.pending if p.message_id == note.anchor),
            chat[1] if chat is not None else None,
        )
        self._nursery.start_soon(self._queued_note, note, route.channel, thread)

    async def _queued_note(self, note: QueueNote, channel: str, thread: str | None) -> None:
        """The note in the message's thread, its Cancel bound to the route and prompt."""
        assert self._web is not None
        texts = queue_texts(self.context.locale)
        token = secrets.token_urlsafe(18)
        text = texts["queued"].format(ahead=note.ahead)
        blocks = restart_blocks(text, texts["cancel"], token, action_id=QUEUE_CANCEL)
        try:
            ts = await self._web.post_message(channel, text=text, blocks=blocks, thread_ts=thread)
        except ApiError as error:
            log.warning("slack: the queued note could not be sent: %s", error)
            return
        posted = message_id(channel, ts)
        self._card_routes[posted] = note.route_key
        await self.queued_note_posted(note, posted, token)

    async def settle_note(self, note: QueueNote) -> None:
        """The note without its button: ``started`` or ``cancelled``."""
        assert self._web is not None and note.message_id is not None
        text = queue_texts(self.context.locale)[note.state]
        channel, ts = split_message_id(note.message_id)
        try:
            await self._web.update_message(
                channel, ts, text=text, blocks=restart_blocks(text, "", None)
            )
        except ApiError as error:
            log.warning("slack: the queued note could not be updated: %s", error)

    def _queue_click(self, route_key: str, card: str, decision: str) -> None:
        """A claimed Cancel (``ChatTurns.cancel_queued``): the note says cancelled and the
        message's reaction settles; nothing once the prompt's turn began (the note says so)."""
        assert self._nursery is not None
        route = self.route_of(route_key)
        if not decision.isdigit() or route is None:
            log.warning("slack: a queue action names no prompt of a route: %r", decision)
            return
        cancelled = self.cancel_queued(route, int(decision), card)
        if cancelled is None:
            return
        if cancelled.anchor is not None:
            self._nursery.start_soon(
                self._settle_reaction, route.channel, cancelled.anchor, REACTIONS["interrupted"]
            )
        self._nursery.start_soon(self.settle_note, cancelled)

    # -- outbound helpers ------------------------------------------------------------------

    async def _react(self, channel: str, ts: str, name: str) -> None:
        assert self._web is not None
        try:
            await self._web.add_reaction(channel, ts, name)
        except ApiError as error:
            log.warning("slack: the %s reaction failed: %s", name, error)

    async def _settle_reaction(self, channel: str, ts: str, name: str) -> None:
        """``eyes`` on the message replaced by ``name``, and its inbox row marked."""
        assert self._web is not None
        await self._react(channel, ts, name)
        try:
            await self._web.remove_reaction(channel, ts, WORKING)
        except ApiError as error:
            log.warning("slack: the eyes reaction could not be removed: %s", error)
        self.inbox.settled(message_key(channel, ts))

    async def settle_left(self, row: InboxRow, outcome: Outcome) -> None:
        chat = route_chat(row.route_key)
        if chat is not None:
            await self._settle_reaction(chat[0], row.message_id, REACTIONS[outcome])

    async def route_reply(
        self, route: ChatRoute, anchor: Pending | None, reply: RouteReply
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
            await self._settle_reaction(route.channel, anchor.message_id, name)
