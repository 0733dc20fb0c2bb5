"""Print mode's turns run by a warm host: ``print.run`` on the control endpoint.

``robota -p`` with the profile's host running hands its conversation to the host instead of
starting an agent of its own (``robota.cli._print_host``): the agent is already up, so a
one-shot turn pays for no agent start. A workspace's daemon (``_session``) serves the same
request for print mode run in its workspace. The request carries print mode's options; the host

1. applies print mode's trust rule to the directory (``headless_workspace``, mode ``print``):
   an untrusted workspace without ``restricted`` is refused (``refused``, print mode's exit 2
   and message), and where the host's engine would not run the turn as the terminal's own
   engine would (``print_placement``: a ``--restricted`` run in a trusted workspace, or one
   whose project settings apply) it answers ``local`` and print mode runs in-process; so it
   does for a task taken up as it is (``-c``, ``-r``; a fork runs here), whose agent session
   may still be open on the host route that ran it last;
2. chooses the task as print mode does (``choose_print_task``, shared with the in-process
   run: a new task by default, ``-c`` the latest in the directory, ``-r`` by id or title,
   ``--fork-session``), a wrong choice refused as ``usage`` (exit 2);
3. answers with a ``hello`` frame (the agent, whether input waits for the task to open), then
   streams the route's notices as the attach carrier's ``notice`` frames
   (``robota.core.protocol``), and reads the terminal's ``submit`` and ``abort`` frames.

The route is ``print:<hex>``, which the host never adopts nor recovers (``_routing``), and
whose approvals the unattended policy decides, as in-process print mode's are. When the
terminal goes away (its connection closes: the run is over, or it was killed) the host
interrupts whatever the route still runs, so a killed ``robota -p`` never leaves a turn
running in the host; the host itself goes on.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

import trio

from robota.core import ConfigError
from robota.core.agents import PERMISSION_MODES
from robota.core.control import HandlerError
from robota.core.engine import Interrupt, TaskOpened, UseTask
from robota.core.frontend import FrontEndPort
from robota.core.protocol import (
    encode_frame,
    notice_to_json,
)

from ._attach import surface_requests
from ._print_choice import (
    PRINT_KIND,
    PrintTask,
    TaskChoice,
    choose_print_task,
    print_placement,
)
from ._trust import Workspace, WorkspaceRefused, workspace_config

if TYPE_CHECKING:
    from robota.core.config import Config, Profile
    from robota.core.engine import Engine

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


class PrintDesk:
    """Serves ``print.run`` (trio thread only)."""

    def __init__(
        self,
        engine: Engine,
        config: Config,
        profile: Profile,
        accepting: Callable[[], bool],
        *,
        engine_config: Config | None = None,
        forced: bool = False,
    ) -> None:
        """``config``: the profile's, which print mode's own start reads; ``engine_config``:
        what ``engine`` was built from (a daemon's: with its workspace's settings; ``None``:
        ``config``); ``forced``: the engine runs every directory Restricted (a daemon started
        ``--restricted``)."""
        self.engine = engine
        self.config = config
        self.engine_config = engine_config if engine_config is not None else config
        self.forced = forced
        self.profile = profile
        self.port = FrontEndPort(engine)
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
        choice = await self._choose(request)
        route = f"{PRINT_KIND}:{uuid.uuid4().hex[:12]}"
        link = self.port.subscribe(route)  # before the task is asked for: nothing is missed
        sending = trio.Lock()  # the notices and a protocol error share the stream

        async def send(lines: bytes) -> None:
            async with sending:
                await stream.send_all(lines)

        try:
            if choice.request is not None:
                link.send(choice.request)
            hello = {"type": "hello", "agent": choice.agent, "await_task": choice.await_task}
            await send(encode_frame(hello))
            async with trio.open_nursery() as nursery:

                async def forward() -> None:
                    async for batch in link:
                        for notice in batch:
                            if isinstance(notice, TaskOpened):
                                logger.info("print.run: task %s on %s", notice.task_id, route)
                        frames = [{"type": "notice", "notice": notice_to_json(n)} for n in batch]
                        await send(b"".join(encode_frame(frame) for frame in frames))
                    nursery.cancel_scope.cancel()

                async def read() -> None:
                    await self._read(stream, route, send)
                    nursery.cancel_scope.cancel()

                nursery.start_soon(forward)
                nursery.start_soon(read)
        except* (trio.BrokenResourceError, trio.ClosedResourceError):
            pass  # the terminal went away
        finally:
            # Whatever the route still runs is nobody's once its terminal is gone.
            self.port.tell(route, Interrupt())
            link.close()

    async def _choose(self, request: PrintTurns) -> TaskChoice:
        """The trust rule, then the task, as print mode's own start has them; ``HandlerError``
        when print mode stops there (``refused``, ``usage``) or runs in its own process
        (``local``)."""
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
        self._place(request, workspace, uses_task=isinstance(choice.request, UseTask))
        return choice

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
        route: str,
        send: Callable[[bytes], Awaitable[None]],
    ) -> None:
        async for request in surface_requests(stream):
            if isinstance(request, dict):
                await send(encode_frame(request))  # a protocol error
            else:
                self.port.tell(route, request)
