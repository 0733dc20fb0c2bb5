"""``TeamActor``: one team's scheduler and pending confirmations, persisted before they act.

A thin shell around ``robota.core.policy``'s state machines. Each message that changes the
registry is decided at once, the new registry is written (``SaveTeamState``, its version one
more than the last), and the effects are delivered only from that write's acknowledgement, after
the commit: nobody is told a request started or queued that a crash could then forget. The
writer acknowledges in commit order, so deliveries keep the order the messages were decided in.
A failed save crashes the incarnation (its memory is ahead of the store); the next one restores
what was committed (``LoadTeamRow``, read through the writer so nothing queued before is missed)
and the effects of the lost decision were never delivered.

``deliver`` is called on the store writer's thread: it must be quick and must not block (tell an
actor, post to the loop). Timers are the owner's: it sends ``Sweep`` (requests past
``maxTurnMinutes``) and ``SweepConfirmations`` (past 15 minutes) on its own clock. A restored
registry keeps its running requests: the host reports each one's end with ``Complete`` when its
recovered turn ends, and the sweep ends any it never reports.

The actor also owns its door's state (``_core.DoorState``, once the door binds with
``BindDoor``): the door's events (a group message, a decision delivered after its commit, a
turn's end, the operator's turns, the transport attaching) arrive in this one mailbox, the
pure core (``_core.step``) decides, and the actor carries the effects out: a text or a start
to the transport's ``TeamReplies``, a store write, a registry message handled at once (so a
request is saved before the registry that names it), a turn interrupted. No locks: other
threads read the state the actor publishes after each step (immutable). The pause switch
(``SwitchPause``) is stored first and decided from the write's answer, in order with the held
messages' counts.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pykka

from ..config import TeamConfig
from ..kernel import Actor
from ..policy import (
    Complete,
    Confirmations,
    Pending,
    Scheduler,
    SchedulerState,
    Submit,
    Sweep,
    confirmations_from_json,
    confirmations_to_json,
    scheduler_from_json,
    scheduler_to_json,
)
from ..store import (
    LoadTeamLastTask,
    LoadTeamRow,
    SaveTeamState,
    SetTeamPaused,
    StoreClient,
    TeamLastTask,
    TeamRequestRow,
)
from ._core import (
    Attach,
    CoreEffect,
    Decided,
    Detach,
    DoorEvent,
    DoorSetup,
    DoorState,
    Dropped,
    Facts,
    Incoming,
    InterruptTurn,
    Learned,
    OperatorTurns,
    PauseStored,
    RefreshLast,
    Restore,
    ResumeStored,
    Say,
    SettleRecovered,
    Tell,
    TurnEnded,
    Write,
    step,
)
from ._values import (
    AnswerConfirmation,
    AskConfirmation,
    SweepConfirmations,
    TeamEffect,
    TeamReplies,
)

__all__ = [
    "AnswerConfirmation",
    "AskConfirmation",
    "AttachDoor",
    "BindDoor",
    "DoorShell",
    "SweepConfirmations",
    "SwitchPause",
    "TeamActor",
    "TeamEffect",
    "TeamSnapshot",
    "TeamState",
]

logger = logging.getLogger("robota.core.teams")


@dataclass(frozen=True, slots=True)
class DoorShell:
    """What the actor needs of its door's surroundings to carry the core's effects out."""

    clock: Callable[[], float]
    agent_version: Callable[[], str | None]
    """The agent's reported version now (the notes)."""
    interrupt: Callable[[str], None]
    """Interrupt the turn on a route (a timed-out request)."""
    publish: Callable[[DoorState], None]
    """Called with each new state (any thread may read it, immutable)."""


@dataclass(frozen=True, slots=True)
class BindDoor:
    """The door binds: what it read from the store after a start, and its shell."""

    setup: DoorSetup
    shell: DoorShell
    rows: tuple[tuple[TeamRequestRow, bool, bool], ...]
    paused: bool
    last: TeamLastTask


@dataclass(frozen=True, slots=True)
class AttachDoor:
    """A transport attaches its replies (``None``: it stopped)."""

    replies: TeamReplies | None
    owner: str | None
    prefix: str = "/"


@dataclass(frozen=True, slots=True)
class SwitchPause:
    """Pause or resume; ``reply`` gets the store's answer (the held count, or the error)
    once the door decided on it."""

    paused: bool
    reply: Callable[[object], None]


@dataclass(frozen=True, slots=True)
class _Switched:
    switch: SwitchPause
    outcome: object


@dataclass(frozen=True, slots=True)
class _Bound:
    setup: DoorSetup
    shell: DoorShell


