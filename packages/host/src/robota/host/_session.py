"""A background session: a small host serving one session in one workspace.

    session (one_for_one)
    ├── engine       store, agents, routes (``open_engine``, as the host builds its own)
    ├── taps         the session's subscriptions to its route (``RouteTaps``)
    └── control      its own control endpoint (``ControlServer``) on ``ID.sock`` in the
                     profile's owner-only rendezvous directory (``Profile.sessions_dir``)

beside which run the surfaces' hub (``robota.core.surfaces.SurfaceHub``) and its carrier, the
``websocket`` plugin, as ``robota --serve`` runs them: the session's one route is the hub's one
session, so an attached terminal and a WebSocket client drive and watch the same turns and
answer the same approvals (the engine's rule). The WebSocket listens on 127.0.0.1 (a free
port) with a token made fresh per process start and kept in memory only: the one way to it is
``session.surface`` on the owner-only control socket (``daemon start --json`` prints it).

The same pieces as the host's tree (``_host``), minus the chat transports and the safe
restart: a background session is never restarted, by anyone. Its one route is
``session:ID`` (a kind no host serves or recovers); its task is made when the tree is up, with
the agent, directory and name it was started with (permission mode ``plan`` when Restricted),
or, started with ``--task TASK``, that existing task continues in it (``_continue``): it must
work in the session's workspace, its owner must not be another live session (a task the live
host owns is first let go by the host, ``_owners``: refused while a turn of it runs), and the route
refuses it when it is moving, moved or held (a handoff's); its agent session is resumed or,
for a task that arrived from another device, opened afresh and primed with its transcript.

Once the task exists the session publishes its registration (``ID.json``, guarded by the
``flock`` on ``ID.lock`` it holds for its life, the host lock's code) with a fresh random
generation; every request that acts on it must name that generation (``_session_requests``).
A stop removes the registration, then the socket, then ends the tree and the agents.

Approvals go to the attached driving surfaces (``_attach``: at most 4 terminals) and the
WebSocket clients; a question
asked while none is attached, or pending when the last one leaves, is declined (a question
cancelled): nobody else could answer it. That is the engine's rule (``SurfaceJoined``): the
session joins its route as ``send``, the surface of ``session send``, which only observes, so
the route declines what no attached terminal can answer. A pending question reads
``needs-input`` in ``session list``.
"""

from __future__ import annotations

import hmac
import logging
import os
import secrets
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import trio

from robota.core import ChildSpec, Supervisor, surface_plugin
from robota.core.control import (
    ControlServer,
    Endpoint,
    HandlerError,
    HostLock,
    Registration,
    StreamEndpoint,
    now_iso,
    own_process_start,
)
from robota.core.engine import (
    NewTask,
    SurfaceJoined,
    TaskSettings,
    TurnFinished,
    TurnUpdate,
    UseTask,
)
from robota.core.events import ApprovalRequested, ApprovalResolved
from robota.core.frontend import FrontEndPort
from robota.core.surfaces import SurfaceHub, SurfaceProtocolError

from ._attach import AttachDesk, SessionAttach
from ._desk import TaskDesk
from ._engine_host import open_engine
from ._owners import (
    CLAIM_TIMEOUT,
    Gone,
    HostHolds,
    Owner,
    Theirs,
    ask_host_to_let_go,
    describe,
    ownership,
    runs,
    takeover,
)
from ._print_choice import PRINT_ROUTES
from ._print_turns import PrintDesk, PrintTurns
from ._requests import TaskRename, TaskSend
from ._routing import serves
from ._session_requests import (
    SESSION_KIND,
    SessionRename,
    SessionSend,
    SessionStatus,
    SessionStop,
    SessionSurface,
)
from ._sessions import SessionSpec, session_paths, workspace_of
from ._taps import RouteTaps

if TYPE_CHECKING:
    from collections.abc import Callable

    from robota.core.config import Config, Profile
    from robota.core.store import Task

__all__ = ["SessionHost"]

logger = logging.getLogger("robota.host.session")

STOP_REPLY_GRACE = 1.0
SURFACE = "websocket"
SEND_SURFACE = "send"
"""The session's own surface on its route: ``session send`` prompts, and cannot answer."""


