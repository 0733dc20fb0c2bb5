"""The workspace's daemon: a background session marked so, at most one per workspace.

Two locks, both in the rendezvous directory and named by the workspace's key (a hash of its
path, so no path is in a file name):

* the **start lock** ``daemon-KEY.start``, created exclusively (``O_EXCL``) by the one
  ``daemon start`` that goes on to start a daemon, and removed only by that start (its token
  is in the file) or by ``robota daemon unlock``. Racing starts that find it wait for the
  winner's daemon and are handed that one; a start lock whose taker died stays until the user
  unlocks it, as the user asked for.
* the **daemon lock** ``daemon-KEY.lock``, an ``flock`` the daemon's process holds for its
  life: even after an ``unlock`` mid-race, a second daemon of the workspace finds it held and
  exits before it registers.

A running daemon is handed to a start only when both agree on Restricted: a ``--restricted``
start never gets one with the project's configuration, a plain start never a Restricted one.

Stdlib and ``robota.core.control`` only.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from robota.core.control import (
    Registration,
    ensure_runtime_dir,
    owner_verified,
    process_start_ticks,
    read_registrations,
)

if TYPE_CHECKING:
    from robota.core.config import Profile

__all__ = [
    "StartLock",
    "daemon_lock_paths",
    "find_daemon",
    "start_lock_holder",
    "start_lock_path",
    "take_start_lock",
    "unlock",
    "workspace_key",
]


def workspace_key(workspace: Path) -> str:
    return hashlib.sha256(str(workspace).encode()).hexdigest()[:16]


def start_lock_path(profile: Profile, workspace: Path) -> Path:
    return profile.sessions_dir / f"daemon-{workspace_key(workspace)}.start"


def daemon_lock_paths(profile: Profile, workspace: Path) -> tuple[Path, Path]:
    """The daemon's life lock and the (unused but guarded) state file beside it."""
    key = workspace_key(workspace)
    return (
        profile.sessions_dir / f"daemon-{key}.lock",
        profile.sessions_dir / f"daemon-{key}.held",
    )


@dataclass(frozen=True, slots=True)
class StartLock:
    """A start lock this process took; ``release`` removes it only while it is still ours."""

    path: Path
    token: str

    def release(self) -> None:
        with contextlib.suppress(OSError):
            if self.path.read_text().split()[-1:] == [self.token]:
                self.path.unlink()


def take_start_lock(profile: Profile, workspace: Path) -> StartLock | None:
    """The start lock, or ``None`` when another start holds it."""
    ensure_runtime_dir(profile.sessions_dir)
    path = start_lock_path(profile, workspace)
    token = secrets.token_hex(8)
    # Written beside it, then linked into place: the lock appears whole. Created empty and
    # then written, a racing start could read it in between and take its holder for gone.
    written = path.with_name(f"{path.name}.{token}")
    fd = os.open(written, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "w") as file:
            file.write(f"{os.getpid()} {process_start_ticks(os.getpid()) or 0} {token}\n")
        os.link(written, path)
    except FileExistsError:
        return None
    finally:
        written.unlink(missing_ok=True)
    return StartLock(path, token)


def start_lock_holder(profile: Profile, workspace: Path) -> tuple[int, bool] | None:
    """Who holds the start lock (pid, whether that process start still runs), or ``None``
    when nobody does."""
    try:
        fields = start_lock_path(profile, workspace).read_text().split()
    except FileNotFoundError:
        return None
    except OSError:
        return (0, False)
    if len(fields) != 3 or not fields[0].isdigit() or not fields[1].isdigit():
        return (0, False)
    pid, ticks = int(fields[0]), int(fields[1])
    return pid, process_start_ticks(pid) == ticks


def unlock(profile: Profile, workspace: Path) -> bool:
    """Remove the start lock whoever took it (``robota daemon unlock``); whether one was."""
    try:
        start_lock_path(profile, workspace).unlink()
    except FileNotFoundError:
        return False
    return True


def find_daemon(profile: Profile, workspace: Path) -> Registration | None:
    """The workspace's daemon whose owner is verified live, if one runs."""
    for _id, registration, _problem in read_registrations(profile.sessions_dir):
        if (
            registration is not None
            and registration.daemon
            and registration.workspace == str(workspace)
            and owner_verified(registration)
        ):
            return registration
    return None
