"""The host: ``robota server run``, one process whose root is a supervision tree.

    host (one_for_one)
    ├── engine       store, agents, routes (``robota.core.engine.Engine``, built as print mode
    │                and the TUI build theirs: ``_engine_host.open_engine``)
    ├── taps         the host's subscriptions to routes (``RouteTaps``)
    ├── control      the local control endpoint (``robota.core.control.ControlServer``;
    │                print mode's turns, ``print.run``: ``_print_turns``)
    ├── teams        one team actor per ``teams.<name>`` and its door (``_teams.HostTeams``)
    └── transports   a supervisor of the chat transports, one child per enabled section
                     (``_transports.HostTransports``)

Each child is a service (``_services``): a name and its place relative to the others, composed
with every service installed under the ``robota.host_services`` entry point group (one that
the transports may ask starts after ``control`` and before ``transports``).

Beside the tree, once it is up, the safe restart's watcher (``_restarter.HostRestarts``): the
host is the transports' ``HostActions`` (a chat's ``/restart``) and serves ``server.restart``;
when a restart goes, the host stops as on ``server stop`` and ``run_host`` replaces it.

Children start in that order and stop in reverse: the endpoint is up only once the engine
recovered what the last run left, and on a stop the transports and the endpoint go first, then
the engine, whose routes persist their state while agents and the store still run; agents end
with their whole process groups (the runtimes' process service). A turn still running is left
'running' in the store: the next host's recovery continues it (docs/architecture/invariants.md,
invariant 3).

Approvals: nobody sits at the host, so its own ``cli:`` routes (``robota task``) are decided by
the unattended policy (``human_approves`` false, as print mode does); a chat route's approvals
go to the person in the chat (its transport shows them as buttons).

Why here and not in ``robota.core``: the host is a composition root (the profile's
configuration, ``open_engine``, the agent launches, the transports' plugins); nothing in it
knows a platform.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

import trio

from robota.core import PluginError, Supervisor, robota_version
from robota.core.control import (
    ControlServer,
    Endpoint,
    HandlerError,
    HostLock,
    HostState,
    StreamEndpoint,
)
from robota.core.frontend import FrontEndPort, GroupMaker

from ._desk import TaskDesk
from ._engine_host import open_engine
from ._groups import GroupDesk
from ._owners import HOST_OWNER, Owner
from ._print_choice import PRINT_KIND, PRINT_ROUTES
from ._print_turns import PrintDesk, PrintTurns
from ._reads import count_routes
from ._requests import (
    CancelRestart,
    HostStatus,
    RestartHost,
    StopHost,
    TaskFork,
    TaskForkGroup,
    TaskNew,
    TaskNewGroup,
    TaskQueue,
    TaskRelease,
    TaskRename,
    TaskRun,
    TaskSend,
    TaskStop,
    TeamPause,
    TeamResume,
    TurnsChanged,
)
from ._restart import Schedule
from ._restarter import Enrollment, HostRestarts, restarted_notes
from ._routing import CLI_KIND, serves
from ._services import BUILTIN_SERVICES, host_services
from ._taps import RouteTaps
from ._teams import HostTeams
from ._transports import HostTransports, transports_agent_env
from ._trust import restricted_hook, task_restricted_hook

if TYPE_CHECKING:
    from robota.core.config import Config, Profile

__all__ = ["Host", "status_json"]

logger = logging.getLogger("robota.host")

QUIET_ROUTES = 5.0
"""Seconds after which a route with nothing in flight passivates (its state and its heap
freed; the next message brings it back in a few ms): a host with
hundreds of chats keeps only the busy ones alive."""

UNATTENDED = frozenset({CLI_KIND, PRINT_KIND})
"""The route kinds nobody answers approvals on."""

STOP_REPLY_GRACE = 1.0
"""Seconds a stop waits for control connections to finish (the stop request's own reply among
them) before the endpoint closes under them."""


class Host:
    """See the module docstring. ``run`` until ``stop`` (or a signal, see ``run_host``)."""

    def __init__(self, config: Config, profile: Profile, lock: HostLock) -> None:
        self.config = config
        self.profile = profile
        self.lock = lock
        self.kinds = frozenset({CLI_KIND, *config.transports.chat})
        """The route kinds this host serves, recovers and drives tasks through."""
        self.engine = open_engine(
            config,
            profile,
            # A chat's person answers its approvals on the card; the host's own ``cli:`` routes
            # (``robota task``) and print mode's (``print.run``) run unattended, and policy
            # declines there.
            human_approves=lambda key: not serves(UNATTENDED, key),
            recover=lambda key: serves(self.kinds, key),
            agent_env=transports_agent_env(config),
            # Each task's directory by its workspace's trust: an untrusted one runs Restricted.
            restricted=restricted_hook(profile),
            quiet_after=QUIET_ROUTES,
            # Print mode's runs (``print.run``) take a session their agent opened ahead, and
            # leave the next one opening: a one-shot turn waits for no session/new.
            open_ahead=lambda key: serves(PRINT_ROUTES, key),
        )
        self.store = self.engine.store
        """The one store writer's client, for the services (``ServiceHost.store``)."""
        self.taps = RouteTaps(FrontEndPort(self.engine))
        self.accepting = True
        self.serving = False
        """The tree is up and the host's state published."""
        self.state = HostState.of_this_process(
            version=robota_version(), profile=profile.home, socket=profile.control_socket
        )
        self.desk = desk = TaskDesk(
            self.engine,
            self.taps,
            self.kinds,
            lambda: self.accepting,
            serve_route=lambda key: self.transports.serve_route(key),  # noqa: PLW0108 (below)
            owner=Owner.this_process(HOST_OWNER, profile.control_socket),
        )
        self.replacement: Schedule | None = None
        """The restart that stopped this host: ``run_host`` starts the next one."""
        self.previous: Enrollment | None = None
        """What the host this one replaced left (its restart's enrolled routes)."""
        self.restarts = HostRestarts(
            profile.data_dir,
            turns_running=lambda: len(self.engine.context.running.snapshot()),
            # A cli route's final is delivered in the same step that ends its turn; a chat
            # transport's card delivers its answer after it (``PendingFinals``).
            finals_pending=lambda: self.transports.pending_finals(),  # noqa: PLW0108 (below)
            go=self._replace,
            notify=lambda note: self.transports.note(note),  # noqa: PLW0108 (built below)
        )
        self.teams = HostTeams(
            config, self.engine.store, port=self.taps.port, agent_versions=self.engine.agent_version
        )
        self.transports = HostTransports(
            config,
            profile,
            port=self.taps.port,
            store=self.engine.store,
            host=self,
            teams=self.teams.for_transport,
            restricted_task=task_restricted_hook(profile, config.storage.sqlite_path),
        )
        self.prints = PrintDesk(self.engine, config, profile, lambda: self.accepting, desk)
        self.groups = groups = GroupDesk(desk, lambda: self.transports.makers)
        self._endpoints: list[Endpoint[Any] | StreamEndpoint[Any]] | None = [
            Endpoint(HostStatus, self._status),
            Endpoint(StopHost, self._stop_request),
            Endpoint(RestartHost, self._restart_request),
            Endpoint(CancelRestart, self._cancel_request),
            Endpoint(TaskSend, self._send_request),
            Endpoint(TaskNew, desk.new),
            Endpoint(TaskStop, desk.stop),
            Endpoint(TaskFork, desk.fork),
            Endpoint(TaskQueue, desk.queue),
            Endpoint(TaskRename, desk.rename),
            Endpoint(TaskRelease, desk.release),
            Endpoint(TaskNewGroup, groups.new_group),
            Endpoint(TaskForkGroup, groups.fork_group),
            Endpoint(TeamPause, self.teams.pause),
            Endpoint(TeamResume, self.teams.resume),
            Endpoint(TurnsChanged, self.teams.turns_changed),
            StreamEndpoint(PrintTurns, self.prints.run),
            StreamEndpoint(TaskRun, self._run_request),
        ]
        """The control endpoint's requests until it is built (``None`` after)."""
        self.transport_tree = Supervisor("transports", self.transports.specs)
        """The ``transports`` child: one grandchild per enabled chat transport."""
        self.services = host_services(BUILTIN_SERVICES)
        """This host's children in their start order, installed ones among them (``_services``)."""
        # Every service's child first: a service adds its endpoints there (``add_endpoints``).
        children = [service.child(self) for service in self.services]
        endpoints, self._endpoints = self._endpoints, None
        self.server = ControlServer(profile.control_socket, endpoints or ())
        self.supervisor = Supervisor("host", children)
        self._stop = trio.Event()

    async def run(self) -> None:
        """Start the tree, publish the host's state, serve until ``stop``, then stop the tree."""
        async with trio.open_nursery() as nursery:
            await nursery.start(self.supervisor.run)
            self.lock.publish(self.state)
            self.serving = True
            logger.info("host %d ready on %s", os.getpid(), self.profile.control_socket)
            async with trio.open_nursery() as beside:
                beside.start_soon(self._after_ready)
                beside.start_soon(self.restarts.watch)
                await self._stop.wait()
                beside.cancel_scope.cancel()
            self.accepting = False
            logger.info("host %d stopping", os.getpid())
            with trio.move_on_after(STOP_REPLY_GRACE):
                while self.server.connections:
                    await trio.sleep(0.01)
            self.supervisor.stop()
        self.desk.close()

    @property
    def ready(self) -> bool:
        """Serving, and every enabled chat transport holds a real connection."""
        return self.serving and self.transports.ready

    def add_endpoints(self, endpoints: Iterable[Endpoint[Any] | StreamEndpoint[Any]]) -> None:
        """Serve ``endpoints`` too (a service's ``child``, before the endpoint is built)."""
        if self._endpoints is None:
            raise PluginError("a host service added control endpoints after the host built it")
        added = list(endpoints)
        served = {endpoint.request for endpoint in self._endpoints}
        twice = sorted(
            getattr(e.request, "TYPE", e.request.__name__) for e in added if e.request in served
        )
        if twice:
            raise PluginError(f"control requests served twice: {', '.join(twice)}")
        self._endpoints.extend(added)

    def stop(self) -> None:
        """Stop cleanly (trio thread): no new turns are accepted from now on."""
        self.accepting = False
        self._stop.set()

    # -- the safe restart (HostActions, for the transports) --------------------------------------

    def request_restart(self, route_key: str, *, force: bool) -> str:
        return self.restarts.request(route_key, force=force, reason=None).id

    def cancel_restart(self, schedule_id: str) -> bool:
        return self.restarts.cancel(schedule_id)[0]

    def note_inbound(self, route_key: str) -> None:  # noqa: ARG002 (any route resets it)
        self.restarts.inbound()

    async def open_group(
        self,
        maker: GroupMaker,
        route_key: str,
        *,
        fork: bool,
        title: str | None,
        task: str | None = None,
    ) -> str:
        return await self.groups.from_route(maker, route_key, fork=fork, title=title, task=task)

    def _replace(self, schedule: Schedule) -> None:
        self.replacement = schedule
        self.stop()

    async def _after_ready(self) -> None:
        """Once ready: take what a replaced host left (its enrolled routes)."""
        while not self.ready:
            await trio.sleep(0.05)
        self.previous = await trio.to_thread.run_sync(self.restarts.take_enrollment)
        if self.previous is not None:
            logger.info(
                "host %d replaced host %d (restart %s, %d routes enrolled)",
                os.getpid(),
                self.previous.previous_pid,
                self.previous.schedule_id,
                len(self.previous.routes),
            )
            for note in restarted_notes(self.previous):
                self.transports.note(note)

    # -- control requests ------------------------------------------------------------------------

    async def _send_request(self, request: TaskSend) -> dict[str, object]:
        self.restarts.inbound()  # a prompt through the host is an inbound message
        return await self.desk.send(request)

    async def _run_request(self, request: TaskRun, stream: trio.SocketStream) -> None:
        self.restarts.inbound()
        await self.desk.run(request, stream)

    async def _restart_request(self, request: RestartHost) -> dict[str, object]:
        if not self.accepting:
            raise HandlerError("stopping", "the host is stopping")
        route = await self.desk.route_of(request.task) if request.task is not None else None
        schedule = self.restarts.request(route, force=request.force, reason=request.reason)
        return {
            "schedule_id": schedule.id,
            "force": schedule.force,
            "routes": list(schedule.routes),
            "pid": os.getpid(),
        }

    async def _cancel_request(self, request: CancelRestart) -> dict[str, object]:
        cancelled, schedule_id = self.restarts.cancel(request.schedule_id)
        return {"cancelled": cancelled, "schedule_id": schedule_id}

    async def _stop_request(self, _request: StopHost) -> dict[str, object]:
        self.stop()
        return {"stopping": True, "pid": os.getpid()}

    async def _status(self, _request: HostStatus) -> dict[str, object]:
        def known_routes() -> int:
            with self.engine.context.readers.reading() as db:
                return count_routes(db)

        return status_json(
            self.state,
            running=True,
            ready=self.ready,
            transports=self.transports.as_json(),
            agents=[
                {
                    "name": name,
                    "pid": self.engine.agent_pid(name),
                    "version": self.engine.agent_version(name),
                }
                for name in self.engine.agent_names
            ],
            known_routes=await trio.to_thread.run_sync(known_routes),
            active_routes=self.engine.directory.active,
            turns_running=len(self.engine.context.running.snapshot()),
        )


def status_json(
    state: HostState | None,
    *,
    running: bool,
    ready: bool,
    transports: Sequence[dict[str, object]] = (),
    agents: Sequence[dict[str, object]],
    known_routes: int,
    active_routes: int,
    turns_running: int,
    profile: str | None = None,
) -> dict[str, object]:
    """``server status --json``: the same fields whether or not a host runs."""
    return {
        "running": running,
        "ready": ready,
        "pid": state.pid if state is not None else None,
        "version": state.version if state is not None else None,
        "profile": state.profile if state is not None else profile,
        "started_at": state.started_at if state is not None else None,
        "transports": list(transports),
        "agents": list(agents),
        "routes": {"known": known_routes, "active": active_routes},
        "turns_running": turns_running,
    }
