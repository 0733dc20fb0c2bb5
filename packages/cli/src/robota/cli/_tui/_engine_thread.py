"""The engine's trio loop in its own thread.

Why a thread and not trio guest mode: see the package docstring. The route's notices reach the
UI through the front-end port's ``RouteLink`` (``robota.core.frontend``), subscribed before the
thread starts; this thread ends the link when the engine's run ends, with what ended it. The
contract with the rest of the TUI is two calls that never block the caller: ``tell`` (any
thread; ``RouteLink.send`` is an actor tell, so it is called directly, and requests told before
the engine runs are held and sent first, in order) and ``stop`` (cancels the engine's run
through the trio token and waits, bounded, for its shutdown, agents included).
``recent_tasks``, ``find_tasks``, ``latest_task``, ``task_history``, ``take_task`` (which
runs its claim on the engine's loop), ``task_mobility``, ``let_go`` and ``device_name`` block
and are called from a worker thread, never from the UI loop nor the trio loop (a blocking read
there would stall every route).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import trio

from robota.core import RobotaError

if TYPE_CHECKING:
    from robota.core.engine import FrontEndRequest, TaskDefaults
    from robota.core.frontend import RouteLink
    from robota.core.store import Task, TaskMobility, TurnAttempt

__all__ = ["EngineLike", "EngineStopped", "EngineThread"]

logger = logging.getLogger("robota.cli.tui")


class EngineLike(Protocol):
    """What the TUI uses of ``robota.core.engine.Engine`` (a test double implements it too)."""

    @property
    def defaults(self) -> TaskDefaults:
        """The profile's settings for a new task (its working directory among them)."""

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Run the engine until cancelled."""

    def connect(self, route_key: str, deliver: Callable[[object], None]) -> None:
        """Send the route's notices to ``deliver`` (called on actor threads)."""

    def disconnect(self, route_key: str) -> None:
        """Stop sending the route's notices anywhere."""

    def tell(self, route_key: str, request: FrontEndRequest) -> None:
        """What the person did, for the route to act on (thread-safe, never blocks)."""

    def recent_tasks(self, *, limit: int = ..., search: str | None = None) -> Sequence[Task]:
        """Tasks, most recently used first (blocks on SQLite)."""

    def find_tasks(self, wanted: str) -> Sequence[Task]:
        """The tasks ``wanted`` may name, for ``resolve_task`` (blocks on SQLite)."""

    def latest_task(self, cwd: Path, agent: str | None = None) -> Task | None:
        """The most recently used task in ``cwd`` (blocks on SQLite)."""

    def task_history(self, task_id: str, *, limit: int = ...) -> Sequence[TurnAttempt]:
        """The task's last completed turns, oldest first (blocks on SQLite)."""


class EngineStopped(RobotaError, RuntimeError):
    """The engine is not running (it failed to start, crashed, or was stopped)."""


