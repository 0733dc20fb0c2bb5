"""``robota --serve``: the headless host of one workspace on a loopback WebSocket.

    serve (one_for_one)
    ├── engine       store, agents, routes (``open_engine``, as a background session's)
    └── taps         the host's subscriptions to its routes (``RouteTaps``; the desk's)

beside which run the surfaces' hub (``robota.core.surfaces.SurfaceHub``: sessions, clients,
seqs, resume) and the carrier, the ``websocket`` plugin of the ``robota.surfaces`` group. A
session is a route ``serve:sN`` whose task is made here, as a background session makes its
one (the agent, the workspace, permission mode ``plan`` when Restricted).

The token: the launcher's ``ROBOTA_SERVE_TOKEN`` when it passes one (removed from the
environment before anything spawns, so no agent or terminal inherits it), else a fresh
``secrets.token_urlsafe``. It is written once, in the ready line on stdout, and nowhere else:
not in logs, listings or argv. Stop signals stop it cleanly, agents too (``_signals``).
"""

from __future__ import annotations

import json
import logging
import os
import secrets
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import trio

from robota.core import ChildSpec, ConfigError, Supervisor, surface_plugin
from robota.core.engine import NewTask, TaskSettings
from robota.core.frontend import FrontEndPort
from robota.core.surfaces import SurfaceHub

from ._desk import TaskDesk
from ._engine_host import load_profile, open_engine
from ._signals import run_until_stopped
from ._taps import RouteTaps
from ._trust import WorkspaceRefused, headless_workspace

if TYPE_CHECKING:
    from collections.abc import Callable

    from robota.core.config import Config, Profile

__all__ = ["TOKEN_ENV", "ServeHost", "run_serve"]

logger = logging.getLogger("robota.cli.serve")

TOKEN_ENV = "ROBOTA_SERVE_TOKEN"
SERVE_KIND = "serve"
SURFACE = "websocket"


def run_serve(
    cwd: Path | None, *, port: int, json_: bool, restricted: bool, agent: str | None
) -> int:
    """Exit codes: 0 stopped, 1 the tree failed, 2 refused (config, an untrusted workspace)."""
    # First of all: whatever spawns later (agents, their terminals) must not inherit it.
    token = os.environ.pop(TOKEN_ENV, None) or secrets.token_urlsafe(32)
    config, profile = load_profile()
    directory = (cwd or Path.cwd()).resolve()
    try:
        workspace = headless_workspace(
            config, profile, directory, restricted=restricted, mode="--serve"
        )
    except (WorkspaceRefused, ConfigError) as refused:
        print(f"robota: {refused}", file=sys.stderr)
        return 2
    host = ServeHost(
        workspace.config,
        profile,
        directory,
        token=token,
        port=port,
        json_=json_,
        agent=agent,
        restricted=workspace.decision.restricted,
        hook=workspace.hook,
    )
    try:
        run_until_stopped(host)
    except Exception as failed:
        logger.exception("--serve: the tree failed")
        print(f"robota: --serve failed: {failed}", file=sys.stderr)
        return 1
    return 0


class ServeHost:
    """See the module docstring. ``run`` until ``stop`` (or a signal)."""

    def __init__(
        self,
        config: Config,
        profile: Profile,
        cwd: Path,
        *,
        token: str,
        port: int,
        json_: bool,
        agent: str | None,
        restricted: bool,
        hook: Callable[[Path], bool] | None,
    ) -> None:
        self.cwd = cwd
        self.port = port
        self.json = json_
        self.agent = agent
        self.restricted = restricted
        self._token = token
        self.engine = open_engine(
            config,
            profile,
            # Asked of the session's clients; with none, declined (the hub).
            human_approves=True,
            recover=lambda _key: False,
            restricted=hook,
        )
        self.taps = RouteTaps(FrontEndPort(self.engine))
        self.accepting = True
        self.desk = TaskDesk(self.engine, self.taps, {SERVE_KIND}, lambda: self.accepting)
        self.hub = SurfaceHub(
            self.taps.port,
            self._open_session,
            hello={"workspace": cwd.name, "restricted": restricted},
        )
        self.supervisor = Supervisor(
            "serve",
            [
                ChildSpec("engine", lambda: self.engine, shutdown=45.0, start_timeout=60.0),
                ChildSpec("taps", lambda: self.taps),
            ],
        )
        self._stop = trio.Event()

    async def _open_session(self, key: str) -> dict[str, Any]:
        settings = TaskSettings(
            agent=self.agent,
            cwd=self.cwd,
            permission_mode="plan" if self.restricted else None,
        )
        task = await self.desk.open_on(key, NewTask(settings, announce=True))
        return {"task": task.id}

    async def run(self) -> None:
        plugin = surface_plugin(SURFACE)
        async with trio.open_nursery() as nursery:
            await nursery.start(self.supervisor.run)
            async with trio.open_nursery() as beside:
                await beside.start(self.hub.run)
                url = await beside.start(
                    lambda task_status: plugin.serve(
                        self.hub, port=self.port, token=self._token, task_status=task_status
                    )
                )
                logger.info("--serve ready (pid %d)", os.getpid())  # the URL never logged
                if self.json:
                    line = json.dumps({"type": "ready", "url": url})
                else:
                    line = f"robota: serving this workspace on {url}"
                print(line, flush=True)
                await self._stop.wait()
                self.accepting = False
                self.hub.stop()
                beside.cancel_scope.cancel()
            self.supervisor.stop()

    def stop(self) -> None:
        self.accepting = False
        self._stop.set()
