"""The clients' side of background sessions: starting one detached and waiting until it is
ready, the inventory ``session list`` shows, and finding the verified start a control request
must name.

A session starts the way the host starts (``_spawn.spawn_detached``: a session of its own,
stdio to ``logs/session-ID.*.log``) as ``robota session run`` with its id; the launcher waits
until that very process (its pid) registered and answers ``session.status`` ready.

Stdlib and ``robota.core.control`` only: no client command loads the engine.
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from robota.core.control import (
    SESSION_ID,
    ControlClient,
    ControlError,
    Registration,
    list_state,
    listing_row,
    owner_verified,
    read_registrations,
)

from ._spawn import READY_TIMEOUT, spawn_detached

if TYPE_CHECKING:
    from robota.core.config import Profile

__all__ = [
    "SessionSpec",
    "SessionUnverified",
    "session_paths",
    "SessionStart",
    "session_logs",
    "session_named",
    "session_rows",
    "spawn_session",
    "verified_session",
    "wait_session_ready",
    "workspace_of",
]

_POLL = 0.1
STATUS_TIMEOUT = 5.0


def session_paths(profile: Profile, session_id: str) -> tuple[Path, Path, Path]:
    """The session's lock, registration and control socket."""
    base = profile.sessions_dir
    return base / f"{session_id}.lock", base / f"{session_id}.json", base / f"{session_id}.sock"


@dataclass(frozen=True, slots=True)
class SessionSpec:
    """What a background session was started with."""

    session_id: str
    name: str
    agent: str
    cwd: Path
    workspace: Path
    daemon: bool = False
    restricted: bool = False
    task: str | None = None
    """An existing task to continue (its id or title as typed), instead of a new one."""


def workspace_of(path: Path) -> Path:
    """The workspace ``path`` is in: its git repository's root, or the directory itself."""
    from robota.core.trust import workspace_root  # noqa: PLC0415

    return workspace_root(path)


def session_logs(profile: Profile, session_id: str) -> tuple[Path, Path]:
    return (
        profile.log_dir / f"session-{session_id}.stdout.log",
        profile.log_dir / f"session-{session_id}.stderr.log",
    )


def session_argv(spec: SessionSpec) -> list[str]:
    """``robota session run`` for ``spec`` with this interpreter."""
    args = [
        "session",
        "run",
        "--id",
        spec.session_id,
        "--name",
        spec.name,
        "--agent",
        spec.agent,
        "--cwd",
        str(spec.cwd),
    ]
    if spec.daemon:
        args.append("--daemon")
    if spec.restricted:
        args.append("--restricted")
    if spec.task is not None:
        args += ["--task", spec.task]
    return [sys.executable, "-c", f"from robota.cli import main; main({args!r})"]


def spawn_session(profile: Profile, spec: SessionSpec) -> subprocess.Popen[bytes]:
    return spawn_detached(profile, session_argv(spec), session_logs(profile, spec.session_id))


def status_of(registration: Registration, timeout: float = STATUS_TIMEOUT) -> dict[str, Any] | None:
    """The owner's ``session.status``, or ``None`` when it does not answer."""
    try:
        with ControlClient(Path(registration.socket), timeout=timeout) as client:
            result = client.call("session.status")
    except (ControlError, OSError):
        return None
    return result if isinstance(result, dict) else None


@dataclass(frozen=True, slots=True)
class SessionStart:
    """How a start ended: ``ready`` (the registration), ``exited`` (``code``), ``timeout``."""

    kind: Literal["ready", "exited", "timeout"]
    registration: Registration | None = None
    code: int | None = None


def _registration(profile: Profile, session_id: str) -> Registration | None:
    for found_id, registration, _problem in read_registrations(profile.sessions_dir):
        if found_id == session_id:
            return registration
    return None


def wait_session_ready(
    profile: Profile,
    session_id: str,
    process: subprocess.Popen[bytes],
    timeout: float = READY_TIMEOUT,
) -> SessionStart:
    """Wait until ``process`` registered ``session_id`` and answers ready."""
    deadline = time.monotonic() + timeout
    while True:
        code = process.poll()
        registration = _registration(profile, session_id)
        if registration is not None and registration.pid == process.pid:
            status = status_of(registration)
            if status is not None and status.get("ready") is True:
                return SessionStart("ready", registration)
        if code is not None:
            return SessionStart("exited", code=code)
        if time.monotonic() >= deadline:
            return SessionStart("timeout")
        time.sleep(_POLL)


def session_rows(profile: Profile) -> list[dict[str, object]]:
    """``session list``: one content-free row per registration, damaged ones included."""
    rows = []
    for session_id, registration, problem in read_registrations(profile.sessions_dir):
        if registration is None:
            rows.append(listing_row(None, session_id=session_id, state="unknown", problem=problem))
            continue
        verified = owner_verified(registration)
        status = status_of(registration) if verified else None
        # Asked after the status too: a pid recycled meanwhile would answer for another start.
        verified = verified and owner_verified(registration)
        reported = status.get("state") if status is not None else None
        state = list_state(verified=verified, reported=reported)
        rows.append(listing_row(registration, session_id=session_id, state=state))
    return rows


class SessionUnverified(ControlError):
    """The session named cannot be controlled; the message says why."""


MIN_PREFIX = 4
"""Hex digits of an id prefix taken as naming a session (fewer would name one by accident)."""


def session_named(known: Sequence[tuple[str, str | None]], wanted: str) -> str:
    """The id of the session ``wanted`` names, of the ``(id, name)`` registered now (a damaged
    registration has no name): a whole id as it is, else the one session of that name, else
    the one id it begins (``MIN_PREFIX`` digits or more); ``SessionUnverified`` otherwise.

    Asked once, when the command runs: what it names is the start registered then, and the
    control request names that start's generation, as an id typed out would.
    """
    if SESSION_ID.fullmatch(wanted):
        return wanted
    for kind, ids in (
        ("are named", [i for i, name in known if name is not None and name == wanted]),
        (
            "have ids starting",
            [i for i, _ in known if len(wanted) >= MIN_PREFIX and i.startswith(wanted)],
        ),
    ):
        if len(ids) == 1:
            return ids[0]
        if ids:
            raise SessionUnverified(
                f"{len(ids)} sessions {kind} {wanted!r} ({', '.join(sorted(ids))}): "
                "name one by its id"
            )
    raise SessionUnverified(
        f"no session is named {wanted!r} or has an id starting with it (robota session list)"
    )


def verified_session(profile: Profile, wanted: str) -> Registration:
    """The registration of the session ``wanted`` names (``session_named``) whose owner is
    verified live (pid and start time), or ``SessionUnverified`` saying why not."""
    registered = read_registrations(profile.sessions_dir)
    session_id = session_named(
        [(found, None if reg is None else reg.name) for found, reg, _ in registered], wanted
    )
    _lock, path, _socket = session_paths(profile, session_id)
    for found_id, registration, problem in registered:
        if found_id != session_id:
            continue
        if registration is None:
            raise SessionUnverified(f"session {session_id}: {problem}; it cannot be controlled")
        if not owner_verified(registration):
            raise SessionUnverified(
                f"session {session_id}: its process start cannot be verified (pid "
                f"{registration.pid} is gone or is another process); nothing was done"
            )
        return registration
    raise SessionUnverified(f"no session {session_id} is registered ({path.parent})")
