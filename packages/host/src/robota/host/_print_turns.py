"""Print mode's turns run by a warm host: ``print.run`` on the control endpoint.

``robota -p`` with the profile's host running hands its conversation to the host instead of
starting an agent of its own (``robota.cli._print_host``): the agent is already up, so a
one-shot turn pays for no agent start. A workspace's daemon (``_session``) serves the same
request for print mode run in its workspace. The request carries print mode's options; the host

1. applies print mode's trust rule to the directory (``headless_workspace``, mode ``print``):
   an untrusted workspace without ``restricted`` is refused (``refused``, print mode's exit 2
   and message), and where the host's engine would not run the turn as the terminal's own
   engine would (``print_placement``: a ``--restricted`` run in a trusted workspace, or one
   whose project settings apply) it answers ``local`` and print mode runs in-process;
2. chooses the task as print mode does (``choose_print_task``, shared with the in-process
   run: a new task by default, ``-c`` the latest in the directory, ``-r`` by id or title,
   ``--fork-session``), a wrong choice refused as ``usage`` (exit 2);
3. answers with a ``hello`` frame (the agent, whether input waits for the task to open), then
   streams the route's notices as the attach carrier's ``notice`` frames
   (``robota.core.protocol``), and reads the terminal's ``submit`` and ``abort`` frames.

A new task or a fork runs on a route of its own, ``print:<hex>``, which the host never adopts
nor recovers (``_routing``), whose approvals the unattended policy decides, as in-process print
mode's are, and whose task the host claims (``_owners``) once it opened. A task taken up as it
is (``-c``, ``-r`` without ``--fork-session``) keeps its one agent session, so its turn runs on
the route that holds it (``_routing.route_for_task``, as ``task send`` finds it): the route
of this host it is current on (a print run's, its ``cli`` route, a chat's), told nothing but
the prompt (the terminal hears the task
opened from the store's row, and not again if the route reopens the session), or when none
is, the task's ``cli`` route, bound to it (``UseTask``) so the session opens there. The host
owns the task first (``TaskOwners.take``): one another live process owns (a background
session, the daemon) is refused as ``owned`` naming it, and the terminal asks the workspace's
daemon, else says so (exit 1). A daemon runs so only the tasks its own routes hold; any other
it leaves to print mode's own process (``local``), which refuses a task a live process owns.

Every request goes through the host's route taps (``RouteTaps``), which count the inputs each
route was sent: on a route others use too, the route's idle notices are told to the terminal
as counts of its own inputs, which is what print mode waits on. When the terminal goes away
(its connection closes: the run is over, or it was killed) the host interrupts what the route
still runs of the terminal's input (on a route of its own, whatever it runs), so a killed
``robota -p`` never leaves a turn running in the host; the host itself goes on.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

import trio

from robota.core import ConfigError
from robota.core.agents import PERMISSION_MODES
from robota.core.control import HandlerError
from robota.core.engine import (
    Interrupt,
    RouteIdle,
    RouteNotice,
    TaskOpened,
    UserInput,
    UseTask,
)
from robota.core.protocol import (
    encode_frame,
    notice_to_json,
)

from ._attach import surface_requests
from ._print_choice import (
    PrintTask,
    TaskChoice,
    choose_print_task,
    print_placement,
)
from ._reads import routes_of
from ._routing import route_for_task, serves
from ._trust import Workspace, WorkspaceRefused, workspace_config

if TYPE_CHECKING:
    from robota.core.config import Config, Profile
    from robota.core.engine import Engine
    from robota.core.store import Task

    from ._desk import TaskDesk

__all__ = ["PrintDesk", "PrintTurns"]

logger = logging.getLogger("robota.host.print")


@dataclass(frozen=True, slots=True, kw_only=True)
class PrintTurns:
    """Run print mode's conversation on this host (the module docstring). ``cwd`` is absolute
    (the terminal resolves a relative ``--cwd``); none: the profile's default directory."""

    TYPE: ClassVar[str] = "print.run"
    cwd: str | None = None
    agent: str | None = None
    model: str | None = None
    permission_mode: str | None = None
    name: str | None = None
    append_system_prompt: str | None = None
    continue_: bool = False
    resume: str | None = None
    fork: bool = False
    restricted: bool = False


@dataclass(slots=True)
class _Run:
    """One ``print.run``: its route and what the terminal was told and sent there."""

    choice: TaskChoice
    route: str
    own: bool
    """The route is this run's alone (a new task's, a fork's): nobody else's input reaches it."""
    held: Task | None = None
    """The task a route of this host holds already: the terminal hears it opened from its row."""
    sent: list[int] = field(default_factory=list)
    """The route's input count (``RouteTaps.tell``) at each of the terminal's inputs."""
    answered: int = 0
    """How many of them the route went idle after."""


