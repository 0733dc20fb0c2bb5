"""The host's team groups: one ``TeamDoor`` and one ``TeamActor`` per ``teams.<name>``.

The doors are built with the host (each transport's context holds those of its teams, by chat
id); the actors start once the engine (and its store) is up, under the host's tree as the
``teams`` child, before the transports, which attach to their doors when they start. The
child's loop is the teams' clock: every ``SWEEP_EVERY`` seconds the requests past
``maxTurnMinutes`` and the confirmations past 15 minutes are swept. ``pause``/``resume`` serve
``robota team pause|resume`` (the control endpoint's ``team.pause`` / ``team.resume``).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import trio

from robota.core.control import HandlerError
from robota.core.teams import TeamActor, TeamDoor

from ._requests import TeamPause, TeamResume

if TYPE_CHECKING:
    from robota.core.config import Config
    from robota.core.store import StoreClient

__all__ = ["HostTeams"]

logger = logging.getLogger("robota.cli.host")

SWEEP_EVERY = 30.0


class HostTeams:
    """See the module docstring."""

    def __init__(self, config: Config, store: StoreClient) -> None:
        self.store = store
        self.doors: dict[str, TeamDoor] = {
            name: TeamDoor(team, store, agent=config.defaults.agent)
            for name, team in config.teams.items()
        }

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
            while True:
                await trio.sleep(SWEEP_EVERY)
                for door in started:
                    door.sweep()
        finally:
            with trio.CancelScope(shield=True):
                for door in started:
                    await trio.to_thread.run_sync(door.stop)

    def _door(self, name: str) -> TeamDoor:
        door = self.doors.get(name)
        if door is None:
            raise HandlerError("not_found", f"no team {name!r} in config.yaml")
        return door

    async def pause(self, request: TeamPause) -> dict[str, object]:
        door = self._door(request.name)
        await trio.to_thread.run_sync(door.pause)
        return {"team": request.name, "paused": True}

    async def resume(self, request: TeamResume) -> dict[str, object]:
        door = self._door(request.name)
        held = await trio.to_thread.run_sync(door.resume)
        return {"team": request.name, "paused": False, "held": held}
