"""Agent processes: a scrubbed environment, a process group of their own, and a sure end.

Environment: see ``_spawn`` (the argv and scrubbed environment, shared with ``_prestart``).

Process group. Agents start shells, language servers and, for some, a second copy of
themselves; each agent is started in a new session so the whole tree can be signalled at once.

Shutdown. Close stdin, wait; SIGTERM the group, wait; SIGKILL the group. codex-acp and
claude-code-acp ignore EOF on stdin, so the signals are not optional. The group is signalled even
after the leader exited by itself, so no grandchild outlives robota. When robota dies without a
shutdown (SIGKILL, a crash), the reaper (``_reaper``) ends the groups instead.

stderr is drained continuously into the log: a chatty agent blocks on a full pipe otherwise.
Its last lines are kept too, cleaned and with secrets masked (``StderrTail``), so that when the
agent dies the reason robota gives can end with what the agent said (``last_words``).
"""

from __future__ import annotations

import logging
import os
import signal
import subprocess
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import trio

from robota.core import AgentLaunch

from ._reaper import REAPER, live_members
from ._spawn import Spawn, agent_environment, is_reserved_name, launch_command, scrubbed_names
from ._stderr_tail import StderrTail

__all__ = [
    "AgentProcess",
    "ShutdownTimings",
    "agent_environment",
    "is_reserved_name",
    "Spawn",
    "launch_command",
    "scrubbed_names",
]

logger = logging.getLogger("robota.runtimes.process")

_PENDING_LIMIT = 64 * 1024
"""Bytes of stderr without a newline kept before they count as a line: bounded memory."""


@dataclass(frozen=True, slots=True)
class ShutdownTimings:
    eof_grace: float = 1.5
    """Seconds to wait after closing stdin before SIGTERM."""
    term_grace: float = 2.0
    """Seconds to wait after SIGTERM before SIGKILL."""
    group_grace: float = 0.5
    """Seconds the leader's descendants get to exit on their own once it is gone."""


@dataclass
class AgentProcess:
    """A started agent. Use ``async with AgentProcess.start(...) as process``... or call
    ``start`` and ``shutdown`` yourself; ``drain_stderr`` must run in a nursery meanwhile."""

    name: str
    process: trio.Process
    timings: ShutdownTimings = field(default_factory=ShutdownTimings)
    tail: StderrTail = field(default_factory=StderrTail)
    """The last lines of its stderr, kept by ``drain_stderr``."""
    stderr_closed: trio.Event = field(default_factory=trio.Event)
    """Set when ``drain_stderr`` saw the end of stderr: the tail is complete."""

    @classmethod
    async def start(
        cls,
        name: str,
        command: Sequence[str],
        *,
        env: Mapping[str, str],
        cwd: Path | None = None,
        timings: ShutdownTimings | None = None,
        secrets: Iterable[str] = (),
    ) -> AgentProcess:
        """Start ``command``; ``secrets`` are masked in the tail of its stderr."""
        process = await trio.lowlevel.open_process(
            list(command),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=REAPER.marked(env),
            cwd=str(cwd) if cwd is not None else None,
            start_new_session=True,
        )
        REAPER.watch(process.pid)
        logger.info(
            "agent %s started (pid %d)",
            name,
            process.pid,
            extra={"agent": name, "pid": process.pid},
        )
        return cls(name, process, timings or ShutdownTimings(), StderrTail(secrets))

    @classmethod
    async def launch(
        cls,
        launch: AgentLaunch,
        *,
        environ: Mapping[str, str] | None = None,
        timings: ShutdownTimings | None = None,
    ) -> AgentProcess:
        """Start a configured agent: its command, its cwd, and ``environ`` (default: this
        process's environment) scrubbed and completed by ``agent_environment``."""
        spawn = launch_command(launch, environ)
        return await cls.start(
            launch.name,
            spawn.command,
            env=spawn.env,
            cwd=launch.cwd,
            timings=timings,
            secrets=spawn.secrets,
        )

    @property
    def pid(self) -> int:
        return self.process.pid

    async def drain_stderr(self) -> None:
        """Copy the agent's stderr into the log and its tail, line by line, until it closes."""
        stream = self.process.stderr
        assert stream is not None
        pending = b""
        try:
            async for chunk in stream:
                pending += chunk
                *lines, pending = pending.split(b"\n")
                for line in lines:
                    self._stderr_line(line)
                if len(pending) > _PENDING_LIMIT:  # no newline in sight: a line of its own
                    self._stderr_line(pending)
                    pending = b""
            self._stderr_line(pending)  # a last line without its newline
        finally:
            self.stderr_closed.set()

    def _stderr_line(self, raw: bytes) -> None:
        if raw.strip():
            logger.debug(
                "agent %s stderr: %s",
                self.name,
                raw[:2000].decode(errors="replace"),
                extra={"agent": self.name},
            )
            self.tail.add(raw)

    async def last_words(self, grace: float = 0.5) -> tuple[str, ...]:
        """The tail of stderr, once it closed or ``grace`` seconds passed: a dead agent's
        last lines may still be in the pipe when its stdout ends."""
        with trio.move_on_after(grace):
            await self.stderr_closed.wait()
        return self.tail.lines()

    async def shutdown(self) -> int:
        """Close stdin, then SIGTERM, then SIGKILL the group; return the exit code."""
        process = self.process
        with trio.CancelScope(shield=True):
            if process.stdin is not None:
                try:
                    await process.stdin.aclose()
                except (trio.BrokenResourceError, trio.ClosedResourceError):
                    pass  # already gone
            with trio.move_on_after(self.timings.eof_grace):
                await process.wait()
            if process.returncode is None:
                self._signal_group(signal.SIGTERM)
                with trio.move_on_after(self.timings.term_grace):
                    await process.wait()
            if process.returncode is None:
                self._signal_group(signal.SIGKILL)
                await process.wait()
            # The leader is gone; its descendants must go too, but gently first: Claude Code's
            # native binary, a child of claude-agent-acp, writes the session file that a later
            # session/load needs as it exits, and a SIGKILL at once loses it.
            await self._end_group()
            REAPER.forget(process.pid)
        returncode = process.returncode
        assert returncode is not None
        logger.info(
            "agent %s stopped (exit %d)",
            self.name,
            returncode,
            extra={"agent": self.name, "pid": process.pid},
        )
        return returncode

    async def _end_group(self) -> None:
        """Wait for the leader's process group to empty; SIGTERM, then SIGKILL, what stays."""
        for signum, grace in (
            (None, self.timings.group_grace),
            (signal.SIGTERM, self.timings.term_grace),
        ):
            if signum is not None:
                self._signal_group(signum)
            with trio.move_on_after(grace):
                while self._group_alive():
                    await trio.sleep(0.02)
                return
        self._signal_group(signal.SIGKILL)

    def _group_alive(self) -> bool:
        try:
            os.killpg(self.process.pid, 0)
        except (ProcessLookupError, PermissionError):
            return False
        return live_members(self.process.pid) != 0

    def _signal_group(self, signum: signal.Signals) -> None:
        try:
            os.killpg(self.process.pid, signum)
        except (ProcessLookupError, PermissionError):
            pass  # the group is empty already
