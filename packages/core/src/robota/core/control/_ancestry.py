"""Who may approve: a caller whose process ancestry reaches an agent robota started is refused.

What the spec gives to "the operator" (attaching a terminal to a session, trusting a
workspace, confirming a device's pairing) is asked on a controlling terminal. A terminal is no
proof of a person: an agent can open a pty of its own (``script -qc 'robota session attach
ID' /dev/null`` with ``y`` piped in). What an agent cannot shed is where it came from: every
process robota starts for an agent (the agent, the terminals robota runs for it, what robota
prestarts) carries the agent reaper's mark (``REAPER_MARK`` in its environment, see
``robota.runtimes._reaper``), and ``/proc/PID/environ`` keeps the environment a process was
started with, whatever it later unsets. Everything the agent starts is its descendant, or at
least in its process group or session. So a caller is refused when any process on its parent
chain, or the leader of such a process's group or session, carries the mark.

``judge_caller`` is the decision over a process lookup (pure; tested with a table);
``caller_refusal`` runs it on this machine's ``/proc``. The caller is the control socket's
peer (``SO_PEERCRED``'s pid) for a request a host serves, this process for a question a
command asks itself. A chain that cannot be read to its end on a system that has ``/proc``
(a process vanished mid-walk, a loop) is refused: unknown means no. Without ``/proc`` (macOS)
there is nothing to read and no refusal; the check is Linux's.

Known limit: a process that double-forks into a new session and is reparented to init (or a
subreaper) leaves the agent's chain; its own environment still holds the mark unless it
re-executes with a scrubbed one, which is what the walk cannot see.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

__all__ = ["REAPER_MARK", "ProcessEntry", "caller_refusal", "judge_caller", "read_process"]

REAPER_MARK = "ROBOTA_REAPER_MARK"
"""The agent reaper's mark (``robota.runtimes``' ``MARK``; a test holds the two equal): core
cannot import the runtimes package, so the name is repeated here."""

_MAX_DEPTH = 1024
"""No real process chain is this deep; a longer walk is a loop in what was read."""

_MARKED = "the mark robota gives the agents it starts"

Lookup = Callable[[int], "ProcessEntry | None"]


@dataclass(frozen=True, slots=True)
class ProcessEntry:
    """What the walk needs of one process."""

    pid: int
    ppid: int
    pgid: int
    sid: int
    name: str
    marked: bool
    """Its environment holds ``REAPER_MARK``."""


def judge_caller(pid: int, lookup: Lookup) -> str | None:
    """Why the process ``pid`` may not approve (its chain reaches an agent's process, or cannot
    be read), or ``None`` when it may. ``lookup`` gives a process's entry, ``None`` for one
    that does not exist (or cannot be read)."""
    seen: set[int] = set()
    current = pid
    while current > 0:
        if current in seen or len(seen) >= _MAX_DEPTH:
            return f"the ancestry of process {pid} loops at process {current}"
        seen.add(current)
        entry = lookup(current)
        if entry is None:
            return f"the ancestry of process {pid} cannot be read (process {current} is gone)"
        for leader_pid in (entry.pid, entry.pgid, entry.sid):
            leader = entry if leader_pid == entry.pid else lookup(leader_pid)
            if leader is not None and leader.marked:
                if leader.pid == pid:
                    return f"process {pid} ({leader.name}) carries {_MARKED}"
                return (
                    f"process {pid} descends from process {leader.pid} ({leader.name}), "
                    f"which carries {_MARKED}"
                )
        current = entry.ppid
    return None


def _stat_fields(raw: str) -> tuple[str, list[str]]:
    """The command name and the fields after it: the name is in parentheses and may itself
    hold spaces and parentheses, so the fields start after the last ``)``."""
    open_at, close_at = raw.index("("), raw.rindex(")")
    return raw[open_at + 1 : close_at], raw[close_at + 2 :].split()


def read_process(pid: int, proc: Path = Path("/proc")) -> ProcessEntry | None:
    """``pid``'s entry from ``proc``; ``None`` when it is gone or its stat cannot be read. An
    environment another user's process keeps from us (``PermissionError``) is unmarked: a
    robota of ours cannot have started it."""
    base = proc / str(pid)
    try:
        name, fields = _stat_fields((base / "stat").read_text("utf-8", "replace"))
        # Fields after the name: state, ppid, pgrp, session (proc(5)).
        ppid, pgid, sid = int(fields[1]), int(fields[2]), int(fields[3])
    except (OSError, ValueError, IndexError):
        return None
    try:
        environ = (base / "environ").read_bytes()
    except PermissionError:
        environ = b""
    except OSError:
        return None
    marked = any(item.startswith(REAPER_MARK.encode() + b"=") for item in environ.split(b"\0"))
    return ProcessEntry(pid=pid, ppid=ppid, pgid=pgid, sid=sid, name=name, marked=marked)


def caller_refusal(pid: int, proc: Path = Path("/proc")) -> str | None:
    """``judge_caller`` on this machine for ``pid`` (``os.getpid()`` for this process);
    ``None`` where there is no ``proc`` to read."""
    if not proc.is_dir():
        return None
    return judge_caller(pid, lambda p: read_process(p, proc))
