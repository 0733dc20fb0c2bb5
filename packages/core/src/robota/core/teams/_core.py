"""The team door's pure core: ``step(setup, state, event, facts) -> (state, effects)``.

Everything a team's door decides, with no I/O, no clock and no threads: the door's state
(``DoorState``, immutable), one event (a group message, a decision of the team's registry,
a turn's end, the operator's turns, the transport attaching or leaving, the pause switch
stored, the team's last task read, the restart's rows), and the facts of the moment
(``Facts``: the time, the agent's reported version) in; the new state and what to do out,
in order (``CoreEffect``):

* ``Say``        a ``DoorEffect`` for the transport (only while one is attached: until then
  the effect waits in ``DoorState.backlog``, at most ``BACKLOG_LIMIT``, and ``Dropped`` says
  which went past it);
* ``Write``      a store write (a request's text, its start, its drop, the audit, a held count);
* ``Tell``       a message to the team's registry (``Submit``, ``Complete``, a confirmation
  asked or answered), which the team actor handles at once;
* ``InterruptTurn`` a timed-out request's turn is interrupted on its route;
* ``RefreshLast``  read the team's last task again (a request's turn ended);
* ``Dropped``    a backlog effect dropped (logged).

The team actor (``_actor``) owns the state: one mailbox, no locks; it carries the effects
out. ``robota.core.teams``'s door docstring says what the decisions mean; tests/teams
holds the tables.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ..agents import PERMISSION_MODES
from ..config import TeamConfig
from ..engine import TaskSettings
from ..policy import (
    Answer,
    Cancelled,
    Command,
    Complete,
    Confirm,
    Confirmed,
    Ended,
    Expired,
    FollowUp,
    Ignore,
    Pending,
    Queued,
    Rejected,
    Report,
    Request,
    Run,
    SchedulerState,
    Started,
    Submit,
    Withdrawn,
    confirmed,
    context_percent,
    inbound,
    offline_note,
    online_note,
    placeholder_due,
    queue_text,
    queued_reply,
    reply,
    status_text,
    team_instructions,
    team_locale,
    waits_for_operator,
)
from ..store import (
    AppendTeamAudit,
    CountHeldTeamMessage,
    DropTeamRequest,
    SaveTeamRequest,
    StartTeamRequest,
    TeamLastTask,
    TeamRequestRow,
)
from ._values import (
    AnswerConfirmation,
    AskConfirmation,
    DoorEffect,
    FollowUpInput,
    GroupNote,
    StartRequest,
    TeamEffect,
    TeamMessage,
    ThreadReply,
)

__all__ = [
    "BACKLOG_LIMIT",
    "OPERATOR",
    "OPERATOR_PREFIX",
    "Attach",
    "Decided",
    "CoreEffect",
    "Detach",
    "DoorEvent",
    "DoorSetup",
    "DoorState",
    "Dropped",
    "Facts",
    "Incoming",
    "InterruptTurn",
    "Learned",
    "OperatorTurns",
    "PauseStored",
    "RefreshLast",
    "Restore",
    "ResumeStored",
    "Say",
    "SettleRecovered",
    "Tell",
    "TurnEnded",
    "Write",
    "offline_text",
    "recovered_routes",
    "split_request_id",
    "step",
]

BACKLOG_LIMIT = 1000
"""Effects kept while no transport is attached; past this the oldest are dropped (logged)."""
OPERATOR = "operator"
"""The sender and intent of the operator's own turns in the scheduler."""
OPERATOR_PREFIX = "operator:"
_ID_SEPARATOR = "#"
"""A request's id is its thread's route, this, and its message id (routes have no ``#``)."""


def split_request_id(request_id: str) -> tuple[str, str]:
    """``(route, message id)`` of a request's id."""
    route, _, anchor = request_id.rpartition(_ID_SEPARATOR)
    return route, anchor


# -- what the core knows ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class DoorSetup:
    """What does not change while the door serves."""

    team: TeamConfig
    agent: str | None = None
    """The agent named in the notes."""
    robota_version: str = "0+unknown"


