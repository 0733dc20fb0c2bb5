"""An agent process spawned before robota's trio loop runs, for its process service to adopt.

A one-shot ``robota -p`` spends about 250 ms importing and building its engine before the
agent's process service spawns the agent on the first job, and only then does the agent's own
start (a Node or Rust program loading) begin. ``prestart`` spawns the very process the service
would spawn (``launch_command``: the argv and the scrubbed environment; the launch's cwd; a
session of its own; watched by the reaper from the first moment) with nothing but
``subprocess`` as soon as the configuration is known, so the agent starts while robota loads.
The service's first incarnation ``adopt``s it instead of spawning (``ProcessSettings``).

The protocol's first request (``initialize``) is written at the spawn, so the agent's handshake
overlaps robota's loading too (measured: Codex's run 25 ms shorter; an ACP agent on Node answers
after its own start either way). The adopting ``Connection`` takes it over (``written``): same
framing (``request_line``), id 0, and the client's ``initialize`` awaits that answer.

A new session's opening can follow (``open_session``, print mode's new task, once it knows the
task's settings and before trio loads): for the App Server, the ``initialized`` notification and
``thread/start`` (the plugin's ``opening`` makes them, with the params the driver's
``start_thread`` makes), so the agent starts the thread while robota still loads instead of
after. These are guesses the engine does not depend on: the adopting ``Connection`` takes the
``thread/start`` over only when the driver's request has the very same params
(``speculative``), and sends its own otherwise; an unused thread of Codex's is never stored.

Ownership: until a service adopts it, the process belongs to whoever called ``prestart``, who
calls ``close`` once the engine stopped or never ran. ``close`` ends a process nobody adopted
(SIGTERM to its group, then SIGKILL: it never received a request, so there is nothing to save),
so a run that fails between the spawn and the first job (a configuration error, ``-r`` naming a
task of another agent, Ctrl-C, any exception) leaves nothing behind; after an adoption it does
nothing. A robota that dies without running ``close`` (SIGKILL) is covered by the reaper, which
watches the group from the spawn on.

Nothing on the way to the spawn imports trio or the kernel (``_spawn``, ``_framing``,
``_reaper``): the spawn comes right after the configuration has loaded, and trio, pykka and the
protocol clients load while the agent starts. ``adopt`` imports what it hands over.

The pipes are created here (``os.pipe``, close-on-exec) rather than by ``Popen``, so the
service gets plain descriptors to wrap in trio streams, as ``trio.lowlevel.open_process``
would have made them.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

from ._framing import notification_line, request_line
from ._reaper import REAPER, live_members, process_logger
from ._spawn import launch_command
from ._stderr_tail import StderrTail

if TYPE_CHECKING:
    from robota.core import AgentLaunch

    from ._process import AgentProcess, ShutdownTimings

__all__ = ["Adopted", "Ahead", "FirstRequest", "Opening", "Prestarted", "prestart"]


class FirstRequest(NamedTuple):
    """The request written at the spawn, as the protocol's client will make it."""

    method: str
    params: Any
    jsonrpc_field: bool


class Ahead(NamedTuple):
    """A message of a new session's opening, written before the connection exists."""

    method: str
    params: Any
    request: bool
    """A request (the next id) or a notification."""


class Opening(Protocol):
    """A protocol's opening of a new session (``Prestarted.open_session``): the messages its
    driver would write for a session with these settings; none where it writes none ahead."""

    def __call__(
        self,
        *,
        cwd: Path,
        permission_mode: str,
        model: str | None,
        developer_instructions: str | None,
    ) -> Sequence[Ahead]: ...


class Adopted(NamedTuple):
    process: AgentProcess
    written: tuple[tuple[str, Any], ...]
    """The requests already written to it, for its ``Connection`` (ids from 0)."""
    notified: tuple[tuple[str, Any], ...] = ()
    """The notifications already written to it."""
    speculative: frozenset[str] = frozenset()
    """Which of ``written`` were a new session's opening: guesses (see the module docstring)."""


def prestart(
    launch: AgentLaunch,
    first: FirstRequest | None = None,
    *,
    environ: Mapping[str, str] | None = None,
    opening: Opening | None = None,
) -> Prestarted | None:
    """Spawn the agent ``launch`` names and write it ``first``; ``None`` when it cannot start
    (the service spawns it again later and reports the error where a turn sees it).
    ``opening``: what ``open_session`` writes (``None``: nothing)."""
    spawn = launch_command(launch, environ)
    command, env = spawn.command, spawn.env
    child_in, stdin = os.pipe()
    stdout, child_out = os.pipe()
    stderr, child_err = os.pipe()
    try:
        popen = subprocess.Popen(
            command,
            stdin=child_in,
            stdout=child_out,
            stderr=child_err,
            env=REAPER.marked(env),
            cwd=str(launch.cwd) if launch.cwd is not None else None,
            start_new_session=True,
        )
    except OSError:
        for fd in (stdin, stdout, stderr):
            os.close(fd)
        return None
    finally:
        for fd in (child_in, child_out, child_err):
            os.close(fd)
    prestarted = Prestarted(
        launch, popen, (stdin, stdout, stderr), secrets=spawn.secrets, opening=opening
    )
    try:
        REAPER.watch(popen.pid)
        if first is not None:
            prestarted.write(first)
    except BaseException:  # Ctrl-C right after the spawn: the caller never gets to close it
        prestarted.close()
        raise
    return prestarted


