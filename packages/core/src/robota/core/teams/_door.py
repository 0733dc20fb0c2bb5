"""``TeamDoor``: a team group's messages in, the effects a chat transport performs out.

The one typed interface between a chat transport and a team (``teams.<name>``): the transport
parses its platform's event into a ``TeamMessage`` (the chat, the sender, the text with the
bot's mention removed, the message id, and ``route``: the route of the request thread the
message belongs to, or would open) and calls ``handle``; the door decides with
``robota.core.policy`` and the ``TeamActor`` (scheduler and confirmations, persisted) and
answers with ``DoorEffect``s through the transport's ``TeamReplies``:

* ``ThreadReply``   a fixed, localised text in the request's thread (a refusal, a question,
  a queue position, ``/help``, ``/status``);
* ``StartRequest``  the request runs: a new task on the thread's route (the team's project,
  its developer instructions, ``memberPermissionMode`` for members) and its prompt; the
  transport reacts, tells the route and shows the turn as for any chat message;
* ``FollowUpInput`` text to the thread's task (a follow-up, an engine command);
* ``GroupNote``     a note to the group itself (online, offline, the pause summary).

The transport tells the door when a thread's turn ends (``turn_ended``: the scheduler's
``Complete``, which promotes what waits) and asks it who may answer an approval in a team
thread (``may_approve``: admins only). The host holds the doors (one per team, built from the
config with its actor) and hands each to its transport; ``pause``/``resume`` come from the
operator (``robota team pause|resume`` through the control endpoint): while paused a message is
counted in the store and gets nothing, and resuming tells the group how many arrived.

No platform knowledge: routes are opaque strings the transport made. Thread-safe: ``handle``
runs on the transport's loop, the actor's effects arrive on the store writer's thread; both
only take the lock briefly and hand effects to ``TeamReplies.perform`` (which must not block).
Effects decided while no transport is attached (a restart's promotions before the transport is
up) wait in the door and are performed when it attaches.

Restarts: what starts each request (its prompt, permission mode, title) is stored
(``SaveTeamRequest``, before the scheduler hears of it) until it ends, so ``bind`` after a
restart, even a SIGKILL, takes the queue back with its texts, in order: a queued request starts
when the registry promotes it, a started request whose route never began a turn starts again,
one that ended while the host was down is completed (which promotes), and one whose turn the
engine's recovery continues ends with that turn (``turn_ended``). Each runs once.

Notes: the online and offline notes carry the model and the context bar of the team's last
task (``LoadTeamLastTask``, refreshed when a request's turn ends). A teammate's request that
waits behind the operator's own turn gets the busy placeholder as its queued reply, at most one
per five minutes per group (``robota.core.policy``'s ``_busy``).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Awaitable, Callable, Collection, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from .._dists import robota_version
from ..agents import PERMISSION_MODES
from ..config import TeamConfig
from ..engine import FrontEndRequest, Interrupt, NewTask, TaskSettings, UserInput
from ..policy import (
    Answer,
    Cancelled,
    Command,
    Complete,
    Confirm,
    Confirmed,
    Ended,
    FollowUp,
    Ignore,
    Pending,
    Queued,
    Rejected,
    Report,
    Request,
    Run,
    Started,
    Submit,
    Sweep,
    Withdrawn,
    confirmations_from_json,
    confirmed,
    context_percent,
    inbound,
    offline_note,
    online_note,
    placeholder_due,
    queue_text,
    queued_reply,
    reply,
    role_of,
    scheduler_from_json,
    status_text,
    team_instructions,
    team_locale,
    waits_for_operator,
)
from ..store import (
    AppendTeamAudit,
    CountHeldTeamMessage,
    DropTeamRequest,
    LoadTeamLastTask,
    LoadTeamRequests,
    LoadTeamRow,
    SaveTeamRequest,
    SetTeamPaused,
    StartTeamRequest,
    StoreClient,
    TeamLastTask,
    TeamRequestRow,
)
from ._actor import (
    AnswerConfirmation,
    AskConfirmation,
    SweepConfirmations,
    TeamEffect,
    TeamSnapshot,
)

if TYPE_CHECKING:
    import trio

    from ..kernel import LoopPort

__all__ = [
    "DoorEffect",
    "LoopReplies",
    "FollowUpInput",
    "GroupNote",
    "StartRequest",
    "TeamDoor",
    "TeamMessage",
    "TeamReplies",
    "ThreadReply",
    "say_offline",
]

logger = logging.getLogger("robota.core.teams")

STORE_TIMEOUT = 10.0
BACKLOG_LIMIT = 1000
"""Effects kept while no transport is attached; past this the oldest are dropped (logged)."""
OPERATOR = "operator"
"""The sender and intent of the operator's own turns in the scheduler."""
OPERATOR_PREFIX = "operator:"
_ID_SEPARATOR = "#"
"""A request's id is its thread's route, this, and its message id (routes have no ``#``)."""


