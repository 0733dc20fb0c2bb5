"""A chat transport's turns, platform-neutral: routes read, cards opened, a restart finished.

Every chat transport (docs/architecture/chat-transports.md §10) serves its routes the same
way, and this is that machinery; a transport's service owns a ``ChatTurns`` and hands it its
platform's part, an object implementing ``TurnHooks`` (``ChatService`` is one; nothing here is
extended):

* ``accept`` / ``offer``: a message to its route's lane, or to wait at the gate while
  ``MAX_BUSY_CHATS`` other chats are busy (``_chat_gate``; ``serve_waiting`` hands the chat
  that waited longest over as busy ones settle, all its messages in order).
* ``route(key)`` makes a route served: subscribed on the front-end port before anything is
  told to it (no notice of its first turn can be missed), a lane (one task per route, so a
  chat's messages keep their order and one slow chat holds no other) whose items go to
  ``admit``, and a reader of the route's notices. A reader that fell behind (``Overflowed``)
  subscribes again; one whose route another front end took over leaves it be.
  ``retire_quiet`` (each ``RETIRE_EVERY`` seconds, by ``follow_routes``) stops following a
  route with nothing in flight for ``RETIRE_AFTER`` seconds: its lane, its reader and its
  subscription go, and its next message (or the host's ``serve_route``) follows it again. A
  host in thousands of chats keeps only the ones that speak (about 10 KB each, measured with
  tracemalloc over 2 000 routes), as the engine passivates their route actors.
* The notices: ``TaskOpened`` names the route's agent, ``TurnBegan`` opens the turn's card
  (``open_turn``, by ``open_card``; anchored to the person's message it answers: the oldest
  pending one with its text, recorded by ``AnchorTurnAttempt``), ``TurnUpdate`` feeds it,
  ``InputSteered`` adds the steering message to the turn's, ``InputQueued`` notes a queued
  prompt (``input_queued``; its turn's start: ``queued_started``), ``TurnFinished`` ends it (then
  ``turn_ended``), and a ``RouteReply`` answers the oldest command (``route_reply``).
* The card renderer's notices (``notify``): ``ProgressCardPosted`` -> ``card_posted``; the
  answer delivered or failed -> the turn is forgotten and ``answer_done`` settles its messages
  with the outcome (``completed``, ``failed``, ``interrupted``).
* ``recover``: the engine recovered before the transport started, so a continued turn's start
  may have been said to nobody. What is unsettled is read (``unsettled_chat_turns``), its
  routes subscribed, the store read again on the loop with no await before the cards open
  (``recovery_plan``, pure, ``_recovery_plan``): a turn that ended before the second read is
  ended from the store, one that ends after it is told by its route, never both and never
  neither.
* ``inbox`` (``_chat_inbox``): a message accepted (claimed and kept) before the platform is
  acknowledged, the lane's stale guard, and after a restart ``read_inbox`` / ``resume_inbox``:
  what no route took in fed again (``fed_again``), what ended unsettled settled
  (``settle_left``).

The names in parentheses above that ``ChatTurns`` does not define are ``TurnHooks``'. The
values it keeps (``ChatRoute``, ``Pending``, ``Opening``, ``ChatTurn``) are ``_chat_values``'.
A card's turn id is the engine's attempt id with the transport's ``card_suffix``: the engine's
own ledger row for the attempt and the card's for the answer never see each other.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

import trio

from ..cards import (
    CardDelivery,
    CardHost,
    CardPlatform,
    CardTurn,
    FinalAnswerDelivered,
    FinalAnswerFailed,
    ProgressCardPosted,
)
from ..engine import (
    InputQueued,
    InputSteered,
    RouteReply,
    TaskOpened,
    TurnBegan,
    TurnFinished,
    TurnUpdate,
    UserInput,
    prompt_answers,
)
from ..events import TurnCompleted
from ..kernel import release_free_memory
from ..presentation import UserSteer
from ..store import (
    AcceptInbound,
    ActionBinding,
    AnchorTurnAttempt,
    BindCardActions,
    CardAction,
    InboxRow,
    TurnAttempt,
    open_reader,
    unsettled_chat_turns,
)
from ._chat_gate import MAX_BUSY_CHATS, ChatGate, Waiting
from ._chat_inbox import Accepted, ChatInbox, InboxLeft
from ._chat_retire import let_go, retire_timing
from ._chat_values import ChatRoute, ChatTurn, Opening, Outcome, Pending, take_pending
from ._port import Overflowed
from ._queue import QUEUE_CANCEL, QueueNote, QueueNotes
from ._recovery_plan import RecoveredTurn, recovery_plan

if TYPE_CHECKING:
    from ..kernel import Address, LoopPort
    from ._transport import TransportContext

__all__ = ["RECOVER_SINCE", "ChatTurns", "TurnHooks"]

STORE_TIMEOUT = 10.0
RETIRE_AFTER = 60.0
"""Seconds a route with nothing in flight is followed before the shell lets it go."""
RETIRE_EVERY = 15.0
GATE_EVERY = 0.1
"""Seconds between two looks at the busy chats while chats wait at the gate (``_chat_gate``)."""
RECOVER_SINCE = 3600.0
"""Seconds back a restart looks for turns whose card or answer the last run left unsent."""

_ENDED: Mapping[str, Outcome] = {"failed": "failed", "interrupted": "interrupted"}


class TurnHooks(Protocol):
    """The platform's part of ``ChatTurns``: what it hands a route's items to, how a turn's
    card opens, and what it is told as the routes and cards go (each on the loop)."""

    async def admit(self, route: ChatRoute, item: Any) -> None:
        """One item of the route's lane, in order."""

    def item_extra(self, item: Any) -> Mapping[str, object]:
        """The log fields naming a lane item."""
        ...

    def chat_of(self, route_key: str) -> str | None:
        """The conversation of a route key the store names, kept as its route's ``channel``
        (``None``: not one of this transport's routes)."""
        ...

    def open_turn(self, route: ChatRoute, opening: Opening) -> ChatTurn:
        """The turn's card (``ChatTurns.open_card``) as a turn."""
        ...

    async def route_reply(
        self, route: ChatRoute, anchor: Pending | None, reply: RouteReply
    ) -> None:
        """A command's reply; ``anchor``: the command's message, if it came from one."""

    def turn_ended(self, route_key: str) -> None:
        """After the route said a turn ended (its card was told)."""

    def input_queued(self, note: QueueNote) -> None:
        """A person's text waits in the route's queue (``note``, its anchor found): say so."""

    async def settle_note(self, note: QueueNote) -> None:
        """The queued note of ``note`` without its Cancel action: it says ``note.state``
        (``started`` or ``cancelled``)."""

    def card_posted(self, attempt_id: str, turn: ChatTurn, message_id: str) -> None:
        """The turn's card exists: its buttons may be bound."""

    def answer_done(self, turn: ChatTurn, outcome: Outcome) -> None:
        """The turn's answer was delivered (or failed: ``outcome`` is then ``failed``): its
        messages' reactions settle."""

    def recovering(self, unsettled: Sequence[tuple[TurnAttempt, str | None]]) -> None:
        """What the last run left, read on the loop before its cards open again."""

    def recovered(self, plan: Sequence[RecoveredTurn]) -> None:
        """The unsettled turns' cards are open again."""

    def fed_again(self, row: InboxRow) -> None:
        """A message the last run accepted and no route took in: to its lane again (an
        ``Accepted`` with ``again``, ``ChatTurns.offer``), or consumed
        (``ChatTurns.inbox``) when it is no more to run."""

    def hear_again(self, payload: str) -> Any | None:
        """The lane item of a message accepted before, heard again from its event as the
        platform sent it (``None``: not a message to run)."""
        ...

    async def settle_left(self, row: InboxRow, outcome: Outcome) -> None:
        """A message whose turn ended while its reactions were left unsettled: settle them
        (and mark it, ``ChatTurns.inbox.settled``)."""

    async def went_quiet(self) -> None:
        """A batch of quiet routes was let go: what only a busy platform needs goes too (its
        idle connections, its rate windows), before the memory is given back."""