class EngineThread:
    """Runs ``engine.run`` under ``trio.run`` in a daemon thread.

    ``link`` is the route's subscription (``FrontEndPort(engine).subscribe(route_key)``): the
    requests go to its route, and it is ended on that thread once the run is over, with
    ``None`` after ``stop``, else with what ended the run.
    """

    def __init__(
        self,
        engine: EngineLike,
        *,
        link: RouteLink,
        takes: Callable[[str], Awaitable[str | None]] | None = None,
        moves: Callable[[str], TaskMobility | None] | None = None,
        lets_go: Callable[[str], object] | None = None,
        names: Callable[[str], str | None] | None = None,
    ) -> None:
        self.engine = engine
        self._takes = takes
        """Claims a task for this terminal, or says why not (``robota.host.terminal_takes``),
        on the engine's loop; ``None``: an engine with no store of owners (a test double)."""
        self._moves = moves
        """Whether a task moves to, or moved to, another device (``store.task_mobility``), a
        blocking read; ``None``: an engine with no store of handoffs (a test double)."""
        self._lets_go = lets_go
        """This terminal no longer owns a task (``robota.host.terminal_lets_go``), a blocking
        write; ``None`` with ``takes``."""
        self._names = names
        """A device's name in the profile's mesh roster, a blocking read; ``None``: none."""
        self._link = link
        self._lock = threading.Lock()
        self._token: trio.lowlevel.TrioToken | None = None
        self._early: list[FrontEndRequest] | None = []
        """Told before the engine ran; ``None`` once it runs (told directly from then on)."""
        self._scope: trio.CancelScope | None = None
        self._stopping = False
        self._ready = threading.Event()
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._thread_main, name="robota-engine", daemon=True)

    # -- any thread -----------------------------------------------------------------------------

    def start(self) -> None:
        self._thread.start()

    def tell(self, request: FrontEndRequest) -> None:
        """Send ``request`` to the route; never blocks. Held until the engine runs, dropped
        once it stops."""
        with self._lock:
            if self._stopping:
                return
            if self._early is not None:
                self._early.append(request)
                return
            # An actor tell, thread-safe: no hop through the trio loop. Under the lock, so
            # nothing told now overtakes the requests held before the start.
            self._link.send(request)

    def recent_tasks(
        self, *, limit: int = 50, search: str | None = None, timeout: float = 60
    ) -> list[Task]:
        """Blocking: call from a worker thread. Waits (bounded) for the engine to start."""
        self._wait_running(timeout)
        return list(self.engine.recent_tasks(limit=limit, search=search))

    def find_tasks(self, wanted: str, timeout: float = 60) -> list[Task]:
        """Blocking, like ``recent_tasks``: the tasks ``wanted`` may name."""
        self._wait_running(timeout)
        return list(self.engine.find_tasks(wanted))

    def latest_task(
        self, cwd: Path | None, agent: str | None = None, timeout: float = 60
    ) -> Task | None:
        """Blocking, like ``recent_tasks``; ``cwd`` ``None`` is the profile's directory."""
        self._wait_running(timeout)
        return self.engine.latest_task((cwd or self.engine.defaults.cwd).resolve(), agent)

    def task_history(
        self, task_id: str, *, limit: int = 10, timeout: float = 60
    ) -> list[TurnAttempt]:
        """Blocking, like ``recent_tasks``: the task's last completed turns, oldest first."""
        self._wait_running(timeout)
        return list(self.engine.task_history(task_id, limit=limit))

    def take_task(self, task_id: str, timeout: float = 60) -> str | None:
        """Blocking, like ``recent_tasks``: this terminal owns ``task_id`` from now on
        (``None``), or why it may not."""
        if self._takes is None:
            return None
        self._wait_running(timeout)
        with self._lock:
            token = self._token
        if token is None:
            raise EngineStopped("the engine is not running")
        try:
            return trio.from_thread.run(self._takes, task_id, trio_token=token)
        except trio.RunFinishedError:
            raise EngineStopped("the engine is not running") from None
        except (OSError, RobotaError) as error:  # the store did not record the claim
            raise EngineStopped(f"task {task_id} could not be claimed: {error}") from error

    def task_mobility(self, task_id: str, timeout: float = 60) -> TaskMobility | None:
        """Blocking, like ``recent_tasks``: whether ``task_id`` moves to or moved to another
        device (a handoff), ``None`` when it is this device's like any task."""
        if self._moves is None:
            return None
        self._wait_running(timeout)
        return self._moves(task_id)

    def let_go(self, task_id: str, timeout: float = 60) -> None:
        """Blocking, like ``recent_tasks``: this terminal no longer owns ``task_id``."""
        if self._lets_go is None:
            return
        self._wait_running(timeout)
        try:
            self._lets_go(task_id)
        except (OSError, RobotaError) as error:  # the store did not record it: said, not fatal
            logger.warning("task %s: the terminal could not let it go: %s", task_id, error)

    def device_name(self, device: str, timeout: float = 60) -> str | None:
        """Blocking, like ``recent_tasks``: ``device``'s name in the mesh roster, if any."""
        if self._names is None:
            return None
        self._wait_running(timeout)
        return self._names(device)

    def stop(self, timeout: float = 20) -> bool:
        """Cancel the engine's run and wait for it to end; ``False`` if it outlived ``timeout``."""
        with self._lock:
            self._stopping = True
            token = self._token
        if token is not None:
            try:
                token.run_sync_soon(self._cancel)
            except trio.RunFinishedError:
                pass  # already over
        if self._thread.ident is None or not self._thread.is_alive():
            return True
        self._thread.join(timeout)
        return not self._thread.is_alive()

    @property
    def default_agent(self) -> str:
        return self.engine.defaults.agent

    @property
    def error(self) -> BaseException | None:
        return self._error

    def _wait_running(self, timeout: float) -> None:
        if not self._ready.wait(timeout) or self._error is not None or self._stopping:
            if self._error is not None:
                raise EngineStopped(f"the engine stopped: {self._error}")
            raise EngineStopped("the engine is not running")

    # -- the trio thread ------------------------------------------------------------------------

    def _thread_main(self) -> None:
        try:
            trio.run(self._main)
        except BaseException as error:  # reported to the UI, which exits with it
            self._error = _single(error)
            logger.exception("the engine stopped", exc_info=self._error)
        finally:
            with self._lock:
                self._token = None
                self._stopping = True
            self._ready.set()  # wakes the blocking readers, which then see it is not running
            self._link.end(self._error)

    async def _main(self) -> None:
        with trio.CancelScope() as scope:
            self._scope = scope
            with self._lock:
                self._token = trio.lowlevel.current_trio_token()
                if self._stopping:
                    scope.cancel()
            async with trio.open_nursery() as nursery:
                await nursery.start(self.engine.run)
                with self._lock:
                    early, self._early = self._early or [], None
                    for request in early:
                        self._link.send(request)
                self._ready.set()
                await trio.sleep_forever()

    def _cancel(self) -> None:
        if self._scope is not None:
            self._scope.cancel()


def _single(error: BaseException) -> BaseException:
    """The one error inside nested single-member groups (trio wraps nursery errors)."""
    while isinstance(error, BaseExceptionGroup) and len(error.exceptions) == 1:
        error = error.exceptions[0]
    return error
