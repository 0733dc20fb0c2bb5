"""Supervisors: trio tasks that start children, watch them and restart them (OTP semantics).

A supervisor owns an ordered list of ``ChildSpec``. Children start in order and stop in reverse.
A child is either an ``Actor`` (a thread; callers reach it through its stable ``Address``) or a
``Service`` (an async ``run`` on the trio loop, such as a socket reader or a nested supervisor).

When a child exits, its restart type decides whether anything happens: ``permanent`` children are
always restarted, ``transient`` ones only after a crash, ``temporary`` ones never. The strategy
decides who goes with it: ``one_for_one`` restarts the child alone, ``one_for_all`` stops and
restarts every child, ``rest_for_one`` the child and those started after it.

Restart n of a child waits ``min(cap, base * 2^(n-1))`` (1 s, 2 s, 4 s ... 30 s by default); the
count starts again once the child has run ``reset_after`` seconds. More than ``intensity`` crashes
within ``period`` seconds stop every child and raise ``SupervisorFailed`` to the parent.

Exit reports carry the incarnation number they belong to, so a report that arrives after its
child was restarted, stopped or abandoned is recognised as late and ignored.
"""

from __future__ import annotations

import enum
import logging
import math
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import pykka
import trio

from .._errors import SupervisorFailed
from ._actor import Actor, Binding, Crashed, ExitReason, Stopped, launch
from ._address import Address, DeadLetters
from ._bridge import LoopPort

__all__ = [
    "Backoff",
    "ChildSpec",
    "Restart",
    "Service",
    "Strategy",
    "Supervisor",
]

logger = logging.getLogger("robota.core.kernel")


class Restart(enum.Enum):
    PERMANENT = "permanent"
    """Always restarted."""
    TRANSIENT = "transient"
    """Restarted only after a crash; a normal stop is final."""
    TEMPORARY = "temporary"
    """Never restarted, not even when a sibling's crash takes it down."""


class Strategy(enum.Enum):
    ONE_FOR_ONE = "one_for_one"
    ONE_FOR_ALL = "one_for_all"
    REST_FOR_ONE = "rest_for_one"


@runtime_checkable
class Service(Protocol):
    """A child that lives on the trio loop. Returning is a normal stop, raising is a crash."""

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Run until done or cancelled."""


@dataclass(frozen=True, slots=True)
class ChildSpec:
    """How to start one child and what to do when it exits."""

    id: str
    factory: Callable[[], Actor | Service]
    restart: Restart = Restart.PERMANENT
    shutdown: float = 5.0
    """Seconds a stopping child may take before it is abandoned (and logged)."""
    start_timeout: float = 30.0
    """Seconds the supervisor waits for a child to finish starting before it starts the next
    one anyway (and logs it); a child that is slow to start must not hold its siblings."""
    stash_limit: int = 1000
    """Messages the child's address keeps while the child is down."""


@dataclass(frozen=True, slots=True)
class Backoff:
    """Delay before restart n: ``min(cap, base * 2^(n-1))``; n resets after healthy running."""

    base: float = 1.0
    cap: float = 30.0
    reset_after: float = 30.0

    def delay(self, restart: int) -> float:
        if restart <= 0:
            return 0.0
        return float(min(self.cap, self.base * 2 ** (restart - 1)))


class _State(enum.Enum):
    IDLE = "idle"
    RUNNING = "running"
    STOPPING = "stopping"
    DOWN = "down"
    CLOSED = "closed"


class _Cell:
    """A child's slot: its spec, its address and the state of its current incarnation."""

    def __init__(self, spec: ChildSpec, index: int, dead_letters: DeadLetters) -> None:
        self.spec = spec
        self.index = index
        self.address = Address(spec.id, stash_limit=spec.stash_limit, dead_letters=dead_letters)
        self.incarnation = 0
        self.state = _State.IDLE
        self.actor: Actor | None = None
        self.scope: trio.CancelScope | None = None
        self.exited = trio.Event()
        self.ready = trio.Event()
        self.started_at = 0.0
        self.restarts = 0


