"""The process side of an agent: a trio service owning at most one agent process.

One incarnation of ``AgentProcessService`` is one process, started lazily: the service waits for
the first job before it spawns anything, so an agent nobody uses costs nothing. Then it shakes
hands once and runs jobs concurrently, each session opened in this process on first use (and
resumed there when the session table knows an earlier session id).

The process ends in one of four ways, each named in the reason every running turn fails with:
it exits; it never answers ``initialize`` (``handshake_timeout``); it writes a line over the
size limit or a run of garbage (the connection is strict, see ``Connection``); or robota stops
it. In the first three the reason ends with the agent's last lines on stderr (cleaned, secrets
masked: ``with_last_words``), which is where an agent says why it gave up; the service tells
the table, then raises ``AgentExited``, and its supervisor restarts it with backoff; jobs that
arrived meanwhile wait in the channel for the next process. Stopping always goes through
``AgentProcess.shutdown`` (stdin closed, SIGTERM, SIGKILL, the whole process group), shielded
from cancellation, so no agent outlives its service. A fifth: the session table failed on a
message (``fail``); the process goes the same way, so the turns it ran fail visibly instead of
waiting on state nobody trusts.

The service reports to the table by calling it (``report``): both live on the trio thread.

A process spawned ahead of the service (``ProcessSettings.prestarted``, see ``_prestart``) is
adopted instead of spawning one at the first job of the first incarnation.

A new session whose spec says ``open_ahead`` takes a session this process opened ahead with the
same settings, when one waits, and the next one like it opens in the background
(``_spare_sessions``: the rules). Spares belong to the process: they end with it.
"""

from __future__ import annotations

import logging
import math
from collections import deque
from collections.abc import Callable, Mapping
from itertools import count

import trio

from robota.core import FACTORY, AgentError, AgentLaunch, Record, field
from robota.core.agents import (
    AgentFailure,
    SessionSpec,
    Steered,
    SteerRefused,
    TurnAccepted,
    TurnRefused,
)
from robota.core.events import RuntimeEvent

from ._agent_jobs import (
    Bind,
    Decide,
    Interrupt,
    Job,
    Listed,
    ListJob,
    Notice,
    Opened,
    ProcessDown,
    ProcessUp,
    Prompt,
    Release,
    Steer,
    Update,
)
from ._drivers import (
    DriverFactory,
    PromptRefused,
    SessionDriver,
    SessionRefused,
    SteerRefusedError,
)
from ._jsonrpc import Connection, ConnectionLost, RpcError, RpcTimeout
from ._prestart import Adopted, Prestarted
from ._process import AgentProcess, ShutdownTimings, start_failure
from ._spare_sessions import SparePool, spare_key
from ._stderr_tail import with_last_words

__all__ = ["AgentExited", "AgentProcessService", "JobLine", "ProcessSettings"]

logger = logging.getLogger("robota.runtimes.agent")

GARBAGE_RUN = 64
"""Malformed lines in a row after which an agent's output counts as garbage."""


class AgentExited(AgentError):
    """The agent process ended on its own (or had to be ended); the supervisor restarts."""


class JobLine:
    """The jobs from the session table to the process service, in order; trio thread only.

    A job goes straight to the service when it is taking jobs and none wait before it: one
    trip round the loop less on every prompt's way out. Otherwise it waits in the channel, as
    jobs do while the process starts, restarts or is down. The line belongs to the agent's
    host, so waiting jobs outlive a process.
    """

    def __init__(self) -> None:
        self._send, self._receive = trio.open_memory_channel[Job](math.inf)
        self._waiting = 0
        self._taker: Callable[[Job], None] | None = None

    def submit(self, job: Job) -> None:
        if self._taker is not None and not self._waiting:
            self._taker(job)
            return
        self._waiting += 1
        self._send.send_nowait(job)  # unbounded; its producer's callers shed load

    async def take(self) -> Job:
        job = await self._receive.receive()
        self._waiting -= 1
        return job

    async def serve(self, taker: Callable[[Job], None]) -> None:
        """Hand every job to ``taker``, those waiting first, until cancelled."""
        try:
            while True:
                while self._waiting:
                    taker(await self.take())
                self._taker = taker
                await trio.sleep_forever()
        finally:
            self._taker = None