# -- the machinery --------------------------------------------------------------------------------


class ChatTurns:
    """See the module docstring. ``hooks``: the platform's part; ``name`` prefixes the log
    lines; ``route_prefix`` is what this transport's route keys begin with."""

    def __init__(
        self,
        context: TransportContext,
        hooks: TurnHooks,
        *,
        name: str,
        route_prefix: str,
        card_suffix: str,
        log: logging.Logger,
        max_busy: int = MAX_BUSY_CHATS,
    ) -> None:
        self.context = context
        self._hooks = hooks
        self._store = context.store
        self._chat_name = name
        self._route_prefix = route_prefix
        self._card_suffix = card_suffix
        self._log = log
        self._routes: dict[str, ChatRoute] = {}
        self._turns: dict[str, ChatTurn] = {}
        self._nursery: trio.Nursery | None = None
        self._port: LoopPort | None = None
        self._cards: CardHost | None = None
        self._delivery: CardDelivery | None = None
        self.queue_notes = QueueNotes()
        """The queued prompts' notes (``_queue``): told by ``InputQueued`` and ``TurnBegan``."""
        self._swallowed: set[str] = set()
        """Notes whose Cancel was told to the route: the engine's reply is the note itself."""
        self.inbox = ChatInbox(
            context.store, context.db_path, source=name, card_suffix=card_suffix, log=log
        )
        """The accepted messages until their routes took them in (``_chat_inbox``)."""
        self.gate: ChatGate[Waiting] = ChatGate(max_busy)
        """The chats waiting to be served (``_chat_gate``), with their messages."""
        self._gate_wake = trio.Event()
        self._agents: dict[str, str] = {}
        """Each route's agent as its last ``TaskOpened`` named it: kept when a quiet route is
        let go (``retire_quiet``), whose next turn may come with no ``TaskOpened``."""

    def attach(
        self,
        nursery: trio.Nursery,
        port: LoopPort | None = None,
        cards: CardHost | None = None,
        delivery: CardDelivery | None = None,
    ) -> None:
        """The run's nursery (the lanes and readers run in it), the port that carries the card
        actors' notices to the loop and the card renderer: handed over by the service's run
        before any route is followed (the cards, before any opens)."""
        self._nursery = nursery
        self._port = port
        self._cards = cards
        self._delivery = delivery

    # -- what the service asks -----------------------------------------------------------------

    def queued_started(self, note: QueueNote) -> None:
        """A queued prompt's turn began: its note's Cancel action goes (a note not posted yet
        sees it once posted, ``queued_note_posted``)."""
        assert self._nursery is not None
        if note.message_id is not None:
            self._nursery.start_soon(self._hooks.settle_note, note)

    def route_of(self, route_key: str) -> ChatRoute | None:
        """The served route of a key the store names (``None``: not one of this transport's,
        ``TurnHooks.chat_of``)."""
        chat = self._hooks.chat_of(route_key)
        return None if chat is None else self.route(route_key, chat)

    def followed(self, route_key: str) -> ChatRoute | None:
        """The route of ``route_key`` if it is followed now (not followed again by asking)."""
        return self._routes.get(route_key)

    def turn_of(self, attempt_id: str) -> ChatTurn | None:
        """The open turn of an attempt (its card not done yet)."""
        return self._turns.get(attempt_id)

    def serve_route(self, route_key: str) -> bool:
        """``ServesRoutes``: follow ``route_key`` from now on when it is one of this
        transport's (``route_of``), so a turn the host starts on it shows in its chat."""
        if self._nursery is None or not route_key.startswith(self._route_prefix):
            return False
        return self.route_of(route_key) is not None

    def pending_finals(self) -> int:
        """``PendingFinals``: the turns that ended whose answer is not delivered yet."""
        return sum(1 for turn in self._turns.values() if turn.completed)

    # -- routes ------------------------------------------------------------------------------

    def route(self, route_key: str, channel: str = "") -> ChatRoute:
        route = self._routes.get(route_key)
        if route is not None:
            # Whoever asks for it is about to use it, maybe after an await (a reaction first):
            # a route asked for is not quiet.
            route.quiet_since = time.monotonic()
            return route
        assert self._nursery is not None
        send, receive = trio.open_memory_channel[Any](1000)
        # Subscribed before the first input is told: no notice of its turn can be missed.
        link = self.context.port.subscribe(route_key, shared=True)
        route = ChatRoute(
            route_key,
            send,
            link,
            channel,
            agent=self._agents.get(route_key),
            quiet_since=time.monotonic(),
        )
        self._routes[route_key] = route
        self._nursery.start_soon(self._lane, route, receive)
        self._nursery.start_soon(self._read_route, route)
        return route

    def hand_to_lane(self, route: ChatRoute, item: Any) -> None:
        if route.retired:  # held from before it was let go: follow it again
            route = self.route(route.key, route.channel)
        route.quiet_since = time.monotonic()
        try:
            route.lane.send_nowait(item)
        except trio.WouldBlock:
            full = True
        else:
            full = False
            route.in_lane += 1
        if full:
            self._log.error(
                "%s: the lane of %s is full; message dropped", self._chat_name, route.key
            )

    async def accept(
        self,
        route_key: str,
        channel: str,
        item: Any,
        *,
        payload: str,
        op: AcceptInbound,
        extra: Mapping[str, object],
    ) -> None:
        """``item`` to its route's lane (or to wait at the gate, ``offer``; ``payload``: the
        event it was heard from) in the order the platform delivered it, then its accept
        written (``op``: its claims and inbox row), which the caller awaits before the platform
        is acknowledged; the lane admits it once written, unless claimed before or not written
        (``ChatInbox.accept``: a write that outlasts the caller is still the lane's to
        admit)."""
        accepted = Accepted(item)
        waiting = self.offer(route_key, channel, accepted, payload)
        await self.inbox.accept(accepted, op, extra)
        if waiting is not None:
            waiting.landed()

    def offer(
        self, route_key: str, channel: str, accepted: Accepted, payload: str
    ) -> Waiting | None:
        """``accepted`` to the lane of ``route_key`` (followed in ``channel`` if it is not),
        unless its chat must wait to be served (``_chat_gate``): then it is kept as it waits
        (returned; ``payload``: the event it was heard from, heard again when served) and
        ``serve_waiting`` hands it over, after its chat's earlier messages, once fewer chats
        are busy."""
        route = self._routes.get(route_key)
        busy = route is not None and not route.retired and self.in_flight(route)
        busy_chats = 0 if busy else self.busy_chats()
        queued = route_key in self.gate
        waiting = Waiting(channel, payload, accepted)
        if self.gate.offer(route_key, waiting, busy=busy, busy_chats=busy_chats):
            self.hand_to_lane(self.route(route_key, channel), accepted)
            return None
        accepted.item = None  # heard again from ``payload`` once served
        waiting.landed()  # one fed again from the inbox was written before: only its row stays
        if not queued and self.gate.waiting == 1:
            self._log.info(
                "%s: %d chats are busy; the next ones wait their turn",
                self._chat_name,
                busy_chats,
            )
        self._gate_wake.set()
        return waiting

    async def serve_waiting(self, every: float = GATE_EVERY) -> None:
        """Hand the chats waiting at the gate to their lanes, longest waiting first, as busy
        ones settle (a service runs it in its nursery; it looks every ``every`` seconds while
        any waits, and sleeps while none does)."""
        while True:
            await self._gate_wake.wait()
            while self.gate.waiting:
                for route_key, messages in self.gate.release(self.busy_chats()):
                    for waiting in messages:
                        try:
                            accepted = self._served(waiting)
                            if accepted is not None:
                                route = self.route(route_key, waiting.channel)
                                self.hand_to_lane(route, accepted)
                        except Exception:  # one message's fault; its row stays for a restart
                            self._log.exception(
                                "%s: a waiting message could not be served", self._chat_name
                            )
                if self.gate.waiting:
                    await trio.sleep(every)
            self._gate_wake = trio.Event()

    def _served(self, waiting: Waiting) -> Accepted | None:
        """The lane item of a message served after waiting, heard again from its event;
        ``None`` when there is nothing to admit (claimed before, never written)."""
        accepted = waiting.accepted
        if accepted is None and waiting.inbox is None:
            return None
        item = self._hooks.hear_again(waiting.payload)
        if item is None:  # heard once already: only a platform changed under it says no
            self._log.error("%s: a waiting message could not be heard again", self._chat_name)
            if waiting.inbox is not None:
                self.inbox.consume(waiting.inbox)
            return None
        if accepted is None:
            assert waiting.inbox is not None
            return Accepted.served(item, waiting.inbox, again=waiting.again)
        accepted.item = item  # its write is late: the lane waits for it
        return accepted

    async def _lane(self, route: ChatRoute, receive: trio.MemoryReceiveChannel[Any]) -> None:
        async for item in receive:
            try:
                if isinstance(item, Accepted):
                    await item.written.wait()
                    if item.inbox is None:
                        continue  # claimed before: a redelivery (``finally`` still runs)
                await self._hooks.admit(route, item)
            except Exception:
                self._log.exception(
                    "%s: a message could not be handled",
                    self._chat_name,
                    extra=dict(self._hooks.item_extra(item)),
                )
            finally:
                route.in_lane -= 1
                route.quiet_since = time.monotonic()

    # -- letting quiet routes go ---------------------------------------------------------------

    def in_flight(self, route: ChatRoute) -> bool:
        """Whether anything of ``route`` is under way: a message waiting for its turn or
        reply, an item in or being admitted by its lane, an open card, a queued note."""
        return self._under_way(route, {turn.route_key for turn in self._turns.values()})

    def busy_chats(self) -> int:
        """The followed routes with something under way (``in_flight``)."""
        turning = {turn.route_key for turn in self._turns.values()}
        return sum(1 for route in self._routes.values() if self._under_way(route, turning))

    def _under_way(self, route: ChatRoute, turning: set[str]) -> bool:
        return bool(
            route.pending
            or route.commands
            or route.in_lane
            or route.key in turning
            or self.queue_notes.waiting(route.key)
        )

    def retire_quiet(self, now: float, after: float = RETIRE_AFTER) -> list[str]:
        """Stop following the routes with nothing in flight and quiet for ``after`` seconds
        at ``now`` (``time.monotonic``); their keys. Whatever reaches one of them next
        (a message, ``serve_route``) follows it again through ``route``."""
        gone = [
            route
            for route in self._routes.values()
            if now - route.quiet_since >= after and not self.in_flight(route)
        ]
        for route in gone:
            del self._routes[route.key]
            route.retired = True
            route.lane.close()  # its lane task ends: the lane is empty
            route.link.close()  # and its reader with the subscription
            let_go(
                route.key,
                route.cards,
                agents=self._agents,
                notes=self.queue_notes,
                delivery=self._delivery,
                context=self.context,
            )
        return [route.key for route in gone]

    async def follow_routes(
        self, every: float = RETIRE_EVERY, release: Callable[[], object] = release_free_memory
    ) -> None:
        """Let quiet routes go every ``every`` seconds (a service runs it in its nursery);
        after a batch went, the platform lets go of what it kept for them (``went_quiet``)
        and what they held is given back (``release``, off the loop: the lanes, readers and
        subscriptions of a burst's chats are the last of it)."""
        after, every = retire_timing(RETIRE_AFTER, every)
        while True:
            await trio.sleep(every)
            # Only the count is kept: the list of keys would outlive the batch in this frame.
            gone = len(self.retire_quiet(time.monotonic(), after))
            if gone:
                self._log.debug("%s: %d quiet routes let go", self._chat_name, gone)
                await trio.sleep(1.0)  # their lane and reader tasks end first
                await self._hooks.went_quiet()
                await trio.to_thread.run_sync(release)

    async def read_inbox(self) -> InboxLeft:
        """What the last run left in the inbox (``_chat_inbox``): read before ``recover``
        opens any card, so no answer of this run is settled twice; ``resume_inbox`` acts on
        it once the platform's screen works (and before its events are read)."""
        try:
            return await trio.to_thread.run_sync(self.inbox.left)
        except Exception:
            self._log.exception("%s: the inbox could not be read", self._chat_name)
            return InboxLeft()

    def resume_inbox(self, left: InboxLeft) -> None:
        """Settle the reactions of the messages whose turn ended (``settle_left``) and feed
        the messages no route took in to their lanes again, in order (``fed_again``)."""
        assert self._nursery is not None
        for row, outcome in left.unsettled:
            self._nursery.start_soon(self._hooks.settle_left, row, outcome)
        for row in left.untaken:
            self._log.info(
                "%s: a message accepted by the last run is fed again",
                self._chat_name,
                extra={"message_id": row.message_id},
            )
            self._hooks.fed_again(row)

    async def queued_note_posted(self, note: QueueNote, note_id: str, token: str) -> None:
        """The queued prompt's note is posted as ``note_id``: its Cancel (``token``) is bound
        to the route and prompt, and the note known to ``queue_notes``; settled at once when
        its prompt started (or went) while it was being posted."""
        action = CardAction(f"queue:{note.prompt_id}", QUEUE_CANCEL, str(note.prompt_id))
        await self._store.write(
            BindCardActions(note_id, note.route_key, (ActionBinding(token, action),)),
            timeout=STORE_TIMEOUT,
        )
        now = self.queue_notes.posted(note.route_key, note.prompt_id, note_id)
        if now is not None and now.state != "queued":
            await self._hooks.settle_note(now)

    def cancel_queued(self, route: ChatRoute, prompt_id: int, note_id: str) -> QueueNote | None:
        """A claimed Cancel on the note ``note_id`` of ``prompt_id``: the engine's ``/queue
        cancel N`` told (the same path as typing it; its reply is not said, the note is) and
        the person's message no longer pending; the note cancelled, to show (its ``anchor``:
        the message to settle). ``None``: too late (it started) or cancelled already."""
        verdict = self.queue_notes.click(route.key, prompt_id)
        if verdict in ("started", "cancelled"):
            self._log.info(
                "%s: queued prompt %d not cancelled: %s", self._chat_name, prompt_id, verdict
            )
            return None
        # ``unknown``: a note of the last run; the engine's queue outlived it, cancel there.
        note = self.queue_notes.get(route.key, prompt_id)
        anchor = note.anchor if note is not None else None
        self._swallowed.add(note_id)
        route.commands.append(Pending(note_id, ""))
        self.context.port.tell(route.key, UserInput(f"/queue cancel {prompt_id}"))
        for index, pending in enumerate(route.pending):
            if anchor is not None and pending.message_id == anchor:
                del route.pending[index]
                break
        return QueueNote(route.key, prompt_id, "", anchor, note_id, "cancelled")

    # -- the routes' notices -----------------------------------------------------------------

    async def _read_route(self, route: ChatRoute) -> None:
        while True:
            async for batch in route.link:  # ends quietly on LinkEnded
                route.quiet_since = time.monotonic()
                for notice in batch:
                    try:
                        self._notice(route, notice)
                    except Exception:
                        self._log.exception(
                            "%s: a route notice could not be shown", self._chat_name
                        )
            if route.retired:
                return  # let go while quiet (``retire_quiet``)
            reason = route.link.reason
            self._log.warning(
                "%s: the subscription of %s ended (%s)", self._chat_name, route.key, reason
            )
            if not isinstance(reason, Overflowed):
                return  # closed, or another front end took the route over: leave it be
            # Fell behind: what was missed is in the store; the cards carry on from here.
            route.link = self.context.port.subscribe(route.key, shared=True)

    def _notice(self, route: ChatRoute, notice: object) -> None:
        if isinstance(notice, TaskOpened):
            route.agent = self._agents[route.key] = notice.agent
        elif isinstance(notice, TurnBegan):
            self._open_card(route, notice)
        elif isinstance(notice, TurnUpdate):
            turn = self._turns.get(notice.attempt_id)
            if turn is not None and not isinstance(notice.event, TurnCompleted):
                turn.address.tell(notice.event)
        elif isinstance(notice, InputSteered):
            turn = self._turns.get(notice.attempt_id)
            pending = take_pending(route.pending, notice.text)
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
            self._hooks.turn_ended(route.key)
        elif isinstance(notice, InputQueued):
            asker = next(
                (p.message_id for p in route.pending if prompt_answers(notice.text, p.text)), None
            )
            note = self.queue_notes.queued(
                route.key, notice.prompt_id, notice.text, asker, notice.ahead
            )
            self._hooks.input_queued(note)
        elif isinstance(notice, RouteReply):
            anchor = route.commands.popleft() if route.commands else None
            if anchor is not None and anchor.message_id in self._swallowed:
                self._swallowed.discard(anchor.message_id)  # the note says it (cancel_queued)
                return
            assert self._nursery is not None
            self._nursery.start_soon(self._hooks.route_reply, route, anchor, notice)

    def _open_card(self, route: ChatRoute, began: TurnBegan) -> None:
        started = self.queue_notes.began(route.key, began.prompt)
        if started is not None:
            self.queued_started(started)
        if began.attempt_id in self._turns:
            return  # opened from the store after a restart
        pending = take_pending(route.pending, began.prompt)
        if pending is None and began.message_id is not None:
            # The engine knows the message (a queued prompt, a turn continued after a
            # restart): this run may never have held it.
            anchor: str | None = began.message_id
            for index, item in enumerate(route.pending):
                if item.message_id == anchor:
                    del route.pending[index]
                    break
        else:
            if pending is None and route.pending and not began.recovery:
                pending = route.pending.popleft()
            anchor = pending.message_id if pending is not None else None
        if anchor is not None:
            self._store.submit(AnchorTurnAttempt(began.attempt_id, anchor), self.logged)
        messages = (anchor,) if anchor else ()
        # Every TurnBegan is a new attempt's, and one opened from the store returned above.
        self._open(route, began.attempt_id, began.task_id, anchor, messages, began=began)

    def _open(  # noqa: PLR0917 (the one place a card opens; every caller names them all)
        self,
        route: ChatRoute,
        attempt_id: str,
        task_id: str,
        anchor: str | None,
        messages: tuple[str, ...],
        started_at: float | None = None,
        *,
        began: TurnBegan | None = None,
        ended: TurnCompleted | None = None,
    ) -> ChatTurn:
        """``began``: the turn's ``TurnBegan``, when it began just now; ``None``: a turn opened
        again from the store."""
        card_id = f"{attempt_id}{self._card_suffix}"
        opening = Opening(
            attempt_id,
            task_id,
            card_id,
            anchor,
            messages,
            started_at or time.time(),
            restricted=began.restricted if began is not None else None,
            fresh=began is not None,
            ended=ended,
        )
        turn = self._hooks.open_turn(route, opening)
        self._turns[attempt_id] = turn
        route.cards.append(card_id)
        return turn

    def open_card(
        self, route: ChatRoute, opening: Opening, platform: Callable[[], CardPlatform]
    ) -> Address:
        """The turn's card actor, its notices carried to this loop."""
        assert self._cards is not None and self._delivery is not None
        restricted = opening.restricted
        if restricted is None:  # the trust decision reads the task and the trust store
            restricted = self.context.restricted(opening.task_id)
        return self._cards.open(
            CardTurn(
                opening.card_id,
                opening.task_id,
                route.key,
                started_at=opening.started_at,
                restricted=restricted,
                fresh=opening.fresh,
                ended=opening.ended,
            ),
            platform,
            self._delivery,
            notify=self.notify(opening.attempt_id),
        )

    # -- the card renderer's notices -----------------------------------------------------------

    def notify(self, attempt_id: str) -> Callable[[object], None]:
        """What a card actor tells (on its thread), carried to the loop."""
        port = self._port
        assert port is not None

        def notify(notice: object) -> None:  # the card actor's thread
            port.post(self._card_notice, attempt_id, notice)

        return notify

    def _card_notice(self, attempt_id: str, notice: object) -> None:
        turn = self._turns.get(attempt_id)
        if turn is None:
            return
        if isinstance(notice, ProgressCardPosted):
            self._hooks.card_posted(attempt_id, turn, notice.message_id)
        elif isinstance(notice, FinalAnswerDelivered | FinalAnswerFailed):
            del self._turns[attempt_id]
            outcome: Outcome = "completed"
            if isinstance(notice, FinalAnswerFailed):
                self._log.error(
                    "%s: the answer of %s was not delivered: %s",
                    self._chat_name,
                    attempt_id,
                    notice.error,
                )
                outcome = "failed"
            else:
                outcome = _ENDED.get(turn.status or "", "completed")
            self._hooks.answer_done(turn, outcome)

    # -- after a restart ---------------------------------------------------------------------

    async def recover(self) -> None:
        """Finish what the last run left: cards still running, answers not sent (see the
        module docstring)."""
        since = time.time() - RECOVER_SINCE
        try:
            first = await trio.to_thread.run_sync(self._unsettled, since)
        except Exception:
            self._log.exception("%s: what the last run left could not be read", self._chat_name)
            return
        if not first:
            return
        for attempt, _ in first:
            self.route_of(attempt.route_key)
        unsettled = self._unsettled(since)  # on the loop: see the module docstring
        self._hooks.recovering(unsettled)
        skip = frozenset(
            attempt.id
            for attempt, _ in unsettled
            if attempt.id in self._turns or self.route_of(attempt.route_key) is None
        )
        plan = recovery_plan(unsettled, skip=skip)
        for item in plan:
            attempt = item.attempt
            route = self.route_of(attempt.route_key)
            assert route is not None
            turn = self._open(
                route,
                attempt.id,
                attempt.task_id,
                item.anchor,
                item.messages,
                attempt.created_at,
                ended=item.ended,  # its card's first show is the terminal one
            )
            self._log.info(
                "%s: turn %s of %s recovered (%s)",
                self._chat_name,
                attempt.id,
                route.key,
                attempt.status,
            )
            if item.ended is not None:
                turn.completed = True
                turn.status = item.ended.status
        self._hooks.recovered(plan)

    def _unsettled(self, since: float) -> list[tuple[TurnAttempt, str | None]]:
        db = open_reader(self.context.db_path)
        try:
            return unsettled_chat_turns(db, self._route_prefix, self._card_suffix, since=since)
        finally:
            db.close()

    def logged(self, value: object, /) -> None:
        """The ack of a write nobody waits for: a failure is logged (the writer's thread)."""
        if isinstance(value, BaseException):
            self._log.error(
                "%s: a store write failed: %s: %s", self._chat_name, type(value).__name__, value
            )
