"""``robota server run``: take the profile's host lock, run the host, stop on a signal.

SIGTERM, SIGINT and SIGHUP all mean a clean stop (``Host.stop``), however early they come; a
second one while stopping changes nothing. Exit codes: 0 stopped (or another host already
runs for the profile: it is reported and nothing starts), 75 replaced by a restart, 1 the tree
failed (a crash report is written, see ``_crash``).

A restart that went (``Host.replacement``) stops this host as a stop does; then its lock is
released and the next host is started the way ``robota server start`` starts one
(``_spawn``), and awaited until ready, before this process exits 75: whoever supervises it
(systemd, a terminal) sees a deliberate exit, never a gap it would fill with a second host.
"""

from __future__ import annotations

import faulthandler
import logging
import sys
import time
from collections.abc import Callable
from typing import IO, TYPE_CHECKING

from robota.core import robota_version
from robota.core.control import HostAlreadyRunning, HostState, acquire_host_lock

from ._crash import write_crash_report
from ._engine_host import load_profile
from ._host import Host
from ._signals import STOP_SIGNALS, run_until_stopped
from ._spawn import READY_TIMEOUT, host_logs, spawn_host, wait_ready

if TYPE_CHECKING:
    from robota.core.config import Config, Profile

__all__ = ["EXIT_CRASHED", "EXIT_REPLACED", "EXIT_STOPPED", "STOP_SIGNALS", "run_host"]

logger = logging.getLogger("robota.host")

EXIT_STOPPED = 0
EXIT_REPLACED = 75
EXIT_CRASHED = 1

_fault_log: IO[str] | None = None
"""Kept open for the process's life: faulthandler writes to its descriptor when it dies."""


def _enable_faulthandler(profile: Profile) -> None:
    """Fatal errors' tracebacks (a segfault, a deadlock dump) go to ``logs/host.stderr.log``,
    whether the host runs detached (that file is its stderr) or in a terminal."""
    global _fault_log  # noqa: PLW0603 (one per process, by nature)
    if _fault_log is not None:
        return
    _, path = host_logs(profile)
    try:
        profile.log_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        _fault_log = path.open("a", encoding="utf-8")
        path.chmod(0o600)
    except OSError as error:
        logger.warning("host: cannot open %s for faulthandler: %s", path, error)
        return
    faulthandler.enable(_fault_log)


def run_host(*, on_running: Callable[[HostState | None, str], None]) -> int:
    """Run the host in this process until stopped; ``on_running`` reports a host that already
    runs for the profile (then nothing starts and the exit code is 0)."""
    config, profile = load_profile()
    try:
        lock = acquire_host_lock(profile.host_lock, profile.host_state_file)
    except HostAlreadyRunning as running:
        on_running(running.state, str(running))
        return EXIT_STOPPED
    _enable_faulthandler(profile)
    started = time.monotonic()
    with lock:
        host = Host(config, profile, lock)
        try:
            run_until_stopped(host)
        except Exception as failed:
            return _crashed(config, profile, failed, time.monotonic() - started)
    if host.replacement is not None:
        return _replace(config, profile, host.replacement.id, time.monotonic() - started)
    return EXIT_STOPPED


def _leaves(error: BaseException) -> list[BaseException]:
    """The errors inside trio's exception groups (the nurseries wrap what a child raised)."""
    if isinstance(error, BaseExceptionGroup):
        return [leaf for inner in error.exceptions for leaf in _leaves(inner)]
    return [error]


def _crashed(config: Config, profile: Profile, failed: Exception, uptime: float) -> int:
    logger.error("host: the supervision tree failed", exc_info=failed)
    causes = "; ".join(f"{type(e).__name__}: {e}" for e in _leaves(failed))
    reason = f"the supervision tree failed: {causes}"
    try:
        report = write_crash_report(
            config, profile, reason=reason, uptime=uptime, version=robota_version()
        )
    except OSError as error:
        logger.error("host: cannot write the crash report: %s", error)  # noqa: TRY400
        report = None
    print(f"robota: the host failed: {causes}", file=sys.stderr)
    if report is not None:
        print(f"robota: crash report: {report}", file=sys.stderr)
    return EXIT_CRASHED


def _replace(config: Config, profile: Profile, schedule_id: str, uptime: float) -> int:
    """Start the next host (this one's lock is released) and wait until it is ready."""
    logger.info("restart %s: starting the next host", schedule_id)
    try:
        process = spawn_host(profile)
    except OSError as error:
        reason = f"restart {schedule_id}: the next host could not start: {error}"
        return _crashed(config, profile, RuntimeError(reason), uptime)
    outcome = wait_ready(profile, process, READY_TIMEOUT)
    if outcome.kind in ("ready", "serving", "other"):
        pid = outcome.status.get("pid") if outcome.status else None
        logger.info("restart %s: host %s serves the profile", schedule_id, pid)
        return EXIT_REPLACED
    if outcome.kind == "timeout":
        # It may still come up; it holds the lock, so nobody should start another.
        logger.warning(
            "restart %s: the next host (pid %d) is not ready yet", schedule_id, process.pid
        )
        return EXIT_REPLACED
    reason = f"restart {schedule_id}: the next host exited with {outcome.code} before ready"
    return _crashed(config, profile, RuntimeError(reason), uptime)
