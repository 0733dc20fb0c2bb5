"""Creating a profile, or bringing an existing one up to date with the packaged templates.

Everything happens under the profile's init lock, so two ``robota init`` runs (a user and a
provisioning script, say) serialize instead of interleaving their merges. Running it again is
safe: files that already have everything are left byte-identical, and the report says
``unchanged``.
"""

from __future__ import annotations

import shutil
import stat
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from ._dotenv import merge_dotenv
from ._files import PRIVATE_FILE_MODE, atomic_write, ensure_private_dir
from ._load import read_text
from ._lock import init_lock
from ._merge import merge_config_text
from ._paths import Profile
from ._templates import template_text

__all__ = ["FileOutcome", "FileStatus", "InitResult", "init_profile"]

FileStatus = Literal["created", "updated", "unchanged"]


@dataclass(frozen=True, slots=True)
class FileOutcome:
    path: Path
    status: FileStatus


@dataclass(frozen=True, slots=True)
class InitResult:
    """What ``init_profile`` did, file by file."""

    profile: Profile
    config: FileOutcome
    env: FileOutcome
    data_dir: FileOutcome
    log_dir: FileOutcome
    backup: Path | None
    """Where ``reset`` moved the previous files; ``None`` when nothing was moved."""


def _sync(path: Path, template: str, merge: Callable[[str, str], str]) -> FileStatus:
    """Create ``path`` from ``template`` or merge the template into it."""
    if not path.exists():
        ensure_private_dir(path.parent)
        atomic_write(path, template.encode("utf-8"))
        return "created"
    existing = read_text(path)
    merged = merge(existing, template)
    if merged == existing:
        return "unchanged"
    mode = stat.S_IMODE(path.stat().st_mode)
    atomic_write(path, merged.encode("utf-8"), mode=mode)
    return "updated"


def _tighten(path: Path, status: FileStatus) -> FileStatus:
    """Make a secrets file owner-only; a looser file counts as updated."""
    mode = stat.S_IMODE(path.stat().st_mode)
    if mode & 0o077:
        path.chmod(mode & ~0o077 | PRIVATE_FILE_MODE)
        return "updated" if status == "unchanged" else status
    return status


def _backup_dir(profile: Profile, now: float) -> Path:
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(now))
    candidate = profile.backups_dir / stamp
    suffix = 1
    while candidate.exists():
        candidate = profile.backups_dir / f"{stamp}-{suffix}"
        suffix += 1
    return candidate


def _move_to_backup(profile: Profile, now: float) -> Path | None:
    moves = [
        (profile.config_file, profile.config_file.name),
        (profile.env_file, ".env"),
        (profile.data_dir, "data"),
        (profile.log_dir, "logs"),
    ]
    present = [(source, name) for source, name in moves if source.exists()]
    if not present:
        return None
    target = _backup_dir(profile, now)
    ensure_private_dir(profile.backups_dir)
    ensure_private_dir(target)
    for source, name in present:
        shutil.move(source, target / name)
    return target


def _directory(path: Path) -> FileOutcome:
    return FileOutcome(path, "created" if ensure_private_dir(path) else "unchanged")


def init_profile(
    profile: Profile,
    *,
    reset: bool = False,
    lock_timeout: float = 120.0,
    on_wait: Callable[[int | None], None] | None = None,
    now: float | None = None,
) -> InitResult:
    """Create or update ``profile`` from the packaged templates.

    With ``reset``, the existing config file, .env, data and log directories are first moved
    to ``<home>/.reset-backups/<UTC timestamp>/``. Raises ``ConfigError`` when the existing
    config.yaml or .env cannot be parsed; the file is then left untouched.
    """
    ensure_private_dir(profile.home)
    with init_lock(profile.init_lock, timeout=lock_timeout, on_wait=on_wait):
        backup = _move_to_backup(profile, time.time() if now is None else now) if reset else None
        config = _sync(
            profile.config_file,
            template_text("config.yaml"),
            lambda existing, template: merge_config_text(
                existing, template, file=str(profile.config_file)
            ),
        )
        env = _tighten(
            profile.env_file, _sync(profile.env_file, template_text("env"), merge_dotenv)
        )
        return InitResult(
            profile=profile,
            config=FileOutcome(profile.config_file, config),
            env=FileOutcome(profile.env_file, env),
            data_dir=_directory(profile.data_dir),
            log_dir=_directory(profile.log_dir),
            backup=backup,
        )
