"""Supervised background sessions' registrations, their liveness, and what a listing shows.

Each background session (``robota session start --background``, the workspace's daemon) is a
process of its own serving one session over its own control socket. In the profile's
owner-only rendezvous directory (``Profile.sessions_dir``, 0700) it keeps three files named by
its id: ``ID.lock`` (an ``flock`` held for the process's life, as the host holds its own),
``ID.sock`` (its control socket, 0600, peer uid checked) and ``ID.json``, its registration
(0600, written atomically once it serves): id, name, pid, the process's start time as the
kernel counts it (field 22 of ``/proc/PID/stat``, clock ticks since boot), a fresh random
generation per process start, and what it serves.

Liveness is never a guess: a registration's owner is *verified* only when its pid is alive and
that pid's start time is the registered one (a recycled pid has another). Anything else (no
``/proc``, a dead or recycled pid, a damaged file) makes the session's state ``unknown``.

The generation is the start's secret handle: control requests (stop, rename) must name it, and
the session refuses any other, so a request acts only on the process start its caller read. It
never appears in a listing; ``listing_row`` is the one place a row is made, content-free.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path

from ._errors import ControlError

__all__ = [
    "SESSION_ID",
    "SESSION_STATES",
    "BadRegistration",
    "Registration",
    "listing_row",
    "list_state",
    "now_iso",
    "own_process_start",
    "owner_verified",
    "parse_registration",
    "process_start_ticks",
    "read_registrations",
]

SESSION_ID = re.compile(r"[0-9a-f]{12}")
"""A session id: 12 lower-case hex digits (it names files, so nothing else is accepted)."""

SESSION_STATES = ("working", "needs-input", "idle", "completed", "failed", "stopped", "unknown")
"""What a listing may say of a session; a live owner reports one of the first six."""

_OWNER_STATES = frozenset(SESSION_STATES) - {"unknown"}

_FIELDS: dict[str, type] = {
    "id": str,
    "name": str,
    "pid": int,
    "process_start": int,
    "generation": str,
    "started_at": str,
    "agent": str,
    "daemon": bool,
    "restricted": bool,
    "workspace": str,
    "socket": str,
}


class BadRegistration(ControlError, ValueError):
    """A registration file that is not a session's registration; the message says what."""


@dataclass(frozen=True, slots=True)
class Registration:
    id: str
    name: str
    pid: int
    process_start: int
    """The owner's start time, in clock ticks since boot (``/proc/PID/stat`` field 22)."""
    generation: str
    """This process start's random handle; control requests must name it."""
    started_at: str
    """ISO 8601, UTC, seconds precision."""
    agent: str
    daemon: bool
    """The workspace's daemon (at most one per workspace)."""
    restricted: bool
    """Runs Restricted (the project's own settings ignored, permission mode ``plan``)."""
    workspace: str
    """The workspace it serves (a repository's root, or the directory)."""
    socket: str

    def to_json(self) -> bytes:
        return json.dumps(asdict(self), indent=2).encode() + b"\n"


def now_iso() -> str:
    return datetime.now(UTC).replace(microsecond=0).isoformat()


def parse_registration(text: str | bytes) -> Registration:
    """A registration file's content; ``BadRegistration`` names what is wrong."""
    try:
        obj = json.loads(text)
    except ValueError:
        raise BadRegistration("not JSON") from None
    if not isinstance(obj, dict):
        raise BadRegistration("not a JSON object")
    for name, kind in _FIELDS.items():
        value = obj.get(name)
        wrong_bool = kind is not bool and isinstance(value, bool)
        if not isinstance(value, kind) or wrong_bool:
            found = "nothing" if name not in obj else type(value).__name__
            raise BadRegistration(f"field {name!r} must be {kind.__name__}, found {found}")
    if not SESSION_ID.fullmatch(obj["id"]):
        raise BadRegistration("field 'id' is not a session id")
    if obj["pid"] <= 0 or obj["process_start"] < 0 or not obj["generation"]:
        raise BadRegistration("field 'pid', 'process_start' or 'generation' is out of range")
    return Registration(**{name: obj[name] for name in _FIELDS})


def process_start_ticks(pid: int) -> int | None:
    """When ``pid`` started, in clock ticks since boot; ``None`` when that cannot be read
    (no such process, a zombie, no ``/proc``)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # The command name (field 2) is in parentheses and may hold spaces or ')'.
    fields = stat.rsplit(") ", 1)[-1].split()
    if len(fields) < 20 or fields[0] == "Z":
        return None
    try:
        return int(fields[19])  # field 22 overall; fields[0] is field 3
    except ValueError:
        return None


def owner_verified(registration: Registration) -> bool:
    """Whether the registered process start is the one running now (pid and start time)."""
    return process_start_ticks(registration.pid) == registration.process_start


def list_state(*, verified: bool, reported: object) -> str:
    """A listing's state: what a verified live owner reported, else ``unknown``."""
    if verified and isinstance(reported, str) and reported in _OWNER_STATES:
        return reported
    return "unknown"


def listing_row(
    registration: Registration | None, *, session_id: str, state: str, problem: str | None = None
) -> dict[str, object]:
    """One row of ``session list``: content-free (no prompt, answer, path or generation).
    ``registration`` is ``None`` for a damaged one, listed as unavailable with ``problem``."""
    if registration is None:
        return {
            "id": session_id,
            "name": None,
            "state": "unknown",
            "started_at": None,
            "agent": None,
            "daemon": False,
            "unavailable": problem or "the registration cannot be read",
        }
    return {
        "id": registration.id,
        "name": registration.name,
        "state": state,
        "started_at": registration.started_at,
        "agent": registration.agent,
        "daemon": registration.daemon,
    }


def read_registrations(
    directory: Path,
) -> list[tuple[str, Registration | None, str | None]]:
    """Every registration in ``directory``: (id, the registration or ``None``, why not), by id;
    a damaged one is reported, never skipped."""
    try:
        names = sorted(p for p in directory.iterdir() if p.suffix == ".json")
    except FileNotFoundError:
        return []
    found: list[tuple[str, Registration | None, str | None]] = []
    for path in names:
        session_id = path.stem
        try:
            registration = parse_registration(path.read_bytes())
        except OSError as error:
            found.append((session_id, None, f"cannot be read ({error.strerror or error})"))
            continue
        except BadRegistration as error:
            found.append((session_id, None, f"damaged registration: {error}"))
            continue
        if registration.id != session_id:
            found.append((session_id, None, "damaged registration: its id is not its name"))
            continue
        found.append((session_id, registration, None))
    return found


def own_process_start() -> int:
    """This process's start time in clock ticks (``0`` where ``/proc`` is missing: then no
    registration of it can be verified, and its sessions list as ``unknown``)."""
    return process_start_ticks(os.getpid()) or 0