@dataclass(frozen=True, slots=True)
class Facts:
    """The moment of one event, read by the shell as it steps."""

    now: float
    agent_version: str | None = None
    """The agent's protocol-reported version once it started (for the online note)."""


@dataclass(frozen=True, slots=True)
class DoorState:
    """A door's whole state. Immutable, so the actor may publish it for other threads to read
    (``TeamDoor.recovered_routes``, ``paused``) with no lock; containers are replaced, never
    changed."""

    paused: bool = False
    attached: bool = False
    """A transport is attached: effects are said, not kept in ``backlog``."""
    owner: str | None = None
    """The transport's owner (an admin of every team)."""
    prefix: str = "/"
    """The transport's intent prefix."""
    requests: Mapping[str, StartRequest] = field(default_factory=dict)
    """Request id -> what starts it (until it starts)."""
    running: Mapping[str, str] = field(default_factory=dict)
    """Route -> the running request's id."""
    tasks: frozenset[str] = frozenset()
    """Routes that have a task of this team (in this run)."""
    pending: Mapping[tuple[str, str], str] = field(default_factory=dict)
    """(thread route, sender) -> the message that asked for a confirmation."""
    operator: frozenset[str] = frozenset()
    """The operator's running turns the scheduler counts (attempt ids)."""
    backlog: tuple[DoorEffect, ...] = ()
    """Effects decided while no transport was attached, in order."""
    placeholder_at: float | None = None
    """When the group was last given the busy placeholder."""
    last: TeamLastTask = field(default_factory=TeamLastTask)
    """The model and usage of the team's last task, for the notes."""
    recovered: frozenset[str] = frozenset()
    """Requests restored running with a live turn (the engine's recovery continues it)."""


# -- events ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Restore:
    """The door binds after a start: the stored requests ``(row, began, live)`` beside the
    registry and confirmations the actor restored, the pause switch and the last task."""

    rows: tuple[tuple[TeamRequestRow, bool, bool], ...] = ()
    registry: SchedulerState = field(default_factory=SchedulerState)
    pending: tuple[Pending, ...] = ()
    paused: bool = False
    last: TeamLastTask = field(default_factory=TeamLastTask)


@dataclass(frozen=True, slots=True)
class Attach:
    owner: str | None
    prefix: str = "/"


@dataclass(frozen=True, slots=True)
class Detach:
    pass


@dataclass(frozen=True, slots=True)
class Incoming:
    """One claimed, fresh message of the group; ``registry`` as the actor holds it now
    (``/status`` and ``/queue`` show it)."""

    message: TeamMessage
    registry: SchedulerState = field(default_factory=SchedulerState)


@dataclass(frozen=True, slots=True)
class Decided:
    """A decision of the team's registry (scheduler or confirmations). Stepped as the registry
    decides, so what follows from it (a request's text, a start stored, a confirmation's
    answer submitted) is decided in order; the shell holds what reaches the transport (``Say``,
    ``InterruptTurn``) until the registry holding the decision is committed."""

    effect: TeamEffect


@dataclass(frozen=True, slots=True)
class TurnEnded:
    route: str


@dataclass(frozen=True, slots=True)
class OperatorTurns:
    """The operator's turns on the team's project now (attempt ids)."""

    running: frozenset[str]


@dataclass(frozen=True, slots=True)
class SettleRecovered:
    """Which recovered routes still have a live turn; the others are completed."""

    live: frozenset[str]


@dataclass(frozen=True, slots=True)
class PauseStored:
    pass


@dataclass(frozen=True, slots=True)
class ResumeStored:
    held: int
    """Messages that arrived while paused."""


@dataclass(frozen=True, slots=True)
class Learned:
    last: TeamLastTask


DoorEvent = (
    Restore
    | Attach
    | Detach
    | Incoming
    | Decided
    | TurnEnded
    | OperatorTurns
    | SettleRecovered
    | PauseStored
    | ResumeStored
    | Learned
)