@dataclass(frozen=True, slots=True)
class TeamSnapshot:
    """Ask for the registry as last decided (``/status``, ``/queue``); ``reply`` (a ``Reply``
    from the loop, or any callable safe to call from the actor's thread) gets a ``TeamState``."""

    reply: Callable[[TeamState], None]


@dataclass(frozen=True, slots=True)
class TeamState:
    scheduler: SchedulerState
    pending: tuple[Pending, ...]
    version: int


@dataclass(frozen=True, slots=True)
class _SaveFailed:
    error: BaseException


class TeamActor(Actor):
    def __init__(
        self,
        team: TeamConfig,
        store: StoreClient,
        deliver: Callable[[TeamEffect], None],
        *,
        restore_timeout: float = 10.0,
    ) -> None:
        super().__init__()
        self._team = team
        self._store = store
        self._deliver = deliver
        self._restore_timeout = restore_timeout
        self._scheduler = Scheduler(team.slots, team.queue_limit, team.max_turn_minutes * 60)
        self._confirmations = Confirmations()
        self._version = 0
        self._door: _Bound | None = None
        self._door_state = DoorState()
        self._replies: TeamReplies | None = None

    def started(self) -> None:
        row = self._store.write_sync(LoadTeamRow(self._team.name), timeout=self._restore_timeout)
        if row is None:
            return
        self._version = row.version
        self._scheduler = Scheduler.restore(
            scheduler_from_json(row.scheduler_json),
            slots=self._team.slots,
            queue_limit=self._team.queue_limit,
            max_turn_seconds=self._team.max_turn_minutes * 60,
        )
        self._confirmations = Confirmations(confirmations_from_json(row.confirmations_json))

    def receive(self, message: Any) -> Any:
        if isinstance(message, _SaveFailed):
            raise message.error
        if isinstance(message, TeamSnapshot):
            message.reply(self._state())
            return None
        if isinstance(message, _DOOR_MESSAGES):
            self._door_message(message)
            return None
        if isinstance(message, _REGISTRY):
            self._decide(message)
            return None
        return super().receive(message)

    def _decide(
        self,
        message: Submit
        | Complete
        | Sweep
        | AskConfirmation
        | AnswerConfirmation
        | SweepConfirmations,
    ) -> None:
        """A registry message: decided, saved, delivered after the commit."""
        effects: list[TeamEffect]
        if isinstance(message, Submit | Complete | Sweep):
            effects = list(self._scheduler.handle(message))
        elif isinstance(message, AskConfirmation):
            replaced = self._confirmations.ask(message.pending)
            # Saved even when it replaces nothing: the new pending confirmation must survive.
            self._save([replaced] if replaced is not None else [])
            return
        elif isinstance(message, AnswerConfirmation):
            answer = self._confirmations.answer(
                message.thread, message.sender, message.text, message.now
            )
            effects = [answer] if answer is not None else []
        else:
            effects = list(self._confirmations.sweep(message.now))
        if effects:  # no effect, no change: a duplicate, an unknown id, nothing overdue
            self._save(effects)

    # -- the door's state --------------------------------------------------------------------

    def _door_message(self, message: Any) -> None:
        if isinstance(message, BindDoor):
            self._door = _Bound(message.setup, message.shell)
            registry = self._scheduler.state
            pending = self._confirmations.pending
            self._step(Restore(message.rows, registry, pending, message.paused, message.last))
        elif isinstance(message, AttachDoor):
            self._replies = message.replies
            attached = message.replies is not None
            self._step(Attach(message.owner, message.prefix) if attached else Detach())
        elif isinstance(message, SwitchPause):
            me, name = self.actor_ref, self._team.name
            op = SetTeamPaused(name, message.paused)
            self._store.submit(op, lambda outcome: _tell(me, _Switched(message, outcome)))
        elif isinstance(message, _Switched):
            switch, outcome = message.switch, message.outcome
            if not isinstance(outcome, BaseException):
                held = outcome if isinstance(outcome, int) else 0
                self._step(PauseStored() if switch.paused else ResumeStored(held))
            switch.reply(outcome)
        elif isinstance(message, Incoming):  # the registry as it is now, for /status and /queue
            self._step(Incoming(message.message, self._scheduler.state))
        else:
            if isinstance(message, Detach):
                self._replies = None
            self._step(message)

    def _step(self, event: DoorEvent) -> None:
        for effect in self._advance(event):
            self._carry_out(effect)

    def _advance(self, event: DoorEvent) -> list[CoreEffect]:
        """The core's step on the door's state, published; its effects, to carry out."""
        door = self._door
        if door is None:
            logger.warning("team %s: %s before the door bound", self._team.name, type(event))
            return []
        shell = door.shell
        facts = Facts(shell.clock(), shell.agent_version())
        self._door_state, effects = step(door.setup, self._door_state, event, facts)
        shell.publish(self._door_state)
        return effects

    def _carry_out(self, effect: CoreEffect) -> None:
        if isinstance(effect, Say | InterruptTurn):
            shell = self._door.shell if self._door is not None else None
            _outward(effect, self._replies, shell, self._team.name)
        elif isinstance(effect, Write):
            self._store.submit(effect.op, _logged)
        elif isinstance(effect, Tell):
            self._decide(effect.message)
        elif isinstance(effect, RefreshLast):
            me = self.actor_ref

            def learned(last: object) -> None:  # the writer's thread
                if isinstance(last, TeamLastTask):
                    _tell(me, Learned(last))

            self._store.submit(LoadTeamLastTask(self._team.name), learned)
        elif isinstance(effect, Dropped):
            logger.warning("team %s: no transport: %s dropped", self._team.name, effect.kind)

    def _state(self) -> TeamState:
        return TeamState(self._scheduler.state, self._confirmations.pending, self._version)

    def _save(self, effects: list[TeamEffect]) -> None:
        self._version += 1
        op = SaveTeamState(
            self._team.name,
            self._version,
            scheduler_to_json(self._scheduler.state),
            confirmations_to_json(self._confirmations.pending),
        )
        # The door's consequences are decided now, in the order the registry decided: what
        # reaches the transport waits for this registry's commit (nobody is told what a crash
        # could forget); the store's writes and the registry's next messages follow it at once.
        at_once, at_commit = self._door_consequences(effects)
        deliver, me, name = self._deliver, self.actor_ref, self._team.name
        replies, shell = self._replies, self._door.shell if self._door is not None else None

        def saved(outcome: object) -> None:
            if isinstance(outcome, BaseException) or outcome is not True:
                error = (
                    outcome
                    if isinstance(outcome, BaseException)
                    else RuntimeError(f"team {name}: a newer registry is already stored")
                )
                logger.error("team %s: saving the registry failed: %s", name, error)
                me.tell(_SaveFailed(error))
                return
            for effect in effects:
                deliver(effect)
            for outward in at_commit:
                _outward(outward, replies, shell, name)

        self._store.submit(op, saved)
        for effect in at_once:
            self._carry_out(effect)

    def _door_consequences(
        self, effects: list[TeamEffect]
    ) -> tuple[list[CoreEffect], list[Say | InterruptTurn]]:
        """The door's effects of the registry's decisions: (carried out at once, at the
        commit)."""
        at_once: list[CoreEffect] = []
        at_commit: list[Say | InterruptTurn] = []
        if self._door is None:
            return at_once, at_commit
        for effect in effects:
            for out in self._advance(Decided(effect)):
                if isinstance(out, Say | InterruptTurn):
                    at_commit.append(out)
                else:
                    at_once.append(out)
        return at_once, at_commit