class ProcessSettings(Record):
    launch: AgentLaunch
    driver_factory: DriverFactory
    jsonrpc_field: bool
    handshake_timeout: float = 60.0
    timings: ShutdownTimings = field(default_factory=ShutdownTimings)
    environ: Mapping[str, str] | None = None
    """The environment to scrub and pass on; ``None`` is this process's own."""
    prestarted: Prestarted | None = None
    """A process spawned ahead of the service (``_prestart``): its first start adopts it."""

    # Generated by tools/gen_records.py from the fields above: do not edit below.
    __slots__ = (
        "driver_factory",
        "environ",
        "handshake_timeout",
        "jsonrpc_field",
        "launch",
        "prestarted",
        "timings",
    )
    __match_args__ = (
        "launch",
        "driver_factory",
        "jsonrpc_field",
        "handshake_timeout",
        "timings",
        "environ",
        "prestarted",
    )

    def __init__(  # noqa: PLR0917
        self,
        launch: AgentLaunch,
        driver_factory: DriverFactory,
        jsonrpc_field: bool,
        handshake_timeout: float = 60.0,
        timings: ShutdownTimings = FACTORY,
        environ: Mapping[str, str] | None = None,
        prestarted: Prestarted | None = None,
    ) -> None:
        object.__setattr__(self, "launch", launch)
        object.__setattr__(self, "driver_factory", driver_factory)
        object.__setattr__(self, "jsonrpc_field", jsonrpc_field)
        object.__setattr__(self, "handshake_timeout", handshake_timeout)
        object.__setattr__(self, "timings", ShutdownTimings() if timings is FACTORY else timings)
        object.__setattr__(self, "environ", environ)
        object.__setattr__(self, "prestarted", prestarted)

    def __repr__(self) -> str:
        return (
            f"{type(self).__qualname__}(launch={self.launch!r}, "
            f"driver_factory={self.driver_factory!r}, "
            f"jsonrpc_field={self.jsonrpc_field!r}, "
            f"handshake_timeout={self.handshake_timeout!r}, timings={self.timings!r}, "
            f"environ={self.environ!r}, prestarted={self.prestarted!r})"
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ProcessSettings) or other.__class__ is not self.__class__:
            return NotImplemented
        return (
            self.launch,
            self.driver_factory,
            self.jsonrpc_field,
            self.handshake_timeout,
            self.timings,
            self.environ,
            self.prestarted,
        ) == (
            other.launch,
            other.driver_factory,
            other.jsonrpc_field,
            other.handshake_timeout,
            other.timings,
            other.environ,
            other.prestarted,
        )

    def __hash__(self) -> int:
        return hash(
            (
                self.launch,
                self.driver_factory,
                self.jsonrpc_field,
                self.handshake_timeout,
                self.timings,
                self.environ,
                self.prestarted,
            )
        )

    del handshake_timeout, timings, environ, prestarted


