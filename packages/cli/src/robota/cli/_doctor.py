"""What ``robota doctor`` checks, as functions from facts to verdicts.

Each check returns a ``Check``: a name, a status (``ok``, ``warn``, ``fail``), what was found,
and, when something is wrong, the exact thing to do about it. The checks read the profile, the
store and the agents but change nothing: doctor never creates, migrates or repairs.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import stat
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from robota.core import ProbeReport, RuntimePlugin
    from robota.core.config import AgentConfig, Config, Profile

__all__ = [
    "Check",
    "check_agent_command",
    "check_config_file",
    "check_logs",
    "check_private",
    "check_store",
    "from_probe",
]

Status = Literal["ok", "warn", "fail"]


@dataclass(frozen=True, slots=True)
class Check:
    name: str
    status: Status
    detail: str
    fix: str | None = None
    stderr_tail: tuple[str, ...] | None = None
    """An agent whose probe failed: the last lines it wrote on stderr (secrets masked)."""

    def as_json(self) -> dict[str, str | list[str] | None]:
        fields = asdict(self)
        tail = fields.pop("stderr_tail")
        return fields if tail is None else {**fields, "stderr_tail": list(tail)}


def check_private(name: str, path: Path, *, directory: bool) -> Check:
    """Owner-only is the rule for the profile home and the .env: they hold credentials."""
    want = 0o700 if directory else 0o600
    try:
        info = path.stat()
    except FileNotFoundError:
        return Check(name, "fail", f"{path} does not exist", "run: robota init")
    mode = stat.S_IMODE(info.st_mode)
    if mode & 0o077:
        return Check(
            name, "warn", f"{path} is mode {mode:04o}, readable by others", f"chmod {want:o} {path}"
        )
    return Check(name, "ok", f"{path} (mode {mode:04o})")


def check_config_file(config: Config) -> Check:
    agents = ", ".join(config.agents)
    return Check(
        "config",
        "ok",
        f"{config.file}: agents {agents}; default {config.defaults.agent}",
    )


def check_logs(path: Path) -> Check:
    directory = path.parent
    probe = directory
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    if not os.access(probe, os.W_OK):
        return Check("logs", "fail", f"{directory} is not writable", f"check the owner of {probe}")
    if not directory.exists():
        return Check("logs", "ok", f"{path} (the directory is created on first start)")
    return Check("logs", "ok", str(path))


def check_store(path: Path, latest_version: int) -> Check:
    """Open the database read-only, never creating or migrating it."""
    if not path.exists():
        if not os.access(_existing_parent(path), os.W_OK):
            return Check(
                "store", "fail", f"cannot create {path}", f"check the owner of {path.parent}"
            )
        return Check("store", "ok", f"{path} (created on first start)")
    try:
        connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=2)
    except sqlite3.Error as error:
        return Check("store", "fail", f"{path}: cannot open: {error}")
    try:
        quick = connection.execute("PRAGMA quick_check").fetchone()[0]
        journal = connection.execute("PRAGMA journal_mode").fetchone()[0]
        tables = {r[0] for r in connection.execute("SELECT name FROM sqlite_master")}
        version = 0
        if "schema_versions" in tables:
            version = connection.execute("SELECT MAX(version) FROM schema_versions").fetchone()[0]
            version = int(version or 0)
    except sqlite3.Error as error:
        return Check("store", "fail", f"{path}: {error}", f"move {path} aside and start again")
    finally:
        connection.close()
    if quick != "ok":
        return Check(
            "store",
            "fail",
            f"{path}: integrity check says {quick}",
            f"move {path} aside and start again",
        )
    if version > latest_version:
        return Check(
            "store",
            "fail",
            f"{path} has schema v{version}, newer than this robota (v{latest_version})",
            "upgrade robota, or point storage.sqlitePath elsewhere",
        )
    where = f"{path} (schema v{version}, journal {journal})"
    if version < latest_version:
        return Check("store", "warn", f"{where}; migrates to v{latest_version} on next start")
    if journal.lower() != "wal":
        return Check("store", "warn", f"{where}; switches to WAL on next start")
    return Check("store", "ok", where)


def _existing_parent(path: Path) -> Path:
    probe = path.parent
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    return probe


def check_agent_command(
    agent: AgentConfig, plugins: dict[str, RuntimePlugin], install_hint: str | None
) -> Check | None:
    """Problems that make a probe pointless; ``None`` when the probe should run."""
    name = f"agent {agent.name}"
    if agent.kind not in plugins:
        return Check(
            name,
            "fail",
            f"no runtime plugin for kind {agent.kind!r}",
            f"kinds installed: {', '.join(sorted(plugins)) or 'none'}",
        )
    if shutil.which(agent.command) is None:
        fix = f"install it: {install_hint}" if install_hint else f"put {agent.command} on PATH"
        return Check(name, "fail", f"{agent.command!r} not found on PATH", fix)
    return None


def from_probe(report: ProbeReport, install_hint: str | None) -> Check:
    name = f"agent {report.agent}"
    if report.ok:
        version = report.version or "version unknown"
        return Check(name, "ok", f"{report.kind} {version}, handshake in {report.seconds:.2f} s")
    fix = f"reinstall: {install_hint}" if install_hint else None
    return Check(name, "fail", report.detail, fix, report.stderr_tail)


def summary(checks: Sequence[Check]) -> Status:
    statuses = {c.status for c in checks}
    return "fail" if "fail" in statuses else "warn" if "warn" in statuses else "ok"


def describe_profile(profile: Profile) -> dict[str, str]:
    return {
        "home": str(profile.home),
        "config": str(profile.config_file),
        "data": str(profile.data_dir),
        "logs": str(profile.log_dir),
    }