# -- effects ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Say:
    effect: DoorEffect


@dataclass(frozen=True, slots=True)
class Write:
    op: Any
    """A store op (``robota.core.store``'s ``WriteOp``); its failure is logged."""


@dataclass(frozen=True, slots=True)
class Tell:
    message: Submit | Complete | AskConfirmation | AnswerConfirmation


@dataclass(frozen=True, slots=True)
class InterruptTurn:
    route: str


@dataclass(frozen=True, slots=True)
class RefreshLast:
    pass


@dataclass(frozen=True, slots=True)
class Dropped:
    kind: str
    """The dropped effect's type name (effects carry user text)."""


CoreEffect = Say | Write | Tell | InterruptTurn | RefreshLast | Dropped


# -- queries ---------------------------------------------------------------------------------


def recovered_routes(state: DoorState) -> list[str]:
    """The routes of the requests restored with a live turn that have not ended yet."""
    return sorted(split_request_id(request_id)[0] for request_id in state.recovered)


def offline_text(setup: DoorSetup, state: DoorState) -> str:
    return offline_note(team_locale(setup.team), context_percent=context_percent(state.last.usage))


def online_text(setup: DoorSetup, state: DoorState, facts: Facts) -> str:
    last = state.last
    return online_note(
        team_locale(setup.team),
        robota_version=setup.robota_version,
        agent=setup.agent,
        agent_version=facts.agent_version,
        model=last.model,
        context_percent=context_percent(last.usage),
    )


# -- the step --------------------------------------------------------------------------------


def step(
    setup: DoorSetup, state: DoorState, event: DoorEvent, facts: Facts
) -> tuple[DoorState, list[CoreEffect]]:
    """The door's one transition. ``state`` is never changed."""
    draft = _Draft(setup, state, facts)
    draft.handle(event)
    return draft.done()