class AgentProcessService:
    """One incarnation: at most one agent process. See the module docstring."""

    def __init__(
        self,
        settings: ProcessSettings,
        jobs: JobLine,
        report: Callable[[object], None],
        generations: count[int],
    ) -> None:
        self._settings = settings
        self._jobs = jobs
        self._report = report
        self._generations = generations
        self._scope = trio.CancelScope()
        self._failure: Exception | None = None
        self._generation = 0
        self._driver: SessionDriver | None = None
        self._pid: int | None = None
        self._bound: dict[str, str] = {}
        self._keys: dict[str, str] = {}
        self._queues: dict[str, deque[Job]] = {}
        """Per session key, the jobs not yet done, oldest first: a key's jobs run one at a
        time and in order (an interrupt must not overtake the prompt it interrupts)."""
        self._spares = SparePool()
        self._nursery: trio.Nursery | None = None
        """The process's nursery, once it shook hands: where spares open and close."""

    @property
    def name(self) -> str:
        return self._settings.launch.name

    @property
    def pid(self) -> int | None:
        """The agent process's pid while this incarnation runs one."""
        return self._pid

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        reason = None
        with self._scope:
            task_status.started()
            first = await self._jobs.take()
            self._generation = next(self._generations)
            reason = await self._serve(first)
        if self._failure is not None:
            raise AgentExited(self._failed())
        if reason is not None:
            raise AgentExited(reason)

    def _failed(self) -> str:
        return f"agent {self.name}: its session table failed ({self._failure!r})"

    def fail(self, error: Exception) -> None:
        """End this incarnation (and its process) because the session table failed."""
        self._failure = error
        self._scope.cancel()

    # -- one process ---------------------------------------------------------------------------

    async def _serve(self, first: Job) -> str | None:
        """Run one process until it ends; the reason it ended, or ``None`` when stopped."""
        settings = self._settings
        launch = settings.launch
        adopted = self._adopted()
        try:
            process = (
                adopted.process
                if adopted
                else await AgentProcess.launch(
                    launch, environ=settings.environ, timings=settings.timings
                )
            )
        except OSError as error:
            failure = start_failure(launch, error)
            self._fail(first, failure)
            self._report(ProcessDown(self._generation, failure))
            return failure
        assert process.process.stdin is not None and process.process.stdout is not None
        connection = Connection(
            process.process.stdin,
            process.process.stdout,
            name=f"agent {launch.name}",
            jsonrpc_field=settings.jsonrpc_field,
            corrupt_after=GARBAGE_RUN,
            written=adopted.written if adopted else (),
            notified=adopted.notified if adopted else (),
            speculative=adopted.speculative if adopted else (),
        )
        driver = settings.driver_factory(connection, self._on_event)
        self._driver = driver
        self._pid = process.pid
        ended: list[str] = []
        try:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(process.drain_stderr)
                nursery.start_soon(self._watch, connection, process, nursery, ended)
                self._queues[first.key] = deque([first])  # failed with the process, if need be
                await self._handshake(driver, process, nursery, ended)
                self._nursery = nursery
                if not ended:
                    nursery.start_soon(self._drain, first.key, self._queues[first.key])
                    await self._jobs.serve(lambda job: self._dispatch(job, nursery))
        finally:
            reason = ended[0] if ended else None
            with trio.CancelScope(shield=True):
                await process.shutdown()
                self._pid = None
                why = reason or (
                    self._failed() if self._failure else f"agent {launch.name} was stopped"
                )
                driver.close(why)
                for queue in self._queues.values():
                    for job in queue:
                        self._fail(job, why)
                self._queues.clear()
                self._report(ProcessDown(self._generation, why))
        return reason

    def _adopted(self) -> Adopted | None:
        """The prestarted process, the first time a process is wanted and only if it was
        started from this very launch and environment; ``None``: spawn one."""
        settings = self._settings
        prestarted = settings.prestarted
        if prestarted is None or settings.environ is not None:
            return None  # a prestart scrubs this process's own environment, nothing else
        if prestarted.launch != settings.launch:
            return None
        return prestarted.adopt(settings.timings)

    async def _handshake(
        self,
        driver: SessionDriver,
        process: AgentProcess,
        nursery: trio.Nursery,
        ended: list[str],
    ) -> None:
        timeout = self._settings.handshake_timeout
        try:
            with trio.fail_after(timeout):
                version = await driver.initialize(nursery)
        except trio.TooSlowError:
            reason = f"agent {self.name} did not answer initialize within {timeout:g} s"
            ended.append(with_last_words(reason, process.tail.lines()))
        except RpcError as error:
            reason = f"agent {self.name} refused initialize: {error.message}"
            ended.append(with_last_words(reason, process.tail.lines()))
        except (ConnectionLost, RpcTimeout):
            # The watcher names the cause (exit code, garbage) and cancels us: wait for it.
            await trio.sleep_forever()
        else:
            self._report(ProcessUp(self._generation, version, driver.capabilities))
            return
        nursery.cancel_scope.cancel()

    async def _watch(
        self,
        connection: Connection,
        process: AgentProcess,
        nursery: trio.Nursery,
        ended: list[str],
    ) -> None:
        """Read the agent's stdout; when it ends, find out why and end the process."""
        await connection.run()
        if connection.corruption is not None:
            reason = connection.corruption
            words = process.tail.lines()  # it still runs: its stderr will not end by itself
        else:
            with trio.move_on_after(2.0):
                await process.process.wait()
            code = process.process.returncode
            status = f"exit code {code}" if code is not None else "stdout closed"
            reason = f"agent {self.name} exited ({status})"
            words = await process.last_words()
        if not ended:
            ended.append(with_last_words(reason, words))
        logger.warning("%s; restarting it", reason, extra={"agent": self.name})
        nursery.cancel_scope.cancel()

    # -- jobs ----------------------------------------------------------------------------------

    def _dispatch(self, job: Job, nursery: trio.Nursery) -> None:
        if isinstance(job, Decide):
            # Answering an approval is instant and must not wait behind the key's queue.
            self._driver_of().decide(job.approval_id, job.decision, by=job.by)
            return
        queue = self._queues.get(job.key)
        if queue is not None:
            queue.append(job)
            return
        queue = self._queues[job.key] = deque([job])
        nursery.start_soon(self._drain, job.key, queue)

    async def _drain(self, key: str, queue: deque[Job]) -> None:
        while queue:
            await self._execute(queue[0])
            queue.popleft()
        del self._queues[key]

    async def _execute(self, job: Job) -> None:
        """Carry out one job; a failure is told to the actor, except a lost connection, whose
        jobs fail with the process's reason once it is known."""
        try:
            await self._carry_out(job)
        except (RpcError, RpcTimeout, OSError, SessionRefused) as error:
            self._fail(job, str(error))
        except ConnectionLost:
            await trio.sleep_forever()  # the watcher cancels us; the job stays queued
        except Exception as error:
            logger.exception("agent %s: job %s failed", self.name, type(job).__name__)
            self._fail(job, f"{type(error).__name__}: {error}")

    def _driver_of(self) -> SessionDriver:
        assert self._driver is not None
        return self._driver

    async def _carry_out(self, job: Job) -> None:
        driver = self._driver_of()
        match job:
            case Bind(key=key, spec=spec, resume_id=resume_id):
                await self._ensure(key, spec, resume_id)
            case Prompt(key=key, spec=spec, resume_id=resume_id, text=text, images=images):
                session_id = await self._ensure(key, spec, resume_id)
                try:
                    turn_id = await driver.start_turn(session_id, text, images, spec)
                except PromptRefused as refused:
                    self._tell(TurnRefused(key, text, refused.reason, str(refused)))
                else:
                    self._tell(TurnAccepted(key, turn_id))
            case Steer(key=key, expected_turn_id=expected, text=text):
                steered = self._bound.get(key)
                if steered is None:
                    message = "the turn ended with its agent process"
                    self._tell(SteerRefused(key, text, "ended", message))
                    return
                try:
                    turn_id = await driver.steer(steered, expected, text)
                except SteerRefusedError as refused:
                    self._tell(SteerRefused(key, text, refused.reason, str(refused)))
                else:
                    self._tell(Steered(key, turn_id))
            case Interrupt(key=key):
                running = self._bound.get(key)
                if running is not None:
                    await driver.interrupt(running)
            case Decide(approval_id=approval_id, decision=decision, by=by):
                driver.decide(approval_id, decision, by=by)  # only the first job gets here
            case Release(key=key, closed=closed):
                released = self._bound.pop(key, None)
                try:
                    if released is not None:
                        self._keys.pop(released, None)
                        await driver.close_session(released)
                        logger.info("agent %s: the session of %s released", self.name, key)
                finally:
                    if closed is not None:
                        closed()
            case ListJob(ref=ref, search=search, limit=limit):
                sessions = await driver.list_sessions(search=search, limit=limit)
                self._report(Listed(ref, tuple(sessions)))

    async def _ensure(self, key: str, spec: SessionSpec, resume_id: str | None) -> str:
        """The session's id in this process, opening (or resuming) it on first use. The key's
        queue runs one job at a time, so two jobs never open the same session twice."""
        session_id = self._bound.get(key)
        if session_id is None:
            driver = self._driver_of()
            ahead = spare_key(spec, resume_id)
            spare = None
            if ahead is not None:
                spare, stale = self._spares.take(ahead, trio.current_time())
                self._close_spares(stale)
            if spare is not None:
                session_id, resumed = spare, False
                driver.claim(session_id, spec)
                logger.info("agent %s: %s takes a session opened ahead", self.name, key)
            else:
                session_id, resumed = await driver.open(spec, resume_id)
            self._bound[key] = session_id
            self._keys[session_id] = key
            self._report(Opened(self._generation, key, session_id, resumed))
            if ahead is not None and self._nursery is not None and self._spares.wants(ahead):
                self._nursery.start_soon(self._open_spare, ahead)
        return session_id

    async def _open_spare(self, key: SessionSpec) -> None:
        """Open the next session for ``key``'s settings ahead (``_spare_sessions``)."""
        try:
            session_id, _ = await self._driver_of().open(key, None)
        except (RpcError, RpcTimeout, OSError, SessionRefused, ConnectionLost) as error:
            self._spares.failed(key)
            logger.info("agent %s: no session opened ahead (%s)", self.name, error)
            return
        logger.info("agent %s: a session opened ahead in %s", self.name, key.cwd)
        self._close_spares(self._spares.opened(key, session_id, trio.current_time()))

    def _close_spares(self, session_ids: list[str]) -> None:
        for session_id in session_ids:
            if self._nursery is not None:
                self._nursery.start_soon(self._close_spare, session_id)

    async def _close_spare(self, session_id: str) -> None:
        try:
            await self._driver_of().close_session(session_id)
        except (RpcError, RpcTimeout, OSError, ConnectionLost):
            pass  # left to the agent, which ends it with the process at the latest

    def _on_event(self, session_id: str, event: RuntimeEvent) -> None:
        key = self._keys.get(session_id)
        if key is not None:
            self._report(Update(key, event))

    def _tell(self, notice: TurnAccepted | TurnRefused | Steered | SteerRefused) -> None:
        self._report(Notice(notice))

    def _fail(self, job: Job, reason: str) -> None:
        match job:
            case Prompt(key=key, text=text):
                self._report(Notice(TurnRefused(key, text, "failed", reason)))
            case Steer(key=key, text=text):
                self._report(Notice(SteerRefused(key, text, "failed", reason)))
            case Bind(key=key):
                self._report(Notice(AgentFailure(key, "open", reason)))
            case Interrupt(key=key):
                self._report(Notice(AgentFailure(key, "interrupt", reason)))
            case ListJob(ref=ref):
                self._report(Listed(ref, (), reason))
            case Decide() | Release():
                pass  # the approval resolves to cancel with the process; nothing to close
