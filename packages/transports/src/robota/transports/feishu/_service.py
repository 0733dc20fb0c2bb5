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
at start, the start-up notes); ``connecting`` with the last error and the next attempt while
the link cannot be made; ``failed`` when the platform refused it for good. The service counts
as started before its link is up: the host's start never waits on the platform.

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
from contextlib import closing
from typing import TYPE_CHECKING

import trio

from robota.core import LoopPort, Timers
from robota.core.cards import CardDelivery, CardHost
from robota.core.frontend import (
    NOTE_TIMEOUT,
    ChatRoute,
    Pending,
    RestartDesk,
    RestartNote,
    TransportContext,
    TransportStatus,
)
from robota.core.store import (
    ChatContext,
    NoteChat,
    Task,
    chat_contexts,
    open_reader,
)
from robota.core.store import task as load_task
from robota.core.teams import FollowUpInput, LoopReplies, StartRequest, say_offline

from ._admission import Admission
from ._client import LongConnectionClient
from ._errors import ApiError, ConnectionRefused
from ._groups import FeishuGroups, group_notes, welcome_text
from ._inbound import (
    Screen,
)
from ._outbound import FeishuSink, Messenger
from ._replies import _MUTE
from ._rest import RestClient
from ._team import team_say
from ._texts import _note_card

if TYPE_CHECKING:
    from collections.abc import Callable

    from robota.core.frontend import GroupChat

    from ._connection import LinkState

__all__ = ["FeishuService"]

log = logging.getLogger("robota.transports.feishu")


class FeishuService(Admission):
    """See the module docstring."""

    def __init__(self, context: TransportContext, *, bot_read: Callable[[str, str], None]) -> None:
        super().__init__(context)
        self._bot_read = bot_read
        """Told ``(app_id, open_id)`` once the bot's open_id is read (``FeishuTransport``'s
        ``agent_env`` gives it to later agents)."""
        self._restarts = RestartDesk(
            self._store, self.notes, self._send_restart_note, name="feishu", log=log
        )
        self._serving = False
        """Reported ``connected`` once: a link that comes back says so again."""

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
            nursery.start_soon(self.follow_routes)
            await self._load_chats()
            left = await self.read_inbox()  # before any card of this run can end
            await self.recover()
            # Started before the platform answers: the host's start never waits on Feishu,
            # which may refuse or never answer; the link reports its state as it goes.
            task_status.started()
            await self._read_bot(rest)  # the screen knows the bot: what was left can run
            message_ids: list[str | None] = [
                row.message_id for row in (*left.untaken, *(r for r, _ in left.unsettled))
            ]
            if message_ids:
                found = await trio.to_thread.run_sync(self._read_reactions, message_ids)
                self._reactions.update(found)
            self.resume_inbox(left)
            client = LongConnectionClient(
                domain=s.domain,
                app_id=s.app_id,
                app_secret=s.app_secret,
                handler=self._on_event,
                on_status=self._link_status,
            )
            up = trio.Event()
            nursery.start_soon(self._connect, client, up)
            await up.wait()
            await self._startup_notes()
            self._attach_teams(nursery)
            try:
                # Readiness waits for one outbound call to succeed, however long that takes.
                while not await self._ready(rest):
                    await trio.sleep(5.0)
                self._serving = True
                self.context.report(TransportStatus("connected"))
                self.context.offer_groups(self._groups)
                await trio.sleep_forever()
            finally:
                await say_offline(self._teams, NOTE_TIMEOUT)  # on the way down

    async def _ready(self, rest: RestClient) -> bool:
        if not self._outbound_ok:
            await self._read_bot(rest)
        return self._outbound_ok

    def _link_status(self, state: LinkState, detail: str | None) -> None:
        """The long connection's status, while it tries (a refusal reports ``failed`` in
        ``_connect``; ``connected`` waits for an outbound call the first time)."""
        if state == "connecting":
            self.context.report(TransportStatus("connecting", detail))
        elif state == "connected" and self._serving:
            self.context.report(TransportStatus("connected"))

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
            self._bot_read(self.settings.app_id, open_id)
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

    def team_input(self, effect: StartRequest | FollowUpInput) -> None:
        """A team request starts, or text goes on to its thread's task (the loop)."""
        assert self._nursery is not None
        self._nursery.start_soon(self._team_input, self._route(effect.route), effect)

    async def _team_input(self, route: ChatRoute, effect: StartRequest | FollowUpInput) -> None:
        # A request the door starts again after a restart may carry the killed run's OnIt
        # too: its settling reads the bot's reactions first (``_settle_unsure``).
        self._unsure.add(effect.anchor)
        await self._react(effect.anchor, "OnIt")
        text = effect.text
        if text.startswith("/"):
            route.commands.append(Pending(effect.anchor, text))
        else:
            route.pending.append(Pending(effect.anchor, text))
        for request in effect.requests():
            self.context.port.tell(route.key, request)
