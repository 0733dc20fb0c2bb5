"""Which process owns a task: one row per owned task in ``task_owners`` (migration 7).

A task is driven by one process at a time: the host, a background session or the daemon. The
row says which (``owner``: ``host`` or ``session:ID``), how to tell that process is still the
one that claimed (``pid`` and ``process_start``, as control registrations do), where to ask it
(``socket``, and ``token``: what a request to it must carry, a session's registration
generation) and the row's ``generation``: 1 for the first claim, one more on every change of
owner. Whoever decides that the owner is gone takes the task over with ``ClaimTask(...,
replaces=generation)``: a compare-and-swap, so of two processes that both found the owner gone
only one takes it (the other's claim returns the winner's row).

An owner that lets go of a task while it runs on (an interactive terminal switched to another
task) releases it (``ReleaseTask``): the row stays with its generation, its process no longer
named (``pid`` 0, no ``process_start``), so the next claimer finds its owner gone and takes it
over as from an ended process (``replaces``), the generation still one more on every change.
"""

from __future__ import annotations

from dataclasses import dataclass

from ._database import Database
from ._records import stamp

__all__ = ["ClaimTask", "ReleaseTask", "TaskOwner", "task_owner"]


@dataclass(frozen=True, slots=True)
class TaskOwner:
    task_id: str
    owner: str
    """``host``, or ``session:ID`` for a background session or the daemon."""
    pid: int
    process_start: int | None
    socket: str
    token: str
    """What a request to the owner carries (a session's registration generation; empty for
    the host)."""
    generation: int
    claimed_at: float


def task_owner(db: Database, task_id: str) -> TaskOwner | None:
    row = db.execute(
        "SELECT task_id, owner, pid, process_start, socket, token, generation, claimed_at "
        "FROM task_owners WHERE task_id = ?",
        (task_id,),
    ).fetchone()
    return TaskOwner(*row) if row is not None else None


@dataclass(frozen=True, slots=True)
class ClaimTask:
    """Own ``task_id``; the row after the claim (the claimer's, or the owner that stays).

    Taken when no process owns the task, when the claimer already does (the same owner, pid
    and process start: nothing changes), or when the row's generation is ``replaces`` (the
    claimer found that owner gone); else the row is left as it is."""

    task_id: str
    owner: str
    pid: int
    process_start: int | None
    socket: str
    token: str = ""
    replaces: int | None = None
    at: float | None = None

    def apply(self, db: Database, /) -> TaskOwner:
        current = task_owner(db, self.task_id)
        mine = current is not None and (current.owner, current.pid, current.process_start) == (
            self.owner,
            self.pid,
            self.process_start,
        )
        if current is not None and (mine or current.generation != self.replaces):
            return current
        claimed = TaskOwner(
            self.task_id,
            self.owner,
            self.pid,
            self.process_start,
            self.socket,
            self.token,
            1 if current is None else current.generation + 1,
            stamp(self.at),
        )
        db.execute(
            "INSERT INTO task_owners (task_id, owner, pid, process_start, socket, token, "
            "generation, claimed_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?) "
            "ON CONFLICT (task_id) DO UPDATE SET owner = excluded.owner, pid = excluded.pid, "
            "process_start = excluded.process_start, socket = excluded.socket, "
            "token = excluded.token, generation = excluded.generation, "
            "claimed_at = excluded.claimed_at",
            (
                claimed.task_id,
                claimed.owner,
                claimed.pid,
                claimed.process_start,
                claimed.socket,
                claimed.token,
                claimed.generation,
                claimed.claimed_at,
            ),
        )
        return claimed


@dataclass(frozen=True, slots=True)
class ReleaseTask:
    """Let go of ``task_id`` (module docstring), only while this owner (the same owner, pid and
    process start) holds it; whether it did."""

    task_id: str
    owner: str
    pid: int
    process_start: int | None

    def apply(self, db: Database, /) -> bool:
        cursor = db.execute(
            "UPDATE task_owners SET pid = 0, process_start = NULL "
            "WHERE task_id = ? AND owner = ? AND pid = ? AND process_start IS ?",
            (self.task_id, self.owner, self.pid, self.process_start),
        )
        return cursor.rowcount > 0
