"""Starting a detached host and waiting until it serves: ``robota server start``, and the
host replacing itself on a restart (the same code path, so a restart starts exactly what a
``start`` would).

A start is done once the new host is ready (it serves and every enabled chat transport is
connected), or once it serves and each transport is connected or has failed, or, at the
latest, ``SETTLE_TIMEOUT`` after it first answered, with its transports as they stand: a
platform that refuses or never answers is the transport's state to report, never a failed
start (``start_verdict``, a pure decision).

The host runs as ``robota server run`` in a session of its own (no terminal can signal it),
stdin from /dev/null, stdout and stderr appended to the profile's ``logs/host.stdout.log`` and
``logs/host.stderr.log`` (owner-only). Those two files are written by the process's own file
descriptors, which no logging handler sees, so they are rotated here, before each start, at
the same 10 MiB x 3 as the JSON log.

Stdlib and ``robota.core.control`` only: the starting command never loads the engine.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from robota.core.control import (
    ControlClient,
    ControlError,
    HostState,
    pid_alive,
    probe_host,
)

if TYPE_CHECKING:
    from robota.core.config import Profile

__all__ = [
    "READY_TIMEOUT",
    "SETTLE_TIMEOUT",
    "STOP_TIMEOUT",
    "StartOutcome",
    "StartVerdict",
    "host_argv",
    "host_logs",
    "process_gone",
    "rotate_log",
    "running_state",
    "spawn_detached",
    "spawn_host",
    "start_verdict",
    "tail",
    "wait_gone",
    "wait_ready",
]

READY_TIMEOUT = 45.0
"""Seconds ``start`` waits for the new host to answer and be ready."""
SETTLE_TIMEOUT = 5.0
"""Seconds ``start`` waits, once the new host answers, for its transports to connect or fail."""
STOP_TIMEOUT = 30.0
"""Seconds ``stop`` waits for the host's process to be gone."""
LOG_MAX_BYTES = 10 * 1024 * 1024
LOG_BACKUPS = 3
_POLL = 0.1
_MARK = "ROBOTA_REAPER_MARK"
"""The agent reaper's mark (``robota.runtimes``): the processes whose environment holds a
robota's mark end with that robota."""


def host_logs(profile: Profile) -> tuple[Path, Path]:
    """The detached host's stdout and stderr files."""
    return profile.log_dir / "host.stdout.log", profile.log_dir / "host.stderr.log"


def host_argv() -> list[str]:
    """``robota server run`` with this interpreter (a PATH lookup could find another robota)."""
    return [sys.executable, "-c", "from robota.cli import main; main(['server', 'run'])"]


def rotate_log(path: Path, *, max_bytes: int = LOG_MAX_BYTES, backups: int = LOG_BACKUPS) -> None:
    """``path`` -> ``path.1`` -> ... -> ``path.N`` once it reached ``max_bytes``."""
    try:
        if path.stat().st_size < max_bytes:
            return
    except FileNotFoundError:
        return
    for index in range(backups - 1, 0, -1):
        older = path.with_name(f"{path.name}.{index}")
        if older.exists():
            older.replace(path.with_name(f"{path.name}.{index + 1}"))
    path.replace(path.with_name(f"{path.name}.1"))


def _open_log(path: Path) -> int:
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    os.fchmod(fd, 0o600)
    return fd


def spawn_host(profile: Profile, environ: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
    """Start ``robota server run`` detached for ``profile`` (whose ``ROBOTA_HOME`` and
    ``ROBOTA_CONFIG`` are already in the environment); the process, not yet ready."""
    return spawn_detached(profile, host_argv(), host_logs(profile), environ)


def spawn_detached(
    profile: Profile,
    argv: list[str],
    logs: tuple[Path, Path],
    environ: dict[str, str] | None = None,
) -> subprocess.Popen[bytes]:
    """Start ``argv`` detached (a session of its own, stdin from /dev/null, stdout and stderr
    appended to ``logs``, rotated first): the host, a background session. It is meant to
    outlive whoever started it, so it loses the agent reaper's mark that an agent's robota put
    in its environment (an agent may run ``robota server start``)."""
    env = {k: v for k, v in (os.environ if environ is None else environ).items() if k != _MARK}
    profile.log_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    out_path, err_path = logs
    for path in (out_path, err_path):
        rotate_log(path)
    out, err = _open_log(out_path), _open_log(err_path)
    try:
        return subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=err,
            start_new_session=True,
            close_fds=True,
            env=env,
        )
    finally:
        os.close(out)
        os.close(err)