class _Draft:
    """One step's working copy: containers are copied on their first change, so a step costs
    what it changes, and the input state stays as it was."""

    def __init__(self, setup: DoorSetup, state: DoorState, facts: Facts) -> None:
        self.setup, self.team, self.facts, self.now = setup, setup.team, facts, facts.now
        self.state = state
        self.changes: dict[str, Any] = {}
        self.effects: list[CoreEffect] = []

    def done(self) -> tuple[DoorState, list[CoreEffect]]:
        return self.current(), self.effects

    def current(self) -> DoorState:
        """The state as changed so far (the working copies frozen, left as they are)."""
        if not self.changes:
            return self.state
        frozen = {name: _frozen(value) for name, value in self.changes.items()}
        return replace(self.state, **frozen)

    # -- the state, copied on write ----------------------------------------------------------

    def get(self, name: str) -> Any:
        return self.changes[name] if name in self.changes else getattr(self.state, name)

    def set(self, name: str, value: Any) -> None:
        self.changes[name] = value

    def mutable(self, name: str) -> Any:
        """A private copy of a container field, made once per step."""
        if name not in self.changes:
            value = getattr(self.state, name)
            if isinstance(value, frozenset):
                self.changes[name] = set(value)
            elif isinstance(value, tuple):
                self.changes[name] = list(value)
            else:
                self.changes[name] = dict(value)
        return self.changes[name]

    # -- effects -----------------------------------------------------------------------------

    def say(self, effect: DoorEffect) -> None:
        if self.get("attached"):
            self.effects.append(Say(effect))
            return
        backlog: list[DoorEffect] = self.mutable("backlog")
        backlog.append(effect)
        if len(backlog) > BACKLOG_LIMIT:
            self.effects.append(Dropped(type(backlog.pop(0)).__name__))

    def write(self, op: object) -> None:
        self.effects.append(Write(op))

    def tell(self, message: Submit | Complete | AskConfirmation | AnswerConfirmation) -> None:
        self.effects.append(Tell(message))

    def online(self) -> str:
        return online_text(self.setup, self.current(), self.facts)

    def offline(self) -> str:
        return offline_text(self.setup, self.current())

    # -- events ------------------------------------------------------------------------------

    def handle(self, event: DoorEvent) -> None:
        if isinstance(event, Incoming):
            self.incoming(event.message, event.registry)
        elif isinstance(event, Decided):
            self.decided(event.effect)
        elif isinstance(event, TurnEnded):
            self.turn_ended(event.route)
        elif isinstance(event, OperatorTurns):
            self.operator_turns(event.running)
        elif isinstance(event, SettleRecovered):
            for route in recovered_routes(self.current()):
                if route not in event.live:
                    self.turn_ended(route)
        elif isinstance(event, Attach):
            self.attach(event)
        elif isinstance(event, Detach):
            self.set("attached", False)
        elif isinstance(event, PauseStored):
            was = self.get("paused")
            self.set("paused", True)
            if not was:
                self.say(GroupNote(self.offline()))
        elif isinstance(event, ResumeStored):
            was = self.get("paused")
            self.set("paused", False)
            if was:
                self.say(GroupNote(self.online()))
                if event.held:
                    locale = team_locale(self.team)
                    self.say(GroupNote(reply(locale, "paused_summary", count=event.held)))
        elif isinstance(event, Learned):
            self.set("last", event.last)
        else:
            self.restore(event)

    def attach(self, event: Attach) -> None:
        self.set("attached", True)
        self.set("owner", event.owner)
        self.set("prefix", event.prefix)
        backlog = self.get("backlog")
        self.set("backlog", ())
        if not self.get("paused"):
            self.say(GroupNote(self.online()))
        for effect in backlog:
            self.say(effect)

    def restore(self, event: Restore) -> None:
        """The stored requests back in the door (the door's docstring, Restarts)."""
        self.set("paused", event.paused)
        self.set("last", event.last)
        pending = self.mutable("pending")
        for each in event.pending:
            pending[(each.thread, each.sender)] = ""
        running = self.mutable("running")
        operator = self.mutable("operator")
        for entry in event.registry.running:
            request_id = entry.request.id
            if request_id.startswith(OPERATOR_PREFIX):
                operator.add(request_id.removeprefix(OPERATOR_PREFIX))
            else:  # a recovered turn's end completes it (``TurnEnded``)
                running[split_request_id(request_id)[0]] = request_id
        running_ids = {entry.request.id for entry in event.registry.running}
        queued_ids = {waiting.request.id for waiting in event.registry.queue}
        ended: list[str] = []
        requests, tasks = self.mutable("requests"), self.mutable("tasks")
        recovered = self.mutable("recovered")
        for row, began, live in event.rows:
            settings = self.settings(row.permission_mode, row.title)
            start = StartRequest(row.route, row.anchor, row.text, settings, row.new_task)
            tasks.add(row.route)
            if row.id in queued_ids:
                requests[row.id] = start
            elif row.id in running_ids and not began:  # handed over, never begun: again
                self.say(start)
            elif row.id in running_ids and live:  # its continued turn ends it
                recovered.add(row.id)
            elif row.id in running_ids:  # it ended while the host was down
                running.pop(row.route, None)
                ended.append(row.id)
            else:  # the registry never took it: nobody was told
                self.write(DropTeamRequest(row.id))
        for request_id in ended:
            self.tell(Complete(request_id, self.now))

    def operator_turns(self, now_running: frozenset[str]) -> None:
        """Each operator's turn holds a slot with ``read:<project>`` (the door's docstring)."""
        before: frozenset[str] = self.get("operator")
        started, ended = sorted(now_running - before), sorted(before - now_running)
        if not started and not ended:
            return
        self.set("operator", frozenset(now_running))
        tags = (f"read:{self.team.project}",)
        for attempt in started:
            request = Request(f"{OPERATOR_PREFIX}{attempt}", OPERATOR, OPERATOR, tags)
            self.tell(Submit(request, self.now))
        for attempt in ended:
            self.tell(Complete(f"{OPERATOR_PREFIX}{attempt}", self.now))

    def turn_ended(self, route: str) -> None:
        recovered: frozenset[str] = self.get("recovered")
        mine = {r for r in recovered if split_request_id(r)[0] == route}
        if mine:
            self.set("recovered", recovered - mine)
        if route not in self.get("running"):
            return
        request_id = self.mutable("running").pop(route)
        self.tell(Complete(request_id, self.now))
        self.effects.append(RefreshLast())

    # -- a message of the group ----------------------------------------------------------

    def incoming(self, message: TeamMessage, registry: SchedulerState) -> None:
        if self.get("paused"):
            self.write(CountHeldTeamMessage(self.team.name))
            return
        key = (message.route, message.sender)
        if message.in_thread and key in self.get("pending"):
            # The sender's next message in the thread answers the question (the registry
            # decides: confirm, cancel, or expired, which then goes on as an ordinary message).
            self.mutable("pending")[key] = message.message_id
            answer = AnswerConfirmation(message.route, message.sender, message.text, self.now)
            self.tell(answer)
            return
        self.ordinary(message, registry)

    def ordinary(self, message: TeamMessage, registry: SchedulerState) -> None:
        team = self.team
        outcome = inbound(
            team,
            sender=message.sender,
            text=message.text,
            chat=message.chat,
            in_thread=message.in_thread,
            owner=self.get("owner"),
            prefix=self.get("prefix"),
        )
        if isinstance(outcome, Ignore):
            return
        check = outcome.check
        self.write(
            AppendTeamAudit(team.name, message.sender, check.intent, check.level, check.decision)
        )
        route, anchor = message.route, message.message_id
        if isinstance(outcome, Answer):
            self.say(ThreadReply(route, anchor, outcome.text))
        elif isinstance(outcome, Confirm):
            self.mutable("pending")[(route, message.sender)] = anchor
            pending = Pending(route, message.sender, check.intent, outcome.args, self.now)
            self.tell(AskConfirmation(pending))
            self.say(ThreadReply(route, anchor, outcome.text))
        elif isinstance(outcome, Report):
            if outcome.name == "queue":
                text = queue_text(team, registry)
            else:
                paused = self.get("paused")
                text = status_text(team, registry, note=self.online(), paused=paused)
            self.say(ThreadReply(route, anchor, text))
        elif isinstance(outcome, Command):
            text = f"/{outcome.name} {outcome.args}".strip()
            self.say(FollowUpInput(route, anchor, text))
        elif isinstance(outcome, FollowUp):
            if outcome.ack is not None:
                self.say(ThreadReply(route, anchor, outcome.ack))
            self.say(FollowUpInput(route, anchor, outcome.text))
        else:
            self.submit(outcome, message.sender, route, anchor)

    def settings(self, permission_mode: str | None, title: str | None) -> TaskSettings:
        mode = next((m for m in PERMISSION_MODES if m == permission_mode), None)
        return TaskSettings(
            cwd=Path(self.team.project),
            permission_mode=mode,
            developer_instructions=team_instructions(self.team),
            title=title,
        )

    def submit(self, run: Run, sender: str, route: str, anchor: str) -> None:
        title = f"{self.team.name}: {run.prompt[:60]}"
        settings = self.settings(run.permission_mode, title)
        request_id = f"{route}{_ID_SEPARATOR}{anchor}"
        new_task = route not in self.get("tasks")
        if new_task:
            self.mutable("tasks").add(route)
        start = StartRequest(route, anchor, run.prompt, settings, new_task)
        self.mutable("requests")[request_id] = start
        # Stored before the registry that names it (one writer, in order): a restart finds it.
        self.write(
            SaveTeamRequest(
                self.team.name,
                request_id,
                route,
                anchor,
                run.prompt,
                run.permission_mode,
                title,
                new_task,
            )
        )
        self.tell(Submit(Request(request_id, sender, run.check.intent, run.tags), self.now))

    # -- the registry's decisions --------------------------------------------------------

    def decided(self, effect: TeamEffect) -> None:
        locale = team_locale(self.team)
        if isinstance(effect, Started | Queued) and effect.request.sender == OPERATOR:
            return  # the operator's turn runs already; it only holds its slot
        if isinstance(effect, Started):
            request_id = effect.request.id
            if request_id not in self.get("requests"):  # its text was lost with the last run
                self.tell(Complete(request_id, self.now))
                return
            start = self.mutable("requests").pop(request_id)
            self.mutable("running")[start.route] = request_id
            self.write(StartTeamRequest(self.team.name, request_id))
            self.say(start)
        elif isinstance(effect, Queued):
            queued = self.get("requests").get(effect.request.id)
            if queued is not None:
                text = queued_reply(locale, effect, operator_busy=self.busy(effect))
                self.say(ThreadReply(queued.route, queued.anchor, text))
        elif isinstance(effect, Rejected):
            self.write(DropTeamRequest(effect.request.id))
            if effect.request.id in self.get("requests"):
                start = self.mutable("requests").pop(effect.request.id)
                self.say(ThreadReply(start.route, start.anchor, reply(locale, "queue_full")))
        elif isinstance(effect, Withdrawn):
            self.write(DropTeamRequest(effect.request_id))
            if effect.request_id in self.get("requests"):
                self.mutable("requests").pop(effect.request_id)
        elif isinstance(effect, Ended):
            self.ended(effect)
        else:
            self.answered(effect)

    def ended(self, effect: Ended) -> None:
        if effect.request_id.startswith(OPERATOR_PREFIX):
            return  # the operator's own turn is the operator's to stop
        self.write(DropTeamRequest(effect.request_id))
        if not effect.timed_out:
            return
        route, anchor = split_request_id(effect.request_id)
        if self.get("running").get(route) == effect.request_id:
            self.mutable("running").pop(route)
        self.effects.append(InterruptTurn(route))
        text = reply(team_locale(self.team), "timed_out", minutes=self.team.max_turn_minutes)
        self.say(ThreadReply(route, anchor, text))

    def answered(self, effect: Confirmed | Cancelled | Expired) -> None:
        """A confirmation's end: ``Confirmed``, ``Cancelled`` or ``Expired``."""
        pending: Pending = effect.pending
        key = (pending.thread, pending.sender)
        asked = self.mutable("pending").pop(key, "") if key in self.get("pending") else ""
        anchor = asked or pending.thread
        if isinstance(effect, Confirmed):
            self.confirmed(pending, anchor)
            return
        key_text = "confirm_cancelled" if isinstance(effect, Cancelled) else "confirm_expired"
        text = reply(team_locale(self.team), key_text, intent=pending.intent, minutes=15)
        self.say(ThreadReply(pending.thread, anchor, text))

    def confirmed(self, pending: Pending, anchor: str) -> None:
        outcome = confirmed(self.team, pending, chat=self.team.chat, owner=self.get("owner"))
        if isinstance(outcome, Ignore):
            return
        if isinstance(outcome, Answer):
            self.say(ThreadReply(pending.thread, anchor, outcome.text))
            return
        check = outcome.check
        self.write(
            AppendTeamAudit(self.team.name, pending.sender, check.intent, check.level, "confirmed")
        )
        self.submit(outcome, pending.sender, pending.thread, anchor)

    def busy(self, queued: Queued) -> bool:
        """Whether ``queued`` gets the busy placeholder (at most one per five minutes)."""
        operator = [(f"read:{self.team.project}",)] if self.get("operator") else []
        if not waits_for_operator(queued.reason, queued.request.tags, operator):
            return False
        if not placeholder_due(self.get("placeholder_at"), self.now):
            return False
        self.set("placeholder_at", self.now)
        return True


def _frozen(value: Any) -> Any:
    """A working copy as the state keeps it (sets frozen, lists as tuples, dicts copied)."""
    if isinstance(value, set):
        return frozenset(value)
    if isinstance(value, list):
        return tuple(value)
    if isinstance(value, dict):
        return dict(value)
    return value
