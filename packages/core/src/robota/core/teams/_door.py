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
counted in the store and gets nothing, and resuming tells the group how many arrived (the
switch is stored through the actor, in order with the held messages' counts, and ``pause`` and
``resume`` wait for it).

No platform knowledge: routes are opaque strings the transport made. A pure core and a thin
shell: every decision is ``_core.step`` (the door's state and one event in, the new state and
its effects out), the state is the team actor's (one mailbox, no locks, beside the registry
whose decisions it steps as they are made), and ``TeamDoor`` only turns each call into a
message to that actor: ``handle`` on the transport's loop, the host's timers and switches from
its own. The actor hands effects to ``TeamReplies.perform`` (which must not block); those that
follow from the registry's decisions once the registry holding them is committed, from the
store writer's thread. The few reads a caller needs at once (``recovered_routes``,
``may_approve``, ``detach``'s note) come from the state the actor last published, immutable.
Effects decided while no transport is attached (a restart's promotions before the transport is
up) wait in the state and are performed when it attaches.

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
from typing import TYPE_CHECKING, Any, Protocol

import pykka

from .._dists import robota_version
from ..config import TeamConfig
from ..engine import FrontEndRequest, Interrupt
from ..policy import Sweep, reply, role_of, team_locale
from ..store import LoadTeamLastTask, LoadTeamRequests, LoadTeamRow, StoreClient
from ._actor import AttachDoor, BindDoor, DoorShell, SwitchPause
from ._core import (
    Detach,
    DoorSetup,
    DoorState,
    Incoming,
    OperatorTurns,
    SettleRecovered,
    TurnEnded,
    offline_text,
    recovered_routes,
)
from ._values import (
    DoorEffect,
    FollowUpInput,
    GroupNote,
    StartRequest,
    SweepConfirmations,
    TeamEffect,
    TeamMessage,
    TeamReplies,
    ThreadReply,
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
        self._setup = DoorSetup(team, agent, robota_version())
        self._agent_versions = agent_versions
        """An agent's protocol-reported version once it started (the host's taps), for the
        notes."""
        self._port = port
        """Where a timed-out request's turn is interrupted."""
        self._store = store
        self._clock = clock
        self._actor: Any = None
        self._state = DoorState()
        """The state the actor last published (immutable; replaced whole, read lock-free)."""

    # -- the host's side ---------------------------------------------------------------------

    def bind(self, actor: Any) -> None:
        """The team's actor, started with ``deliver``; the pause switch, the last task and the
        stored requests read from the store (the actor restored the registry from the same
        row) and handed to it, which takes the queue back (the module docstring, Restarts)."""
        name = self.team.name
        row = self._store.write_sync(LoadTeamRow(name), timeout=STORE_TIMEOUT)
        last = self._store.write_sync(LoadTeamLastTask(name), timeout=STORE_TIMEOUT)
        rows = self._store.write_sync(LoadTeamRequests(name), timeout=STORE_TIMEOUT)
        shell = DoorShell(self._clock, self._agent_version, self._interrupt, self._publish)
        paused = bool(row is not None and row.paused)
        self._actor = actor
        actor.tell(BindDoor(self._setup, shell, tuple(rows), paused, last))

    def operator_turns(self, running: Collection[str]) -> None:
        """The turns the operator runs now on the team's project (attempt ids, from the
        terminal or ``robota task send``): each occupies a slot, so teammates' writes wait and
        reads go on. Its tag is ``read:<project>``: by the scheduler's rule a read conflicts
        with every write of the project and with no read, which is that behaviour exactly (a
        ``write:`` tag would hold the teammates' reads as well)."""
        self._tell(OperatorTurns(frozenset(running)))

    def deliver(self, effect: TeamEffect) -> None:
        """The ``deliver`` a door's actor is started with. Nothing to do: the actor steps the
        door's state with each decision of its registry as it decides, and hands the door's
        effects to the transport once the registry holding them is committed."""

    def pause(self) -> None:
        self._switch(True)

    def resume(self) -> int:
        """Resume; how many messages arrived while paused (the group is told)."""
        return self._switch(False)

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
        self._tell(AttachDoor(replies, owner, prefix))

    def detach(self) -> str | None:
        """The transport stops: no more effects; the offline note it posts on its way out
        (``None`` while paused: the group was told at the pause)."""
        self._tell(Detach())
        state = self._state
        return None if state.paused else offline_text(self._setup, state)

    @property
    def paused(self) -> bool:
        return self._state.paused

    def refusal(self, key: str) -> str:
        """A fixed reply in the team's locale (``approval_admins_only`` for a member's click)."""
        return reply(team_locale(self.team), key)

    def may_approve(self, sender: str) -> bool:
        """Approvals in a team thread are answered by admins only."""
        return role_of(sender, self.team, self._state.owner) == "admin"

    def handles(self, route: str) -> bool:
        return route in self._state.tasks

    def recovered_routes(self) -> list[str]:
        """The routes of the requests restored with a live turn that have not ended yet."""
        return recovered_routes(self._state)

    def settle_recovered(self, live: Collection[str]) -> None:
        """The host read which of ``recovered_routes`` still have a live turn: the others
        ended, perhaps before the transport listened to them, and are completed."""
        self._tell(SettleRecovered(frozenset(live)))

    def turn_ended(self, route: str) -> None:
        self._tell(TurnEnded(route))

    def handle(self, message: TeamMessage) -> None:
        """One claimed, fresh message of the team's group (the transport's loop)."""
        self._tell(Incoming(message))

    # -- the shell ---------------------------------------------------------------------------

    def _tell(self, message: object) -> None:
        actor = self._actor
        if actor is None:
            logger.warning("team %s: %s before its actor", self.team.name, type(message).__name__)
            return
        try:
            actor.tell(message)
        except pykka.ActorDeadError:  # the host stopped the team before its transport
            logger.info("team %s: %s after its actor", self.team.name, type(message).__name__)

    def _switch(self, paused: bool) -> int:
        """Store the pause switch through the actor (in order with the held messages' counts)
        and wait for its answer: the held count, or the store's error raised."""
        answered = threading.Event()
        outcome: list[object] = []

        def answer(value: object) -> None:
            outcome.append(value)
            answered.set()

        self._tell(SwitchPause(paused, answer))
        if not answered.wait(STORE_TIMEOUT):
            raise TimeoutError(f"team {self.team.name}: the pause switch was not stored")
        value = outcome[0]
        if isinstance(value, BaseException):
            raise value
        return value if isinstance(value, int) else 0

    def _publish(self, state: DoorState) -> None:  # the actor's thread
        self._state = state

    def _agent_version(self) -> str | None:
        agent = self._setup.agent
        if agent is None or self._agent_versions is None:
            return None
        return self._agent_versions(agent)

    def _interrupt(self, route: str) -> None:
        if self._port is not None:
            self._port.tell(route, Interrupt())
