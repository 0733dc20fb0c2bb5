"""The engine's trio loop in its own thread, and the inbox that brings its notices to the UI.

Why a thread and not trio guest mode: see the package docstring. The contract with the rest of
the TUI is three calls that never block the caller: ``tell`` (any thread; ``Engine.tell`` is an
actor tell, so it is called directly, and requests told before the engine runs are held and
sent first, in order), ``Inbox.put`` (the ``deliver`` the engine calls on actor threads) and
``stop`` (cancels the engine's run through the trio token and waits, bounded, for its shutdown,
agents included). ``recent_tasks`` and ``latest_task`` block on SQLite and are called from a
worker thread, never from the UI loop nor the trio loop (a blocking read there would stall
every route).
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Generic, Protocol, TypeVar, cast

import trio

from robota.core import RobotaError

if TYPE_CHECKING:
    from robota.core.engine import FrontEndRequest, RouteNotice, TaskDefaults
    from robota.core.store import Task, TurnAttempt

__all__ = ["EngineLike", "EngineStopped", "EngineThread", "Inbox"]

logger = logging.getLogger("robota.cli.tui")

T = TypeVar("T")


class EngineLike(Protocol):
    """What the TUI uses of ``robota.core.engine.Engine`` (a test double implements it too)."""

    @property
    def defaults(self) -> TaskDefaults:
        """The profile's settings for a new task (its working directory among them)."""

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Run the engine until cancelled."""

    def connect(self, route_key: str, deliver: Callable[[object], None]) -> None:
        """Send the route's notices to ``deliver`` (called on actor threads)."""

    def tell(self, route_key: str, request: FrontEndRequest) -> None:
        """What the person did, for the route to act on (thread-safe, never blocks)."""

    def recent_tasks(self, *, limit: int = ..., search: str | None = None) -> Sequence[Task]:
        """Tasks, most recently used first (blocks on SQLite)."""

    def latest_task(self, cwd: Path, agent: str | None = None) -> Task | None:
        """The most recently used task in ``cwd`` (blocks on SQLite)."""

    def task_history(self, task_id: str, *, limit: int = ...) -> Sequence[TurnAttempt]:
        """The task's last completed turns, oldest first (blocks on SQLite)."""


class EngineStopped(RobotaError, RuntimeError):
    """The engine is not running (it failed to start, crashed, or was stopped)."""


class Inbox(Generic[T]):
    """Items from any thread to one consumer, with one wake-up per burst.

    ``put`` appends and, unless a drain is already due, calls ``wake`` (which schedules
    ``drain`` on the consumer's loop). A streaming turn sends hundreds of text deltas a second;
    the consumer then repaints once per burst instead of once per delta.
    """

    def __init__(self) -> None:
        self._items: deque[T] = deque()
        self._lock = threading.Lock()
        self._due = False
        self._wake: Callable[[], object] | None = None
        self._closed = False

    def attach(self, wake: Callable[[], object]) -> None:
        """Start waking the consumer; items that arrived before are drained on the first wake."""
        with self._lock:
            self._wake = wake
            if not self._items or self._due:
                return
            self._due = True
        self._call(wake)

    def detach(self) -> None:
        """The consumer is gone: keep nothing, wake nobody."""
        with self._lock:
            self._wake = None
            self._closed = True
            self._items.clear()

    def put(self, item: T) -> None:
        with self._lock:
            if self._closed:
                return
            self._items.append(item)
            wake = self._wake
            if wake is None or self._due:
                return
            self._due = True
        self._call(wake)

    def drain(self) -> list[T]:
        with self._lock:
            self._due = False
            items = list(self._items)
            self._items.clear()
        return items

    def _call(self, wake: Callable[[], object]) -> None:
        try:
            wake()
        except RuntimeError:
            pass  # the consumer's loop closed: nobody is left to show the item to


class EngineThread:
    """Runs ``engine.run`` under ``trio.run`` in a daemon thread.

    ``on_stopped(error)`` is called on that thread once the run is over: ``error`` is ``None``
    after ``stop``, else what ended the run.
    """

    def __init__(
        self,
        engine: EngineLike,
        *,
        route_key: str,
        deliver: Callable[[RouteNotice], None],
        on_stopped: Callable[[BaseException | None], None],
    ) -> None:
        self.engine = engine
        self._route_key = route_key
        self._deliver = deliver
        self._on_stopped = on_stopped
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
            # Engine.tell is thread-safe (an actor tell): no hop through the trio loop. Under
            # the lock, so nothing told now overtakes the requests held before the start.
            self.engine.tell(self._route_key, request)

    def recent_tasks(
        self, *, limit: int = 50, search: str | None = None, timeout: float = 60
    ) -> list[Task]:
        """Blocking: call from a worker thread. Waits (bounded) for the engine to start."""
        self._wait_running(timeout)
        return list(self.engine.recent_tasks(limit=limit, search=search))

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
            self._on_stopped(self._error)

    async def _main(self) -> None:
        with trio.CancelScope() as scope:
            self._scope = scope
            with self._lock:
                self._token = trio.lowlevel.current_trio_token()
                if self._stopping:
                    scope.cancel()
            # Connected first: nothing the route says once running is lost.
            self.engine.connect(self._route_key, self._deliver_notice)
            async with trio.open_nursery() as nursery:
                await nursery.start(self.engine.run)
                with self._lock:
                    early, self._early = self._early or [], None
                    for request in early:
                        self.engine.tell(self._route_key, request)
                self._ready.set()
                await trio.sleep_forever()

    def _deliver_notice(self, notice: object) -> None:
        self._deliver(cast("RouteNotice", notice))

    def _cancel(self) -> None:
        if self._scope is not None:
            self._scope.cancel()


def _single(error: BaseException) -> BaseException:
    """The one error inside nested single-member groups (trio wraps nursery errors)."""
    while isinstance(error, BaseExceptionGroup) and len(error.exceptions) == 1:
        error = error.exceptions[0]
    return error