class Prestarted:
    """A prestarted agent process (``robota.core.PrestartedAgent``); see the module docstring.

    ``adopt`` (the process service, on the trio thread) and ``close`` (its owner, after the
    engine stopped) may race only in a failing run; a lock makes exactly one of them win."""

    def __init__(
        self,
        launch: AgentLaunch,
        popen: subprocess.Popen[bytes],
        pipes: tuple[int, int, int],
        *,
        secrets: tuple[str, ...] = (),
        grace: float = 2.0,
        opening: Opening | None = None,
    ) -> None:
        self._launch = launch
        self._secrets = secrets
        self._popen: subprocess.Popen[bytes] | None = popen
        self._pipes = pipes
        self._grace = grace
        self._opening = opening
        self._lock = threading.Lock()
        self._jsonrpc_field = False
        self._written: tuple[tuple[str, Any], ...] = ()
        self._notified: tuple[tuple[str, Any], ...] = ()
        self._speculative: frozenset[str] = frozenset()
        self.pid = popen.pid

    @property
    def launch(self) -> AgentLaunch:
        return self._launch

    def _take(self) -> subprocess.Popen[bytes] | None:
        with self._lock:
            popen, self._popen = self._popen, None
            return popen

    def write(self, first: FirstRequest) -> None:
        """Write the first request (an empty pipe takes it whole, without blocking); an agent
        that already died gets nothing, and its exit is found once it is adopted."""
        line = request_line(0, first.method, first.params, jsonrpc_field=first.jsonrpc_field)
        try:
            os.write(self._pipes[0], line)
        except OSError:
            return
        self._jsonrpc_field = first.jsonrpc_field
        self._written = ((first.method, first.params),)

    def open_session(
        self,
        *,
        cwd: Path,
        permission_mode: str,
        model: str | None,
        developer_instructions: str | None,
    ) -> bool:
        """Write a new session's opening after the first request (see the module docstring);
        whether anything was written. Once, before the adoption, after ``write``."""
        with self._lock:
            if self._popen is None or self._opening is None or len(self._written) != 1:
                return False
            messages = self._opening(
                cwd=cwd,
                permission_mode=permission_mode,
                model=model,
                developer_instructions=developer_instructions,
            )
            written, notified, lines = list(self._written), [], []
            for message in messages:
                if message.request:
                    lines.append(
                        request_line(
                            len(written),
                            message.method,
                            message.params,
                            jsonrpc_field=self._jsonrpc_field,
                        )
                    )
                    written.append((message.method, message.params))
                else:
                    lines.append(
                        notification_line(
                            message.method, message.params, jsonrpc_field=self._jsonrpc_field
                        )
                    )
                    notified.append((message.method, message.params))
            if not lines or not _write_all(self._pipes[0], b"".join(lines)):
                return False
            self._written, self._notified = tuple(written), tuple(notified)
            self._speculative = frozenset(m.method for m in messages if m.request)
            return True

    def adopt(self, timings: ShutdownTimings) -> Adopted | None:
        """The process and what was written to it, the first time; ``None`` once adopted or
        closed."""
        popen = self._take()
        if popen is None:
            return None
        # Here: the spawn happens before trio and the process service load (module docstring).
        import trio  # noqa: PLC0415

        from ._process import AgentProcess  # noqa: PLC0415

        stdin, stdout, stderr = (trio.lowlevel.FdStream(fd) for fd in self._pipes)
        # What trio.lowlevel.open_process returns for a Popen it made (trio's Process has no
        # public constructor): pidfd-based waiting, returncode kept up to date.
        process = trio.Process._create(popen, stdin, stdout, stderr)
        process_logger().info(
            "agent %s adopted (pid %d, started ahead of the engine)",
            self._launch.name,
            popen.pid,
            extra={"agent": self._launch.name, "pid": popen.pid},
        )
        agent = AgentProcess(self._launch.name, process, timings, StderrTail(self._secrets))
        return Adopted(agent, self._written, self._notified, self._speculative)

    def close(self) -> None:
        """End the process unless it was adopted: SIGTERM its group, SIGKILL what stays."""
        popen = self._take()
        if popen is None:
            return
        for fd in self._pipes:
            os.close(fd)
        _signal_group(popen.pid, signal.SIGTERM)
        try:
            popen.wait(self._grace)
        except subprocess.TimeoutExpired:
            _signal_group(popen.pid, signal.SIGKILL)
            popen.wait()
        deadline = time.monotonic() + self._grace
        while live_members(popen.pid) > 0 and time.monotonic() < deadline:
            time.sleep(0.02)
        _signal_group(popen.pid, signal.SIGKILL)  # what ignored SIGTERM (nothing, usually)
        REAPER.forget(popen.pid)


def _write_all(fd: int, data: bytes) -> bool:
    """Write ``data`` whole to a blocking pipe; ``False`` when the agent is gone (its exit is
    found once it is adopted)."""
    view = memoryview(data)
    try:
        while view:
            view = view[os.write(fd, view) :]
    except OSError:
        return False
    return True


def _signal_group(pgid: int, signum: signal.Signals) -> None:
    try:
        os.killpg(pgid, signum)
    except (ProcessLookupError, PermissionError):
        pass  # the group is empty already