def own_inputs(sent: list[int], route_inputs: int) -> int:
    """How many of the terminal's inputs (the route's counts when each was sent, ``sent``) a
    route idle after ``route_inputs`` inputs has answered."""
    return sum(1 for count in sent if count <= route_inputs)


class PrintDesk:
    """Serves ``print.run`` (trio thread only)."""

    def __init__(
        self,
        engine: Engine,
        config: Config,
        profile: Profile,
        accepting: Callable[[], bool],
        desk: TaskDesk,
        *,
        engine_config: Config | None = None,
        forced: bool = False,
    ) -> None:
        """``config``: the profile's, which print mode's own start reads; ``engine_config``:
        what ``engine`` was built from (a daemon's: with its workspace's settings; ``None``:
        ``config``); ``forced``: the engine runs every directory Restricted (a daemon started
        ``--restricted``); ``desk``: the process's task desk, whose route taps, reads, served
        kinds and task owners (the host's) a run shares."""
        self.engine = engine
        self.config = config
        self.engine_config = engine_config if engine_config is not None else config
        self.forced = forced
        self.profile = profile
        self.desk = desk
        self.taps = desk.taps
        self._accepting = accepting

    def _workspace(self, request: PrintTurns, cwd: Path) -> Workspace | None:
        """``cwd``'s workspace as print mode's start sees it; ``None`` when print mode must say
        itself what is wrong (no such directory, invalid project settings)."""
        if not cwd.is_dir():
            return None
        try:
            return workspace_config(self.config, self.profile, cwd, restricted=request.restricted)
        except ConfigError:
            return None

    async def run(self, request: PrintTurns, stream: trio.SocketStream) -> None:
        run = await self._choose(request)
        route = run.route
        sending = trio.Lock()  # the notices and a protocol error share the stream

        async def send(lines: bytes) -> None:
            async with sending:
                await stream.send_all(lines)

        # The tap opens before the route is told anything: nothing it answers is missed.
        async with self.taps.tap(route) as notices:
            try:
                if run.choice.request is not None:
                    self.taps.tell(route, run.choice.request)
                choice = run.choice
                hello = {"type": "hello", "agent": choice.agent, "await_task": choice.await_task}
                first = [encode_frame(hello)]
                if run.held is not None:
                    first.append(_frame(self._opened(run, run.held)))
                await send(b"".join(first))
                async with trio.open_nursery() as nursery:

                    async def forward() -> None:
                        await self._forward(run, notices, send, nursery)
                        nursery.cancel_scope.cancel()

                    async def read() -> None:
                        await self._read(stream, run, send)
                        nursery.cancel_scope.cancel()

                    nursery.start_soon(forward)
                    nursery.start_soon(read)
            except* (trio.BrokenResourceError, trio.ClosedResourceError):
                pass  # the terminal went away
            finally:
                # What the route still runs of the terminal's input is nobody's once it is gone.
                if run.own or run.answered < len(run.sent):
                    self.taps.tell(route, Interrupt())

    async def _forward(
        self,
        run: _Run,
        notices: trio.MemoryReceiveChannel[RouteNotice],
        send: Callable[[bytes], Awaitable[None]],
        nursery: trio.Nursery,
    ) -> None:
        """The route's notices to the terminal as ``notice`` frames, what arrived together in
        one write."""
        async for notice in notices:
            batch = [notice]
            while True:
                try:
                    batch.append(notices.receive_nowait())
                except (trio.WouldBlock, trio.EndOfChannel):
                    break
            told = [n for n in (self._told(run, n, nursery) for n in batch) if n is not None]
            if told:
                await send(b"".join(_frame(n) for n in told))

    def _told(self, run: _Run, notice: RouteNotice, nursery: trio.Nursery) -> RouteNotice | None:
        """``notice`` as the terminal hears it, or ``None``: it is not the terminal's."""
        if run.held is not None:
            if not run.sent:
                return None  # the route's before the terminal's first input
            if isinstance(notice, TaskOpened) and notice.task_id == run.held.id:
                return None  # the route reopened the session: the terminal heard it opened
        if isinstance(notice, RouteIdle) and not run.own:
            run.answered = max(run.answered, own_inputs(run.sent, notice.inputs))
            return RouteIdle(notice.route_key, run.answered)
        if isinstance(notice, RouteIdle):
            run.answered = max(run.answered, notice.inputs)
        if isinstance(notice, TaskOpened) and run.own:
            logger.info("print.run: task %s on %s", notice.task_id, run.route)
            nursery.start_soon(self._claim, notice.task_id)  # a new task is this host's
        elif isinstance(notice, TaskOpened):
            logger.info("print.run: resumed task %s on %s", notice.task_id, run.route)
        return notice

    async def _claim(self, task_id: str) -> None:
        """Own the task a run made (the host's; a daemon's runs claim none)."""
        owners = self.desk.owners
        if owners is None:
            return
        try:
            await owners.take(task_id)
        except Exception:  # the run goes on; the task is only unclaimed
            logger.warning("print.run: task %s could not be claimed", task_id, exc_info=True)

    def _opened(self, run: _Run, task: Task) -> TaskOpened:
        """The held task as the terminal hears it opened: its session is open already."""
        logger.info("print.run: resumed task %s on %s", task.id, run.route)
        return TaskOpened(
            run.route,
            task.id,
            task.agent,
            task.cwd,
            task.remote_id or "",
            resumed=True,
            forked_from=task.forked_from,
            agent_version=self.engine.agent_version(task.agent),
        )

    async def _choose(self, request: PrintTurns) -> _Run:
        """The trust rule, then the task and its route, as print mode's own start has them;
        ``HandlerError`` when print mode stops there (``refused``, ``usage``, ``owned``) or
        runs in its own process (``local``)."""
        if not self._accepting():
            raise HandlerError("stopping", "the host is stopping")
        cwd = Path(request.cwd) if request.cwd is not None else None
        if cwd is not None and not cwd.is_absolute():
            raise HandlerError("bad_request", "print.run: 'cwd' is an absolute path", "cwd")
        workspace = self._workspace(request, (cwd or self.engine.defaults.cwd).resolve())
        if workspace is None:
            raise HandlerError("local", "print mode reports this directory's problem itself")
        permission_mode = next((m for m in PERMISSION_MODES if m == request.permission_mode), None)
        if permission_mode is None and request.permission_mode is not None:
            message = f"print.run: 'permission_mode' is one of {', '.join(PERMISSION_MODES)}"
            raise HandlerError("bad_request", message, "permission_mode")
        self._place(request, workspace, uses_task=False)
        task = PrintTask(
            agent=request.agent,
            cwd=cwd,
            model=request.model,
            permission_mode=permission_mode,
            name=request.name,
            append_system_prompt=request.append_system_prompt,
            continue_=request.continue_,
            resume=request.resume,
            fork=request.fork,
        )
        choice = await choose_print_task(self.engine, task)
        if isinstance(choice, str):
            raise HandlerError("usage", choice)
        if not isinstance(choice.request, UseTask):
            # Its task's session is held there; the desk tells the route its own by its key.
            route = self.desk.print_routes.new_route()
            return _Run(choice, route, own=True)
        return await self._taken_up(request, workspace, choice, choice.request.task_id)

    async def _taken_up(
        self, request: PrintTurns, workspace: Workspace, choice: TaskChoice, task_id: str
    ) -> _Run:
        """A task taken up as it is: on the route of this host that holds it, else on its
        ``cli`` route, once the host owns it (the module docstring)."""
        owners = self.desk.owners
        if owners is not None and (owner := await owners.take(task_id)) is not None:
            raise owners.refuse(owner, "print mode's turn")
        task = await self.desk.read_task(task_id)
        current_on = await self.desk.reads.query(lambda db: routes_of(db, task_id))
        desk = self.desk
        route = route_for_task(task_id, current_on, desk.kinds, desk.print_routes)
        if route.bind and not serves(desk.kinds, route.route_key):
            self._place(request, workspace, uses_task=True)  # a daemon: not its task
        if route.bind or task.remote_id is None:
            # Bound there now (or its session never opened): the route opens it and says so.
            return _Run(choice, route.route_key, own=False)
        held = TaskChoice(None, choice.agent, await_task=True)
        return _Run(held, route.route_key, own=False, held=task)

    def _place(self, request: PrintTurns, workspace: Workspace, *, uses_task: bool) -> None:
        where = print_placement(
            untrusted=workspace.decision.restricted,
            restricted=request.restricted,
            project_applies=workspace.config != self.engine_config,
            uses_task=uses_task,
            forced=self.forced,
        )
        if where == "refused":
            raise HandlerError("refused", str(WorkspaceRefused(workspace.decision, "print")))
        if where == "local":
            raise HandlerError("local", "print mode runs this in its own process")

    async def _read(
        self,
        stream: trio.SocketStream,
        run: _Run,
        send: Callable[[bytes], Awaitable[None]],
    ) -> None:
        async for request in surface_requests(stream):
            if isinstance(request, dict):
                await send(encode_frame(request))  # a protocol error
            elif isinstance(request, UserInput):
                run.sent.append(self.taps.tell(run.route, request))
            else:
                self.taps.tell(run.route, request)


def _frame(notice: RouteNotice) -> bytes:
    return encode_frame({"type": "notice", "notice": notice_to_json(notice)})