def _split(request_id: str) -> tuple[str, str]:
    """``(route, message id)`` of a request's id."""
    route, _, anchor = request_id.rpartition(_ID_SEPARATOR)
    return route, anchor


@dataclass(frozen=True, slots=True)
class TeamMessage:
    chat: str
    sender: str
    text: str
    """The bot's mention removed."""
    message_id: str
    route: str
    """The route of the request thread: the message's own (a new request) or its thread's."""
    in_thread: bool
    """The message is inside a request's thread (a follow-up), not a new request."""


@dataclass(frozen=True, slots=True)
class ThreadReply:
    route: str
    anchor: str
    """The message replied to (in its thread)."""
    text: str


@dataclass(frozen=True, slots=True)
class StartRequest:
    route: str
    anchor: str
    text: str
    """The request's prompt."""
    settings: TaskSettings
    new_task: bool
    """Start the route on a new task first (its first request); else the thread's task."""

    def requests(self) -> list[FrontEndRequest]:
        """What the transport tells the route, in order."""
        opening = [NewTask(self.settings, announce=False)] if self.new_task else []
        return [*opening, UserInput(self.text, message_id=self.anchor)]


@dataclass(frozen=True, slots=True)
class FollowUpInput:
    route: str
    anchor: str
    text: str

    def requests(self) -> list[FrontEndRequest]:
        return [UserInput(self.text, message_id=self.anchor)]


@dataclass(frozen=True, slots=True)
class GroupNote:
    text: str


DoorEffect = ThreadReply | StartRequest | FollowUpInput | GroupNote


@runtime_checkable
class TeamReplies(Protocol):
    """What a transport gives its team door: ``perform`` one effect (any thread, quick)."""

    def perform(self, effect: DoorEffect) -> None: ...


class LoopReplies:
    """``TeamReplies`` for a transport on a trio loop: each effect is posted to the loop;
    there a task's input goes to ``inputs`` and a text to the coroutine ``say``, started in
    ``nursery``. ``offline`` detaches from the door and says its offline note (awaited: the
    transport bounds it on its way down)."""

    def __init__(
        self,
        door: TeamDoor,
        port: LoopPort,
        nursery: trio.Nursery,
        *,
        inputs: Callable[[StartRequest | FollowUpInput], None],
        say: Callable[[ThreadReply | GroupNote], Awaitable[None]],
    ) -> None:
        self.door = door
        self._port = port
        self._nursery = nursery
        self._inputs = inputs
        self._say = say

    def perform(self, effect: DoorEffect) -> None:  # any thread
        self._port.post(self._on_loop, effect)

    def _on_loop(self, effect: DoorEffect) -> None:
        if isinstance(effect, StartRequest | FollowUpInput):
            self._inputs(effect)
        else:
            self._nursery.start_soon(self._say, effect)

    async def offline(self) -> None:
        text = self.door.detach()
        if text is not None:
            await self._say(GroupNote(text))

    @classmethod
    def attach_all(
        cls,
        doors: Iterable[TeamDoor],
        port: LoopPort,
        nursery: trio.Nursery,
        *,
        inputs: Callable[[StartRequest | FollowUpInput], None],
        say: Callable[[TeamDoor], Callable[[ThreadReply | GroupNote], Awaitable[None]]],
        owner: str | None,
        prefix: str = "/",
    ) -> list[LoopReplies]:
        """Attach a transport to each of its doors (``say(door)``: that team's texts)."""
        attached = []
        for door in doors:
            replies = cls(door, port, nursery, inputs=inputs, say=say(door))
            door.attach(replies, owner=owner, prefix=prefix)
            attached.append(replies)
        return attached


async def say_offline(attached: Iterable[LoopReplies], timeout: float) -> None:
    """Each team's offline note, on a transport's way down: shielded from its cancellation
    and bounded by ``timeout`` seconds."""
    import trio  # noqa: PLC0415 (the door itself needs no loop)

    with trio.move_on_after(timeout) as scope:
        scope.shield = True
        for replies in attached:
            await replies.offline()