@dataclass(frozen=True, slots=True)
class StartOutcome:
    """How a start ended: ``ready`` (``status`` is the new host's), ``serving`` (the new host
    serves, but a transport failed or is still connecting: ``status`` names each),
    ``other`` (another host of the profile runs: it is ``status``), ``exited`` (the new
    process ended: ``code``), ``timeout`` (it did not answer in time; ``status`` is its last,
    when it answered)."""

    kind: Literal["ready", "serving", "other", "exited", "timeout"]
    status: dict[str, Any] | None = None
    code: int | None = None


def _status(profile: Profile) -> dict[str, Any] | None:
    try:
        with ControlClient(profile.control_socket, timeout=5.0) as client:
            result = client.call("server.status")
    except ControlError:
        return None
    return result if isinstance(result, dict) else None


StartVerdict = Literal["wait", "ready", "serving"]


def start_verdict(
    status: Mapping[str, Any], answering_for: float, settle: float = SETTLE_TIMEOUT
) -> StartVerdict:
    """Whether a start whose new host answered with ``status`` (its own, ``answering_for``
    seconds after it first answered) is done: ``ready``; ``serving`` once each transport is
    connected or failed, some failed (the host serves meanwhile: a failed transport is named,
    not a failed start), or once ``settle`` passed whatever they say; else ``wait``."""
    if status.get("ready") is True:
        return "ready"
    transports = status.get("transports")
    states = [t.get("state") for t in transports if isinstance(t, Mapping)] if transports else []
    if "failed" in states and all(state in ("connected", "failed") for state in states):
        return "serving"
    return "serving" if answering_for >= settle else "wait"


def wait_ready(
    profile: Profile, process: subprocess.Popen[bytes], timeout: float = READY_TIMEOUT
) -> StartOutcome:
    """Wait until ``process`` serves ``profile`` (``start_verdict``), or whatever happened
    instead."""
    deadline = time.monotonic() + timeout
    last: dict[str, Any] | None = None
    answered: float | None = None
    while True:
        code = process.poll()
        presence = probe_host(profile.host_lock, profile.host_state_file)
        if presence.running and presence.state is not None:
            status = _status(profile)
            if status is not None:
                last = status
                # The answering host's own pid, not the state file's: a new host serves its
                # socket a moment before it publishes its state, so the file may still name a
                # host that died (SIGKILL) while this one already answers.
                if status.get("pid") != process.pid:
                    return StartOutcome("other", status)
                now = time.monotonic()
                if answered is None:
                    answered = now
                    # Answering late is no failure: its transports get their settle wait.
                    deadline = max(deadline, now + SETTLE_TIMEOUT + 1.0)
                verdict = start_verdict(status, now - answered)
                if verdict != "wait":
                    return StartOutcome(verdict, status)
        if code is not None and not presence.running:
            return StartOutcome("exited", code=code)
        if time.monotonic() >= deadline:
            return StartOutcome("timeout", last)
        time.sleep(_POLL)


def process_gone(pid: int) -> bool:
    """No such process, or only its zombie (a detached host's parent may never reap it)."""
    return not pid_alive(pid)


def wait_gone(pid: int, timeout: float = STOP_TIMEOUT) -> bool:
    """Whether ``pid`` was gone within ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not process_gone(pid):
        if time.monotonic() >= deadline:
            return False
        time.sleep(_POLL)
    return True


def tail(path: Path, lines: int = 20, *, max_bytes: int = 64 * 1024) -> list[str]:
    """The last ``lines`` lines of ``path`` (reading at most its last ``max_bytes``)."""
    try:
        with path.open("rb") as file:
            file.seek(0, os.SEEK_END)
            size = file.tell()
            file.seek(max(0, size - max_bytes))
            data = file.read()
    except OSError:
        return []
    return data.decode("utf-8", "replace").splitlines()[-lines:]


def running_state(profile: Profile) -> HostState | None:
    """The running host's state, or ``None``."""
    presence = probe_host(profile.host_lock, profile.host_state_file)
    return presence.state if presence.running else None
