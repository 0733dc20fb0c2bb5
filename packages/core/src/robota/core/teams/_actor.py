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
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..config import TeamConfig
from ..kernel import Actor
from ..policy import (
    Cancelled,
    Complete,
    Confirmations,
    Confirmed,
    Expired,
    Pending,
    Scheduler,
    SchedulerEffect,
    SchedulerState,
    Submit,
    Sweep,
    confirmations_from_json,
    confirmations_to_json,
    scheduler_from_json,
    scheduler_to_json,
)
from ..store import LoadTeamRow, SaveTeamState, StoreClient

__all__ = [
    "AnswerConfirmation",
    "AskConfirmation",
    "SweepConfirmations",
    "TeamActor",
    "TeamEffect",
    "TeamSnapshot",
    "TeamState",
]

logger = logging.getLogger("robota.core.teams")

TeamEffect = SchedulerEffect | Confirmed | Cancelled | Expired


@dataclass(frozen=True, slots=True)
class AskConfirmation:
    pending: Pending


@dataclass(frozen=True, slots=True)
class AnswerConfirmation:
    thread: str
    sender: str
    text: str
    now: float


@dataclass(frozen=True, slots=True)
class SweepConfirmations:
    now: float


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
        effects: list[TeamEffect]
        if isinstance(message, Submit | Complete | Sweep):
            effects = list(self._scheduler.handle(message))
        elif isinstance(message, AskConfirmation):
            replaced = self._confirmations.ask(message.pending)
            # Saved even when it replaces nothing: the new pending confirmation must survive.
            self._save([replaced] if replaced is not None else [])
            return None
        elif isinstance(message, AnswerConfirmation):
            answer = self._confirmations.answer(
                message.thread, message.sender, message.text, message.now
            )
            effects = [answer] if answer is not None else []
        elif isinstance(message, SweepConfirmations):
            effects = list(self._confirmations.sweep(message.now))
        else:
            return super().receive(message)
        if effects:  # no effect, no change: a duplicate, an unknown id, nothing overdue
            self._save(effects)
        return None

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
        deliver, me, name = self._deliver, self.actor_ref, self._team.name

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

        self._store.submit(op, saved)