class RouteTeller(Protocol):
    """What a door needs of the front-end port (``robota.core.frontend.FrontEndPort`` is one):
    telling a route a request. Named here, not imported, because the front end is the layer
    above the teams (its ``TransportContext`` carries the doors)."""

    def tell(self, route_key: str, request: FrontEndRequest) -> None: ...


class TeamDoor:
    """See the module docstring. ``actor`` is the team's ``TeamActor`` (a ref with ``tell``);
    it must deliver its effects to ``deliver``."""

    def __init__(
        self,
        team: TeamConfig,
        store: StoreClient,
        *,
        agent: str | None = None,
        port: RouteTeller | None = None,
        clock: Callable[[], float] = time.time,
        agent_versions: Callable[[str], str | None] | None = None,
    ) -> None:
        self.team = team
        self._agent_versions = agent_versions
        """An agent's protocol-reported version once it started (the host's taps), for the
        notes."""
        self._port = port
        """Where a timed-out request's turn is interrupted."""
        self._store = store
        self._agent = agent
        self._clock = clock
        self._lock = threading.RLock()
        self._actor: Any = None
        self._replies: TeamReplies | None = None
        self._owner: str | None = None
        self._prefix = "/"
        self.paused = False
        self._requests: dict[str, StartRequest] = {}
        """Request id -> what starts it (until it starts)."""
        self._running: dict[str, str] = {}
        """Route -> the running request's id."""
        self._tasks: set[str] = set()
        """Routes that have a task of this team (in this run)."""
        self._pending: dict[tuple[str, str], str] = {}
        """(thread route, sender) -> the message that asked for a confirmation."""
        self._operator: set[str] = set()
        """The operator's running turns the scheduler counts (attempt ids)."""
        self._backlog: list[DoorEffect] = []
        """Effects decided while no transport was attached, in order."""
        self._placeholder_at: float | None = None
        """When the group was last given the busy placeholder."""
        self._last = TeamLastTask()
        """The model and usage of the team's last task, for the notes."""
        self._recovered: set[str] = set()
        """Requests restored running with a live turn (the engine's recovery continues it)."""

    # -- the host's side ---------------------------------------------------------------------

    def bind(self, actor: Any) -> None:
        """The team's actor, started with ``deliver``; the pause switch, the pending
        confirmations and what runs read from the store (the actor restores the same)."""
        self._actor = actor
        name = self.team.name
        row = self._store.write_sync(LoadTeamRow(name), timeout=STORE_TIMEOUT)
        self._last = self._store.write_sync(LoadTeamLastTask(name), timeout=STORE_TIMEOUT)
        self.paused = bool(row is not None and row.paused)
        if row is None:
            return
        for pending in confirmations_from_json(row.confirmations_json):
            self._pending[(pending.thread, pending.sender)] = ""
        registry = scheduler_from_json(row.scheduler_json)
        for running in registry.running:
            request_id = running.request.id
            if request_id.startswith(OPERATOR_PREFIX):
                self._operator.add(request_id.removeprefix(OPERATOR_PREFIX))
            else:  # a recovered turn's end completes it (``turn_ended``)
                self._running[_split(request_id)[0]] = request_id
        self._restore(
            self._store.write_sync(LoadTeamRequests(name), timeout=STORE_TIMEOUT),
            running={r.request.id for r in registry.running},
            queued={w.request.id for w in registry.queue},
        )

    def _restore(
        self,
        rows: list[tuple[TeamRequestRow, bool, bool]],
        *,
        running: set[str],
        queued: set[str],
    ) -> None:
        """The stored requests back in the door (see the module docstring, Restarts)."""
        ended: list[str] = []
        with self._lock:
            for row, began, live in rows:
                settings = self._settings(row.permission_mode, row.title)
                start = StartRequest(row.route, row.anchor, row.text, settings, row.new_task)
                self._tasks.add(row.route)
                if row.id in queued:
                    self._requests[row.id] = start
                elif row.id in running and not began:  # handed over, never begun: again
                    self._backlog.append(start)
                elif row.id in running and live:  # its continued turn ends it
                    self._recovered.add(row.id)
                elif row.id in running:  # it ended while the host was down
                    self._running.pop(row.route, None)
                    ended.append(row.id)
                elif row.id not in running:  # the registry never took it: nobody was told
                    self._store.submit(DropTeamRequest(row.id), _logged)
        now = self._clock()
        for request_id in ended:
            self._actor.tell(Complete(request_id, now))

    def operator_turns(self, running: Collection[str]) -> None:
        """The turns the operator runs now on the team's project (attempt ids, from the
        terminal or ``robota task send``): each occupies a slot, so teammates' writes wait and
        reads go on. Its tag is ``read:<project>``: by the scheduler's rule a read conflicts
        with every write of the project and with no read, which is that behaviour exactly (a
        ``write:`` tag would hold the teammates' reads as well)."""
        now = self._clock()
        with self._lock:
            started = sorted(set(running) - self._operator)
            ended = sorted(self._operator - set(running))
            self._operator = set(running)
        if self._actor is None:
            return
        tags = (f"read:{self.team.project}",)
        for attempt in started:
            request = Request(f"{OPERATOR_PREFIX}{attempt}", OPERATOR, OPERATOR, tags)
            self._actor.tell(Submit(request, now))
        for attempt in ended:
            self._actor.tell(Complete(f"{OPERATOR_PREFIX}{attempt}", now))

    def deliver(self, effect: TeamEffect) -> None:
        """The actor's effects (the store writer's thread, after the commit)."""
        with self._lock:
            out = self._decided(effect)
        for each in out:
            self._perform(each)

    def pause(self) -> None:
        self._store.write_sync(SetTeamPaused(self.team.name, True), timeout=STORE_TIMEOUT)
        with self._lock:
            was, self.paused = self.paused, True
        if not was:
            self._perform(GroupNote(self._offline()))

    def resume(self) -> int:
        """Resume; how many messages arrived while paused (the group is told)."""
        held = self._store.write_sync(SetTeamPaused(self.team.name, False), timeout=STORE_TIMEOUT)
        with self._lock:
            was, self.paused = self.paused, False
        if was:
            locale = team_locale(self.team)
            self._perform(GroupNote(self._online()))
            if held:
                self._perform(GroupNote(reply(locale, "paused_summary", count=held)))
        return int(held)

    def sweep(self) -> None:
        """The timers: requests past ``maxTurnMinutes``, confirmations past 15 minutes."""
        if self._actor is not None:
            now = self._clock()
            self._actor.tell(Sweep(now))
            self._actor.tell(SweepConfirmations(now))

    def stop(self) -> None:
        if self._actor is not None:
            self._actor.stop(timeout=10)

    # -- the transport's side ----------------------------------------------------------------

    def attach(self, replies: TeamReplies | None, *, owner: str | None, prefix: str = "/") -> None:
        """The transport's replies (``None``: it stopped); says online when it attaches."""
        with self._lock:
            self._replies, self._owner, self._prefix = replies, owner, prefix
        if replies is None:
            return
        if not self.paused:
            self._perform(GroupNote(self._online()))
        with self._lock:
            backlog, self._backlog = self._backlog, []
        for effect in backlog:
            self._perform(effect)

    def detach(self) -> str | None:
        """The transport stops: no more effects; the offline note it posts on its way out
        (``None`` while paused: the group was told at the pause)."""
        with self._lock:
            self._replies = None
        return None if self.paused else self._offline()

    def refusal(self, key: str) -> str:
        """A fixed reply in the team's locale (``approval_admins_only`` for a member's click)."""
        return reply(team_locale(self.team), key)

    def may_approve(self, sender: str) -> bool:
        """Approvals in a team thread are answered by admins only."""
        return role_of(sender, self.team, self._owner) == "admin"

    def handles(self, route: str) -> bool:
        with self._lock:
            return route in self._tasks

    def recovered_routes(self) -> list[str]:
        """The routes of the requests restored with a live turn that have not ended yet."""
        with self._lock:
            return sorted(_split(request_id)[0] for request_id in self._recovered)

    def settle_recovered(self, live: Collection[str]) -> None:
        """The host read which of ``recovered_routes`` still have a live turn: the others
        ended, perhaps before the transport listened to them, and are completed."""
        for route in self.recovered_routes():
            if route not in live:
                self.turn_ended(route)

    def turn_ended(self, route: str) -> None:
        with self._lock:
            self._recovered = {r for r in self._recovered if _split(r)[0] != route}
            request_id = self._running.pop(route, None)
        if request_id is not None and self._actor is not None:
            self._actor.tell(Complete(request_id, self._clock()))
            self._store.submit(LoadTeamLastTask(self.team.name), self._learned)

    def _learned(self, last: object) -> None:  # the writer's thread
        if isinstance(last, TeamLastTask):
            self._last = last

    def handle(self, message: TeamMessage) -> None:
        """One claimed, fresh message of the team's group (the transport's loop)."""
        if self.paused:
            self._store.submit(CountHeldTeamMessage(self.team.name), _logged)
            return
        now = self._clock()
        key = (message.route, message.sender)
        with self._lock:
            asked = key in self._pending if message.in_thread else False
            if asked:
                self._pending[key] = message.message_id
        if asked:
            # The sender's next message in the thread answers the question (the actor decides:
            # confirm, cancel, or expired, which then goes on as an ordinary message).
            self._actor.tell(AnswerConfirmation(message.route, message.sender, message.text, now))
            return
        self._ordinary(message, now)

    # -- deciding ---------------------------------------------------------------------------

    def _ordinary(self, message: TeamMessage, now: float) -> None:
        team = self.team
        outcome = inbound(
            team,
            sender=message.sender,
            text=message.text,
            chat=message.chat,
            in_thread=message.in_thread,
            owner=self._owner,
            prefix=self._prefix,
        )
        if isinstance(outcome, Ignore):
            return
        check = outcome.check
        self._store.submit(
            AppendTeamAudit(team.name, message.sender, check.intent, check.level, check.decision),
            _logged,
        )
        route, anchor = message.route, message.message_id
        if isinstance(outcome, Answer):
            self._perform(ThreadReply(route, anchor, outcome.text))
        elif isinstance(outcome, Confirm):
            with self._lock:
                self._pending[(route, message.sender)] = anchor
            pending = Pending(route, message.sender, check.intent, outcome.args, now)
            self._actor.tell(AskConfirmation(pending))
            self._perform(ThreadReply(route, anchor, outcome.text))
        elif isinstance(outcome, Report):
            self._report(outcome.name, route, anchor)
        elif isinstance(outcome, Command):
            text = f"/{outcome.name} {outcome.args}".strip()
            self._perform(FollowUpInput(route, anchor, text))
        elif isinstance(outcome, FollowUp):
            if outcome.ack is not None:
                self._perform(ThreadReply(route, anchor, outcome.ack))
            self._perform(FollowUpInput(route, anchor, outcome.text))
        else:
            self._submit(outcome, message.sender, route, anchor, now)

    def _settings(self, permission_mode: str | None, title: str | None) -> TaskSettings:
        mode = next((m for m in PERMISSION_MODES if m == permission_mode), None)
        return TaskSettings(
            cwd=Path(self.team.project),
            permission_mode=mode,
            developer_instructions=team_instructions(self.team),
            title=title,
        )

    def _submit(self, run: Run, sender: str, route: str, anchor: str, now: float) -> None:
        title = f"{self.team.name}: {run.prompt[:60]}"
        settings = self._settings(run.permission_mode, title)
        request_id = f"{route}{_ID_SEPARATOR}{anchor}"
        with self._lock:
            new_task = route not in self._tasks
            start = StartRequest(route, anchor, run.prompt, settings, new_task)
            self._tasks.add(route)
            self._requests[request_id] = start
        # Stored before the registry that names it (one writer, in order): a restart finds it.
        save = SaveTeamRequest(
            self.team.name,
            request_id,
            route,
            anchor,
            run.prompt,
            run.permission_mode,
            title,
            new_task,
        )
        self._store.submit(save, _logged)
        self._actor.tell(Submit(Request(request_id, sender, run.check.intent, run.tags), now))

    def _report(self, name: str, route: str, anchor: str) -> None:
        team, paused, online = self.team, self.paused, self._online()

        def answer(state: Any) -> None:  # the actor's thread
            if name == "queue":
                text = queue_text(team, state.scheduler)
            else:
                text = status_text(team, state.scheduler, note=online, paused=paused)
            self._perform(ThreadReply(route, anchor, text))

        self._actor.tell(TeamSnapshot(answer))

    def _decided(self, effect: TeamEffect) -> list[DoorEffect]:
        """What the actor decided, as the transport's effects (under the lock)."""
        locale = team_locale(self.team)
        if isinstance(effect, Started | Queued) and effect.request.sender == OPERATOR:
            return []  # the operator's turn runs already; it only holds its slot
        if isinstance(effect, Started):
            start = self._requests.pop(effect.request.id, None)
            if start is None:  # its text was lost with the last run: nothing to run
                self._actor.tell(Complete(effect.request.id, self._clock()))
                return []
            self._running[start.route] = effect.request.id
            self._store.submit(StartTeamRequest(self.team.name, effect.request.id), _logged)
            return [start]
        if isinstance(effect, Queued):
            start = self._requests.get(effect.request.id)
            if start is None:
                return []
            text = queued_reply(locale, effect, operator_busy=self._busy(effect))
            return [ThreadReply(start.route, start.anchor, text)]
        if isinstance(effect, Rejected):
            self._store.submit(DropTeamRequest(effect.request.id), _logged)
            start = self._requests.pop(effect.request.id, None)
            if start is None:
                return []
            return [ThreadReply(start.route, start.anchor, reply(locale, "queue_full"))]
        if isinstance(effect, Withdrawn):
            self._store.submit(DropTeamRequest(effect.request_id), _logged)
            self._requests.pop(effect.request_id, None)
            return []
        if isinstance(effect, Ended):
            if effect.request_id.startswith(OPERATOR_PREFIX):
                return []  # the operator's own turn is the operator's to stop
            self._store.submit(DropTeamRequest(effect.request_id), _logged)
            if not effect.timed_out:
                return []
            route, anchor = _split(effect.request_id)
            if self._running.get(route) == effect.request_id:
                del self._running[route]
            if self._port is not None:
                self._port.tell(route, Interrupt())
            text = reply(locale, "timed_out", minutes=self.team.max_turn_minutes)
            return [ThreadReply(route, anchor, text)]
        # a confirmation's end: Confirmed, Cancelled or Expired
        pending = effect.pending
        anchor = self._pending.pop((pending.thread, pending.sender), "") or pending.thread
        if isinstance(effect, Confirmed):
            return self._confirmed(pending, anchor)
        key = "confirm_cancelled" if isinstance(effect, Cancelled) else "confirm_expired"
        text = reply(locale, key, intent=pending.intent, minutes=15)
        return [ThreadReply(pending.thread, anchor, text)]

    def _confirmed(self, pending: Pending, anchor: str) -> list[DoorEffect]:
        outcome = confirmed(self.team, pending, chat=self.team.chat, owner=self._owner)
        if isinstance(outcome, Ignore):
            return []
        if isinstance(outcome, Answer):
            return [ThreadReply(pending.thread, anchor, outcome.text)]
        self._store.submit(
            AppendTeamAudit(
                self.team.name,
                pending.sender,
                outcome.check.intent,
                outcome.check.level,
                "confirmed",
            ),
            _logged,
        )
        self._submit(outcome, pending.sender, pending.thread, anchor, self._clock())
        return []

    def _busy(self, queued: Queued) -> bool:
        """Whether ``queued`` gets the busy placeholder (under the lock)."""
        operator = [(f"read:{self.team.project}",)] if self._operator else []
        if not waits_for_operator(queued.reason, queued.request.tags, operator):
            return False
        now = self._clock()
        if not placeholder_due(self._placeholder_at, now):
            return False
        self._placeholder_at = now
        return True

    def _online(self) -> str:
        last = self._last
        return online_note(
            team_locale(self.team),
            robota_version=robota_version(),
            agent=self._agent,
            agent_version=self._agent_version(),
            model=last.model,
            context_percent=context_percent(last.usage),
        )

    def _agent_version(self) -> str | None:
        if self._agent is None or self._agent_versions is None:
            return None
        return self._agent_versions(self._agent)

    def _offline(self) -> str:
        return offline_note(
            team_locale(self.team), context_percent=context_percent(self._last.usage)
        )

    def _perform(self, effect: DoorEffect) -> None:
        with self._lock:
            replies = self._replies
            if replies is None:  # performed when a transport attaches
                self._backlog.append(effect)
                if len(self._backlog) > BACKLOG_LIMIT:
                    dropped = self._backlog.pop(0)
                    logger.warning(
                        "team %s: no transport: %s dropped", self.team.name, type(dropped).__name__
                    )
                return
        try:
            replies.perform(effect)
        except Exception:
            logger.exception("team %s: an effect could not be performed", self.team.name)


def _logged(value: object, /) -> None:
    if isinstance(value, BaseException):
        logger.error("team: a store write failed: %s: %s", type(value).__name__, value)