class SessionHost:
    """See the module docstring. ``run`` until ``stop`` (or a signal, see ``run_session``)."""

    def __init__(
        self,
        config: Config,
        profile: Profile,
        lock: HostLock,
        spec: SessionSpec,
        *,
        restricted: Callable[[Path], bool] | None = None,
        print_config: Config | None = None,
    ) -> None:
        """``print_config``: the profile's configuration, as print mode's own start reads it,
        for a daemon that serves ``print.run`` (``None``: it serves none)."""
        self.profile = profile
        self.lock = lock
        self.spec = spec
        self.route = f"{SESSION_KIND}:{spec.session_id}"
        self.engine = open_engine(
            config,
            profile,
            # Asked of the attached driving surfaces; with none, the route declines. Print
            # mode's routes (a daemon's ``print.run``) run unattended, as in print mode's own
            # process, and take a session opened ahead.
            human_approves=lambda key: not serves(PRINT_ROUTES, key),
            recover=lambda key: key == self.route,
            restricted=restricted,
            open_ahead=lambda key: serves(PRINT_ROUTES, key),
        )
        self.taps = RouteTaps(FrontEndPort(self.engine))
        self.accepting = True
        self.ready = False
        self.desk = TaskDesk(self.engine, self.taps, {SESSION_KIND}, lambda: self.accepting)
        self.task_id: str | None = None
        self.pending: set[str] = set()
        """Approvals the route waits for."""
        self.attach = AttachDesk(
            self.taps.port,
            self.route,
            self._check,
            lambda: {
                "id": self.registration.id,
                "name": self.registration.name,
                "task": self.task_id,
            },
        )
        _, _, socket_path = session_paths(profile, spec.session_id)
        self.registration = Registration(
            id=spec.session_id,
            name=spec.name,
            pid=os.getpid(),
            process_start=own_process_start(),
            generation=secrets.token_hex(16),
            started_at=now_iso(),
            agent=spec.agent,
            daemon=spec.daemon,
            restricted=spec.restricted,
            workspace=str(spec.workspace),
            socket=str(socket_path),
        )
        self._token = secrets.token_urlsafe(32)
        self.url: str | None = None
        """The WebSocket's URL (its token in it), once it listens; never logged."""
        self.hub = SurfaceHub(
            self.taps.port,
            self._no_new_session,
            hello={"workspace": spec.workspace.name, "restricted": spec.restricted},
        )
        self.server = ControlServer(
            socket_path,
            [
                Endpoint(SessionStatus, self._status),
                Endpoint(SessionSend, self._send),
                Endpoint(SessionStop, self._stop_request),
                Endpoint(SessionRename, self._rename),
                # The URL carries the token that drives the session, approvals included.
                Endpoint(SessionSurface, self._surface, operator=True),
                StreamEndpoint(SessionAttach, self.attach.attach, operator=True),
                *self._print_endpoints(config, print_config),
            ],
        )
        self.supervisor = Supervisor(
            "session",
            [
                ChildSpec("engine", lambda: self.engine, shutdown=45.0, start_timeout=60.0),
                ChildSpec("taps", lambda: self.taps),
                ChildSpec("control", lambda: self.server),
            ],
        )
        self._stop = trio.Event()

    def _print_endpoints(
        self, config: Config, print_config: Config | None
    ) -> list[StreamEndpoint[Any]]:
        """A daemon's ``print.run`` (``_print_turns``), served as the host serves it."""
        if not self.spec.daemon or print_config is None:
            return []
        desk = PrintDesk(
            self.engine,
            print_config,
            self.profile,
            lambda: self.accepting and self.ready,
            self.desk,
            engine_config=config,
            forced=self.spec.restricted,
        )
        return [StreamEndpoint(PrintTurns, desk.run)]

    async def run(self) -> None:
        """Start the tree, make the session's task, register, serve until ``stop``."""
        async with trio.open_nursery() as nursery:
            await nursery.start(self.supervisor.run)
            owner = Owner.this_process(
                f"{SESSION_KIND}:{self.spec.session_id}",
                Path(self.registration.socket),
                self.registration.generation,
            )
            if self.spec.task is not None:
                task = await self._continue(self.spec.task, owner)
            else:
                settings = TaskSettings(
                    agent=self.spec.agent,
                    cwd=self.spec.cwd,
                    title=self.spec.name,
                    permission_mode="plan" if self.spec.restricted else None,
                )
                task = await self.desk.open_on(self.route, NewTask(settings))
                # Its owner from now on (before it is registered: the host sees a live process).
                await self.engine.store.write(owner.claim(task.id), timeout=CLAIM_TIMEOUT)
            self.task_id = task.id
            self.taps.tell(self.route, SurfaceJoined(SEND_SURFACE, drives=False))
            async with trio.open_nursery() as beside:
                await beside.start(self._watch)
                # Its notices numbered from now on, attached or not: a terminal resumes.
                await beside.start(self.attach.run)
                await beside.start(self.hub.run)
                info = {"id": self.spec.session_id, "name": self.spec.name, "task": task.id}
                self.hub.adopt(self.spec.session_id, self.route, info)
                plugin = surface_plugin(SURFACE)
                self.url = await beside.start(
                    lambda task_status: plugin.serve(
                        self.hub, port=0, token=self._token, task_status=task_status
                    )
                )
                self.lock.publish(self.registration)
                self.ready = True
                logger.info("session %s ready (pid %d)", self.spec.session_id, os.getpid())
                await self._stop.wait()
                self.hub.stop()
                beside.cancel_scope.cancel()
            self.accepting = False
            self.ready = False
            logger.info("session %s stopping", self.spec.session_id)
            with trio.move_on_after(STOP_REPLY_GRACE):
                while self.server.connections:
                    await trio.sleep(0.01)
            self.supervisor.stop()
        self.desk.close()

    def stop(self) -> None:
        self.accepting = False
        self._stop.set()

    async def _continue(self, name: str, owner: Owner) -> Task:
        """The existing task ``name`` names, claimed by this session (taken over from an ended
        owner, or from the live host once it let the task go, never from another live
        session) and made its route's current one (module docstring); ``HandlerError`` saying
        why not."""
        from robota.core.store import task_owner  # noqa: PLC0415

        found = await self.desk.resolve(name, None)
        if workspace_of(Path(found.cwd)) != self.spec.workspace:
            raise HandlerError(
                "refused",
                f"task {found.id} works in {found.cwd}: start its session there (--cwd)",
            )
        row = await self.desk.reads.query(lambda db: task_owner(db, found.id))
        alive = row is not None and await trio.to_thread.run_sync(runs, row)
        decided = takeover(row, owner, owner_runs=alive)
        if isinstance(decided, HostHolds):
            # Its agent may hold the task's agent session (Codex lets one process write a
            # thread): let go first, or refused naming what runs.
            await ask_host_to_let_go(decided.row)
            row = await self.desk.reads.query(lambda db: task_owner(db, found.id))
            alive = row is not None and await trio.to_thread.run_sync(runs, row)
            decided = ownership(row, owner, owner_runs=alive)
        if isinstance(decided, Theirs):
            raise HandlerError("owned", f"task {found.id} is driven by {describe(decided.row)}")
        replaces = decided.row.generation if isinstance(decided, Gone) else None
        claimed = await self.engine.store.write(
            owner.claim(found.id, replaces), timeout=CLAIM_TIMEOUT
        )
        if not owner.is_(claimed):
            raise HandlerError("owned", f"task {found.id} is driven by {describe(claimed)}")
        return await self.desk.open_on(self.route, UseTask(found.id))

    @property
    def state(self) -> str:
        """needs-input (an approval waits), working (a turn runs), else idle: initialised, no
        question pending, not executing."""
        if self.pending:
            return "needs-input"
        if self.engine.context.running.snapshot():
            return "working"
        return "idle"

    async def _watch(
        self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED
    ) -> None:
        """Follow the route's questions, for ``state``."""
        async with self.taps.tap(self.route) as notices:
            task_status.started()
            async for notice in notices:
                if isinstance(notice, TurnUpdate):
                    event = notice.event
                    if isinstance(event, ApprovalRequested):
                        self.pending.add(event.approval_id)
                    elif isinstance(event, ApprovalResolved):
                        self.pending.discard(event.approval_id)
                elif isinstance(notice, TurnFinished):
                    self.pending.clear()

    def _hello(self) -> dict[str, object]:
        return {"id": self.registration.id, "name": self.registration.name, "task": self.task_id}

    # -- control requests ------------------------------------------------------------------------

    def _check(self, generation: str) -> str:
        """Refuse a request that names another process start; the session's task id."""
        if not hmac.compare_digest(generation.encode(), self.registration.generation.encode()):
            raise HandlerError(
                "stale_generation",
                "this request names another start of the session; list the sessions again",
                "generation",
            )
        if self.task_id is None or not self.ready:
            raise HandlerError("starting", "the session is not ready")
        return self.task_id

    async def _status(self, _request: SessionStatus) -> dict[str, object]:
        r = self.registration
        return {
            "id": r.id,
            "name": r.name,
            "state": self.state if self.ready else "unknown",
            "ready": self.ready,
            "agent": r.agent,
            "daemon": r.daemon,
            "restricted": r.restricted,
            "pid": r.pid,
        }

    async def _send(self, request: SessionSend) -> dict[str, object]:
        task_id = self._check(request.generation)
        return await self.desk.send(
            TaskSend(task=task_id, text=request.text, wait=request.wait, timeout=request.timeout)
        )

    async def _stop_request(self, request: SessionStop) -> dict[str, object]:
        self._check(request.generation)
        self.stop()
        return {"stopping": True, "pid": os.getpid()}

    async def _no_new_session(self, _key: str) -> dict[str, Any]:
        raise SurfaceProtocolError(
            "command.name: a background session serves its one session (no new, no switch)",
            "command.name",
        )

    async def _surface(self, request: SessionSurface) -> dict[str, object]:
        self._check(request.generation)
        return {"url": self.url}

    async def _rename(self, request: SessionRename) -> dict[str, object]:
        task_id = self._check(request.generation)
        name = " ".join(request.name.split())
        if not name:
            raise HandlerError("bad_request", "session.rename: 'name' is empty", "name")
        await self.desk.rename(TaskRename(task=task_id, title=name))
        self.registration = replace(self.registration, name=name)
        surfaced = self.hub.sessions.get(self.spec.session_id)
        if surfaced is not None:
            surfaced.info["name"] = name  # what the next WebSocket hello says
        await trio.to_thread.run_sync(self.lock.publish, self.registration)
        return {"id": self.registration.id, "name": name}