_REGISTRY = (Submit, Complete, Sweep, AskConfirmation, AnswerConfirmation, SweepConfirmations)
"""The registry's messages: the scheduler's and the confirmations'."""
_DOOR_MESSAGES = (
    BindDoor,
    AttachDoor,
    SwitchPause,
    _Switched,
    Detach,
    Incoming,
    TurnEnded,
    OperatorTurns,
    SettleRecovered,
    Learned,
)
"""What the door tells (and the actor tells itself) about the door's state."""


def _outward(
    effect: Say | InterruptTurn,
    replies: TeamReplies | None,
    shell: DoorShell | None,
    name: str,
) -> None:
    """What reaches outside the team: an effect to the transport, a turn interrupted (the
    actor's thread, or the store writer's at a commit: both only hand it on)."""
    if isinstance(effect, InterruptTurn):
        if shell is not None:
            shell.interrupt(effect.route)
        return
    if replies is None:  # the core says only while attached; kept safe regardless
        return
    try:
        replies.perform(effect.effect)
    except Exception:
        logger.exception("team %s: an effect could not be performed", name)


def _tell(ref: Any, message: object) -> None:
    """Tell from the store writer's thread; the team may have stopped meanwhile."""
    try:
        ref.tell(message)
    except pykka.ActorDeadError:
        logger.debug("team: %s after the team stopped", type(message).__name__)


def _logged(value: object, /) -> None:
    if isinstance(value, BaseException):
        logger.error("team: a store write failed: %s: %s", type(value).__name__, value)
