"""What a running host publishes about itself, and whether a host is running at all.

The host writes ``host.json`` (pid, start time, version, profile, socket) once it holds the
profile's host lock, and removes it when it stops. A killed host leaves the file behind, so the
file alone proves nothing: the lock decides (the kernel releases it when its holder dies), and
the file says who holds it. ``judge_presence`` is that decision as a pure function of what was
observed; ``_host_lock.probe_host`` observes.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path

from ._errors import ControlError

__all__ = [
    "BadHostState",
    "HostPresence",
    "HostState",
    "Presence",
    "judge_presence",
    "parse_host_state",
    "pid_alive",
    "read_host_state",
]

_FIELDS: dict[str, type] = {
    "pid": int,
    "started_at": str,
    "version": str,
    "profile": str,
    "socket": str,
}


class BadHostState(ControlError, ValueError):
    """``host.json`` holds something other than a host's state; the message says what."""


@dataclass(frozen=True, slots=True)
class HostState:
    pid: int
    started_at: str
    """ISO 8601, UTC, seconds precision: ``2026-12-01T21:30:00+00:00``."""
    version: str
    profile: str
    """The profile's config directory."""
    socket: str
    """The control socket's path."""

    @classmethod
    def of_this_process(
        cls, *, version: str, profile: Path, socket: Path, now: datetime | None = None
    ) -> HostState:
        started = (now or datetime.now(UTC)).astimezone(UTC).replace(microsecond=0)
        return cls(os.getpid(), started.isoformat(), version, str(profile), str(socket))

    def to_json(self) -> bytes:
        return json.dumps(asdict(self), indent=2).encode() + b"\n"


def parse_host_state(text: str | bytes) -> HostState:
    """``host.json``'s content to a ``HostState``; ``BadHostState`` names what is wrong."""
    try:
        obj = json.loads(text)
    except ValueError as error:
        raise BadHostState(f"not JSON: {error}") from None
    if not isinstance(obj, dict):
        raise BadHostState(f"expected a JSON object, found {type(obj).__name__}")
    for name, kind in _FIELDS.items():
        value = obj.get(name)
        if not isinstance(value, kind) or isinstance(value, bool):
            found = "nothing" if name not in obj else type(value).__name__
            raise BadHostState(f"field {name!r} must be {kind.__name__}, found {found}")
    if obj["pid"] <= 0:
        raise BadHostState(f"field 'pid' must be positive, found {obj['pid']}")
    try:
        datetime.fromisoformat(obj["started_at"])
    except ValueError:
        raise BadHostState(
            f"field 'started_at' must be an ISO 8601 time, found {obj['started_at']!r}"
        ) from None
    return HostState(**{name: obj[name] for name in _FIELDS})


def read_host_state(path: Path) -> tuple[HostState | None, str | None]:
    """The state at ``path`` and, when there is none to use, why (``None, None``: no file)."""
    try:
        text = path.read_bytes()
    except FileNotFoundError:
        return None, None
    except OSError as error:
        return None, f"{path}: cannot be read: {error.strerror or error}"
    try:
        return parse_host_state(text), None
    except ValueError as error:
        return None, f"{path}: {error}"


def pid_alive(pid: int) -> bool:
    """Whether a process ``pid`` runs. A zombie does not: a detached host's parent may never
    reap it, and its pid must not keep a stale state file looking alive."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # it exists, under another user
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True  # no /proc (macOS): the kill test is all there is
    return stat.rsplit(") ", 1)[-1][:1] != "Z"


class Presence(StrEnum):
    RUNNING = "running"
    """The lock is held and the state names a live process."""
    STARTING = "starting"
    """The lock is held but no current state is published yet (a host is coming up)."""
    NOT_RUNNING = "not_running"


@dataclass(frozen=True, slots=True)
class HostPresence:
    presence: Presence
    state: HostState | None
    """The published state when a host runs; ``None`` otherwise (a stale file is not used)."""
    reason: str
    """Why, in a sentence a ``status`` command can print."""

    @property
    def running(self) -> bool:
        return self.presence is Presence.RUNNING


def judge_presence(
    *,
    lock_held: bool,
    state: HostState | None,
    state_problem: str | None,
    state_pid_alive: bool,
) -> HostPresence:
    """Whether a host runs, from the lock, the state file and its pid's liveness."""
    if not lock_held:
        if state is not None:
            why = f"no host holds the lock; the state left by pid {state.pid} is stale"
        else:
            why = "no host holds the lock"
        return HostPresence(Presence.NOT_RUNNING, None, why)
    if state is None:
        why = state_problem or "a process holds the host lock but has published no state yet"
        return HostPresence(Presence.STARTING, None, why)
    if not state_pid_alive:
        why = f"a process holds the host lock; the state's pid {state.pid} is gone (stale)"
        return HostPresence(Presence.STARTING, None, why)
    return HostPresence(Presence.RUNNING, state, f"pid {state.pid} holds the host lock")
