"""The host's team groups: one ``TeamDoor`` and one ``TeamActor`` per ``teams.<name>``.

The doors are built with the host (each transport's context holds those of its teams, by chat
id); the actors start once the engine (and its store) is up, under the host's tree as the
``teams`` child, before the transports, which attach to their doors when they start. The
child's loop is the teams' clock: every ``SWEEP_EVERY`` seconds the requests past
``maxTurnMinutes`` and the confirmations past 15 minutes are swept. ``pause``/``resume`` serve
``robota team pause|resume`` (the control endpoint's ``team.pause`` / ``team.resume``).

Operator priority: the store says which turns run on a terminal's route (the TUI, print
mode, ``robota task send``'s ``cli:`` routes: any kind that is no chat transport's) in a team's
project; each door counts them as the operator's (``TeamDoor.operator_turns``: a slot,
teammates' writes wait, reads go on). The store, not this host's engine, so a TUI of the same
profile counts too; a turn whose heartbeat stopped does not. It is read when a terminal tells
the host that one of its turns began or ended (``turns.changed`` on the control endpoint,
sent by ``robota.cli._beacon``), so a teammate's write that arrives right after the operator
pressed Enter already waits, and every ``OPERATOR_POLL`` seconds for what nobody tells (a
background session's turns, a terminal killed mid-turn). The same poll settles the requests
a restart found running with a live turn: once the store shows none on their route, the door
completes them (a continued turn may end before the transport listens to its route, which
would otherwise leave the slot held until the sweep).
"""

from __future__ import annotations

import logging
import time
from contextlib import closing
from typing import TYPE_CHECKING

import trio

from robota.core.control import HandlerError
from robota.core.store import open_reader
from robota.core.teams import TeamActor, TeamDoor

from ._requests import TeamPause, TeamResume, TurnsChanged
from ._routing import route_kind

if TYPE_CHECKING:
    from collections.abc import Callable

    from robota.core.config import Config
    from robota.core.frontend import FrontEndPort
    from robota.core.store import StoreClient

__all__ = ["HostTeams"]

logger = logging.getLogger("robota.host")

SWEEP_EVERY = 30.0
OPERATOR_POLL = 1.0
HEARTBEAT_STALE = 120.0
"""Seconds without a heartbeat after which a running turn is taken for dead (a killed TUI)."""


class HostTeams:
    """See the module docstring."""

    def __init__(
        self,
        config: Config,
        store: StoreClient,
        *,
        port: FrontEndPort | None = None,
        agent_versions: Callable[[str], str | None] | None = None,
    ) -> None:
        self.store = store
        self.db_path = config.storage.sqlite_path
        self.chat_kinds = frozenset(config.transports.chat)
        self.doors: dict[str, TeamDoor] = {
            name: TeamDoor(
                team, store, agent=config.defaults.agent, port=port, agent_versions=agent_versions
            )
            for name, team in config.teams.items()
        }
        self._told = trio.Event()
        """Set by ``turns.changed``: read the running turns now."""

    def for_transport(self, transport: str) -> dict[str, TeamDoor]:
        """The doors of the teams on ``transport``, by chat id."""
        return {d.team.chat: d for d in self.doors.values() if d.team.transport == transport}

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        started: list[TeamDoor] = []
        try:
            for door in self.doors.values():
                actor = await trio.to_thread.run_sync(
                    TeamActor.start, door.team, self.store, door.deliver
                )
                await trio.to_thread.run_sync(door.bind, actor)
                started.append(door)
                logger.info("team %s: serving chat %s", door.team.name, door.team.chat)
            task_status.started()
            if not started:
                await trio.sleep_forever()
            swept = trio.current_time()
            while True:
                with trio.move_on_after(OPERATOR_POLL):
                    await self._told.wait()
                self._told = trio.Event()
                await self._operator_turns(started)
                await self._settle_recovered(started)
                if trio.current_time() - swept >= SWEEP_EVERY:
                    swept = trio.current_time()
                    for door in started:
                        door.sweep()
        finally:
            with trio.CancelScope(shield=True):
                for door in started:
                    await trio.to_thread.run_sync(door.stop)

    async def _operator_turns(self, doors: list[TeamDoor]) -> None:
        try:
            running = await trio.to_thread.run_sync(self._terminal_turns)
        except Exception:
            logger.exception("teams: the running turns could not be read")
            return
        for door in doors:
            door.operator_turns([a for a, cwd in running if cwd == str(door.team.project)])

    async def _settle_recovered(self, doors: list[TeamDoor]) -> None:
        waiting = [(door, door.recovered_routes()) for door in doors]
        waiting = [(door, routes) for door, routes in waiting if routes]
        if not waiting:
            return
        routes = [route for _, mine in waiting for route in mine]
        try:
            live = await trio.to_thread.run_sync(self._live_routes, routes)
        except Exception:
            logger.exception("teams: the recovered turns could not be read")
            return
        for door, _ in waiting:
            door.settle_recovered(live)

    def _live_routes(self, routes: list[str]) -> set[str]:
        """Which of ``routes`` have a turn accepted, running or recovering now."""
        marks = ", ".join("?" * len(routes))
        with closing(open_reader(self.db_path)) as db:
            rows = db.query(
                "SELECT DISTINCT route_key FROM turn_attempts WHERE"
                f" route_key IN ({marks}) AND status IN ('accepted', 'running', 'recovering')",
                routes,
            )
            return {str(row["route_key"]) for row in rows}

    def _terminal_turns(self) -> list[tuple[str, str]]:
        """(attempt id, project) of each live turn on a route no chat transport serves."""
        with closing(open_reader(self.db_path)) as db:
            rows = db.query(
                "SELECT a.id, a.route_key, t.cwd FROM turn_attempts a"
                " JOIN tasks t ON t.id = a.task_id"
                " WHERE a.status IN ('accepted', 'running', 'recovering')"
                " AND COALESCE(a.heartbeat_at, a.updated_at) >= ?",
                (time.time() - HEARTBEAT_STALE,),
            )
            return [
                (row["id"], row["cwd"])
                for row in rows
                if route_kind(row["route_key"]) not in self.chat_kinds
            ]

    def _door(self, name: str) -> TeamDoor:
        door = self.doors.get(name)
        if door is None:
            raise HandlerError("not_found", f"no team {name!r} in config.yaml")
        return door

    async def turns_changed(self, _request: TurnsChanged) -> dict[str, object]:
        self._told.set()
        return {"teams": len(self.doors)}

    async def pause(self, request: TeamPause) -> dict[str, object]:
        door = self._door(request.name)
        await trio.to_thread.run_sync(door.pause)
        return {"team": request.name, "paused": True}

    async def resume(self, request: TeamResume) -> dict[str, object]:
        door = self._door(request.name)
        held = await trio.to_thread.run_sync(door.resume)
        return {"team": request.name, "paused": False, "held": held}