_Report = tuple[str, int, ExitReason]


class Supervisor:
    """A supervision node. Run it with ``await supervisor.run()`` (it is itself a ``Service``,
    so it can be the child of another supervisor). It may run again after ``run`` returned or
    raised: a parent's factory can hand back the same supervisor, and the children's addresses
    outlive the restart."""

    def __init__(
        self,
        name: str,
        children: Sequence[ChildSpec],
        *,
        strategy: Strategy = Strategy.ONE_FOR_ONE,
        intensity: int = 5,
        period: float = 60.0,
        backoff: Backoff | None = None,
        dead_letters: DeadLetters | None = None,
    ) -> None:
        ids = [spec.id for spec in children]
        duplicates = sorted({i for i in ids if ids.count(i) > 1})
        if duplicates:
            raise ValueError(f"supervisor {name!r}: duplicate child ids {duplicates}")
        if intensity < 0 or period <= 0:
            raise ValueError("intensity must be >= 0 and period > 0")
        self.name = name
        self.strategy = strategy
        self.intensity = intensity
        self.period = period
        self.backoff = backoff if backoff is not None else Backoff()
        self.dead_letters = dead_letters if dead_letters is not None else DeadLetters()
        self._cells = [_Cell(spec, i, self.dead_letters) for i, spec in enumerate(children)]
        self._by_id = {cell.spec.id: cell for cell in self._cells}
        self._failures: deque[float] = deque()
        self._stopping = False
        self._running = False
        self._nursery: trio.Nursery | None = None
        self._exit_send: trio.MemorySendChannel[_Report] | None = None
        self._port: LoopPort | None = None
        self._lock = trio.Lock()
        self._main_scope = trio.CancelScope()

    def __repr__(self) -> str:
        return f"<Supervisor {self.name!r} {self.strategy.value} children={len(self._cells)}>"

    # -- public surface ------------------------------------------------------------------------

    def address(self, child_id: str) -> Address:
        """The stable address of an actor child (valid before, during and after ``run``)."""
        return self._by_id[child_id].address

    @property
    def child_ids(self) -> list[str]:
        return [cell.spec.id for cell in self._cells]

    def incarnation(self, child_id: str) -> int:
        """How many times the child has been started (1 after the first start)."""
        return self._by_id[child_id].incarnation

    def is_running(self, child_id: str) -> bool:
        return self._by_id[child_id].state is _State.RUNNING

    def stop(self) -> None:
        """Stop the children in reverse order and make the current ``run`` return. Between
        runs it does nothing: a late stop must not end the next run before it starts. Trio
        thread only."""
        if self._running:
            self._main_scope.cancel()

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Start the children in order, then supervise them until stopped or failed."""
        self._running = True
        try:
            await self._supervise(task_status)
        finally:
            # However it ended (stopped, failed, cancelled from outside): ready for another
            # run, and a late ``stop`` no longer applies.
            self._running = False
            self._rearm()

    async def _supervise(self, task_status: trio.TaskStatus[None]) -> None:
        self._port = LoopPort()
        send, receive = trio.open_memory_channel[_Report](math.inf)
        self._exit_send = send
        failure: SupervisorFailed | None = None
        async with trio.open_nursery() as nursery:
            self._nursery = nursery
            try:
                with self._main_scope:
                    async with self._lock:
                        for cell in self._cells:
                            await self._start(cell)
                    task_status.started()
                    async for report in receive:
                        await self._on_exit(report)
                        # The report holds the error, its traceback and so the dead actor:
                        # keeping it until the next exit would keep that incarnation alive.
                        del report
            except SupervisorFailed as error:
                failure = error
            finally:
                # Shielded, and service children run in shielded scopes of their own: however
                # this task is cancelled, children stop one by one in reverse order.
                with trio.CancelScope(shield=True):
                    await self._shutdown()
                send.close()
                nursery.cancel_scope.cancel()
        if failure is not None:
            raise failure

    def _rearm(self) -> None:
        """Ready for another ``run``: a parent that restarts this supervisor reuses it, so the
        addresses of its children (held by callers) stay valid across the restart."""
        self._main_scope = trio.CancelScope()
        self._stopping = False
        self._failures.clear()
        for cell in self._cells:
            cell.restarts = 0

    # -- starting and stopping -----------------------------------------------------------------

    async def _start(self, cell: _Cell) -> None:
        """Start one incarnation and wait until it finished starting (or exited trying)."""
        cell.incarnation += 1
        incarnation = cell.incarnation
        cell.exited = trio.Event()
        cell.ready = trio.Event()
        cell.started_at = trio.current_time()
        cell.state = _State.RUNNING
        cell.actor = None
        cell.scope = None
        cell.address._reopen()
        try:
            child = cell.spec.factory()
        except Exception as error:
            logger.exception("supervisor %s: factory of %s raised", self.name, cell.spec.id)
            self._deliver_exit((cell.spec.id, incarnation, Crashed(error)))
            return
        if isinstance(child, Actor):
            cell.actor = child
            report, ready = self._callbacks_for_actor(cell.spec.id)
            launch(child, Binding(cell.address, incarnation, report, ready))
        else:
            assert self._nursery is not None
            scope = trio.CancelScope(shield=True)
            cell.scope = scope
            self._nursery.start_soon(self._run_service, cell, incarnation, child, scope)
        with trio.move_on_after(cell.spec.start_timeout):
            await cell.ready.wait()
        if not cell.ready.is_set():
            logger.error(
                "supervisor %s: child %s did not finish starting within %g s; "
                "starting the next child anyway",
                self.name,
                cell.spec.id,
                cell.spec.start_timeout,
            )

    async def _run_service(
        self, cell: _Cell, incarnation: int, service: Service, scope: trio.CancelScope
    ) -> None:
        ready = cell.ready
        reason: ExitReason = Stopped()
        try:
            with scope:
                try:
                    await service.run(task_status=_ReadySignal(ready))
                except Exception as error:
                    reason = Crashed(error)
        finally:
            self._deliver_exit((cell.spec.id, incarnation, reason))

    async def _stop(self, cell: _Cell) -> None:
        """Ask a running child to stop; abandon it after its shutdown timeout."""
        if cell.state is not _State.RUNNING:
            return
        cell.state = _State.STOPPING
        if cell.actor is not None:
            cell.address._suspend()
            try:
                cell.actor.actor_ref.stop(block=False)
            except pykka.ActorDeadError:
                pass  # it is already on its way out; its exit report is coming
        elif cell.scope is not None:
            cell.scope.cancel()
        with trio.move_on_after(cell.spec.shutdown):
            await cell.exited.wait()
        if not cell.exited.is_set():
            logger.error(
                "supervisor %s: child %s did not stop within %g s; abandoned",
                self.name,
                cell.spec.id,
                cell.spec.shutdown,
                extra={"child": cell.spec.id, "incarnation": cell.incarnation},
            )
            cell.incarnation += 1  # whatever it reports later is late
        cell.actor = None
        cell.state = _State.DOWN

    async def _shutdown(self) -> None:
        self._stopping = True
        async with self._lock:
            for cell in reversed(self._cells):
                await self._stop(cell)
                cell.state = _State.CLOSED
                cell.address._close()

    # -- exits ---------------------------------------------------------------------------------

    def _callbacks_for_actor(
        self, child_id: str
    ) -> tuple[Callable[[int, ExitReason], None], Callable[[int], None]]:
        port = self._port
        assert port is not None
        cell = self._by_id[child_id]

        def report(incarnation: int, reason: ExitReason) -> None:
            port.post(self._deliver_exit, (child_id, incarnation, reason))

        def set_ready(incarnation: int) -> None:
            if incarnation == cell.incarnation:
                cell.ready.set()

        def ready(incarnation: int) -> None:
            port.post(set_ready, incarnation)

        return report, ready

    def _deliver_exit(self, report: _Report) -> None:
        """Trio thread. Wakes a pending ``_start`` or ``_stop`` at once, then queues the report."""
        child_id, incarnation, _ = report
        cell = self._by_id[child_id]
        if incarnation == cell.incarnation:
            cell.ready.set()
            cell.exited.set()
        if self._exit_send is not None:
            try:
                self._exit_send.send_nowait(report)
            except (trio.ClosedResourceError, trio.BrokenResourceError):
                pass  # the supervisor has finished; nothing is left to restart

    async def _on_exit(self, report: _Report) -> None:
        child_id, incarnation, reason = report
        cell = self._by_id[child_id]
        if incarnation != cell.incarnation or cell.state is not _State.RUNNING:
            logger.debug("supervisor %s: ignoring late exit of %s", self.name, child_id)
            return
        cell.state = _State.DOWN
        cell.actor = None
        crashed = isinstance(reason, Crashed)
        if isinstance(reason, Crashed):
            logger.error(
                "supervisor %s: child %s crashed: %s: %s",
                self.name,
                child_id,
                type(reason.error).__name__,
                reason.error,
                exc_info=reason.error,
                extra={"child": child_id, "incarnation": incarnation},
            )
            self._count_failure(reason.error)
        if not _restarts(cell.spec.restart, crashed=crashed):
            cell.state = _State.CLOSED
            cell.address._close()
            return
        group = self._group(cell)
        async with self._lock:
            for other in reversed(group):
                if other is not cell:
                    await self._stop(other)
            for other in group:
                if other.spec.restart is Restart.TEMPORARY and other is not cell:
                    other.state = _State.CLOSED
                    other.address._close()
        to_restart = [c for c in group if c.state is _State.DOWN]
        assert self._nursery is not None
        self._nursery.start_soon(self._restart_later, self._next_delay(cell), to_restart)

    async def _restart_later(self, delay: float, cells: list[_Cell]) -> None:
        await trio.sleep(delay)
        async with self._lock:
            for cell in cells:
                if self._stopping:
                    return
                if cell.state is _State.DOWN:
                    logger.info(
                        "supervisor %s: restarting %s",
                        self.name,
                        cell.spec.id,
                        extra={"child": cell.spec.id, "incarnation": cell.incarnation + 1},
                    )
                    await self._start(cell)

    def _group(self, cell: _Cell) -> list[_Cell]:
        if self.strategy is Strategy.ONE_FOR_ONE:
            return [cell]
        if self.strategy is Strategy.ONE_FOR_ALL:
            return list(self._cells)
        return self._cells[cell.index :]

    def _next_delay(self, cell: _Cell) -> float:
        if trio.current_time() - cell.started_at >= self.backoff.reset_after:
            cell.restarts = 0
        cell.restarts += 1
        return self.backoff.delay(cell.restarts)

    def _count_failure(self, error: BaseException) -> None:
        now = trio.current_time()
        self._failures.append(now)
        while self._failures and self._failures[0] < now - self.period:
            self._failures.popleft()
        if len(self._failures) > self.intensity:
            raise SupervisorFailed(self.name, len(self._failures), self.period, error)


class _ReadySignal:
    """The ``task_status`` a service child gets: ``started()`` lets the next sibling start."""

    __slots__ = ("_event",)

    def __init__(self, event: trio.Event) -> None:
        self._event = event

    def started(self, value: object = None) -> None:  # noqa: ARG002 (trio's signature)
        self._event.set()


def _restarts(restart: Restart, *, crashed: bool) -> bool:
    if restart is Restart.PERMANENT:
        return True
    if restart is Restart.TRANSIENT:
        return crashed
    return False
