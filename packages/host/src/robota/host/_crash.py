"""Crash reports: what an unexpected exit of the host leaves for whoever looks next.

An exit is unexpected when the supervision tree failed (exit code 1); a stop (0) and a
replacement by a restart (75) leave nothing. The report is ``data/crash-reports/crash-<UTC
timestamp>.json`` and the same content in ``data/last-crash.json``: the time, the exit
reason, the host's uptime, its pid and version, and the last lines of the profile's logs
(``robota.log`` and ``host.stderr.log``, where faulthandler writes). Never the environment:
the lines pass through the same ``Redactor`` the JSON log uses, with the profile's secrets,
so a token an agent echoed into a traceback is masked here too. Both files are owner-only.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from ._spawn import host_logs, tail

if TYPE_CHECKING:
    from robota.core.config import Config, Profile

__all__ = ["LOG_LINES", "crash_report", "write_crash_report"]

LOG_LINES = 40
"""Lines kept from the end of each log."""


def crash_report(
    *,
    reason: str,
    uptime: float,
    pid: int,
    version: str,
    logs: dict[str, list[str]],
    secrets: Iterable[str],
    now: datetime,
) -> dict[str, object]:
    """The report's content (pure). ``logs`` maps a log's file name to its last lines."""
    from robota.core.logs import Redactor  # noqa: PLC0415

    redactor = Redactor(secrets)
    return {
        "time": now.astimezone(UTC).isoformat(timespec="seconds"),
        "exit_code": 1,
        "exit_reason": redactor.redact(reason),
        "uptime_seconds": round(max(0.0, uptime), 3),
        "pid": pid,
        "version": version,
        "log_lines": {
            name: [redactor.redact(line) for line in lines] for name, lines in logs.items()
        },
    }


def write_crash_report(
    config: Config,
    profile: Profile,
    *,
    reason: str,
    uptime: float,
    version: str,
    now: datetime | None = None,
) -> Path:
    """Write the report (see the module docstring); the timestamped file's path."""
    from robota.core.config import atomic_write  # noqa: PLC0415

    moment = now or datetime.now(UTC)
    _, stderr_log = host_logs(profile)
    logs = {path.name: tail(path, LOG_LINES) for path in (config.logging.path, stderr_log)}
    report = crash_report(
        reason=reason,
        uptime=uptime,
        pid=os.getpid(),
        version=version,
        logs=logs,
        secrets=config.secrets,
        now=moment,
    )
    data = json.dumps(report, indent=2, ensure_ascii=False).encode() + b"\n"
    reports = profile.data_dir / "crash-reports"
    reports.mkdir(mode=0o700, parents=True, exist_ok=True)
    stamp = moment.astimezone(UTC).strftime("%Y%m%dT%H%M%S.%fZ")
    path = reports / f"crash-{stamp}.json"
    atomic_write(path, data)
    atomic_write(profile.data_dir / "last-crash.json", data)
    return path
