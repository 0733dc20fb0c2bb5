"""Tasks, the routes that point at them, and how their turns ended: records, ops and queries.

A *task* is one conversation with one agent in one working directory: robota's id for it, the
agent's own id (App Server thread, ACP session) once the agent opened it, and the settings every
turn and every fork inherits. A *route* (a terminal, a chat, a thread) has a current task and
remembers the previous one. Both live here, next to the turn attempts they own.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import cast

from ._database import Database
from ._records import (
    ACTIVE_TURN_STATUSES,
    JSONValue,
    TurnAttempt,
    _opt_text,
    _Row,
    _text,
    dump_json,
    stamp,
)

__all__ = [
    "BindRouteTask",
    "CreateTask",
    "FinishTurnAttempt",
    "RouteBinding",
    "Task",
    "UpdateTask",
    "active_turn_attempts",
    "find_task",
    "latest_task",
    "latest_turn_attempt",
    "route_binding",
    "task",
    "task_turn_attempts",
    "tasks",
]


@dataclass(frozen=True, slots=True)
class Task:
    id: str
    agent: str
    cwd: str
    runtime_kind: str
    remote_id: str | None
    """The agent's id of the conversation, known once the agent opened it."""
    title: str | None
    model: str | None
    effort: str | None
    permission_mode: str | None
    provider: str | None
    forked_from: str | None
    fork_turn_id: str | None
    developer_instructions: str | None
    last_turn_id: str | None
    last_turn_status: str | None
    created_at: float
    updated_at: float
    head_attempt_id: str | None = None
    """The completed attempt the conversation stands at: the latest completed one, or the
    one the task was reset to."""

    @classmethod
    def from_row(cls, row: _Row) -> Task:
        return cls(
            id=_text(row, "id"),
            agent=_text(row, "agent"),
            cwd=_text(row, "cwd"),
            runtime_kind=_text(row, "runtime_kind"),
            remote_id=_opt_text(row, "remote_id"),
            title=_opt_text(row, "title"),
            model=_opt_text(row, "model"),
            effort=_opt_text(row, "effort"),
            permission_mode=_opt_text(row, "permission_mode"),
            provider=_opt_text(row, "provider"),
            forked_from=_opt_text(row, "forked_from"),
            fork_turn_id=_opt_text(row, "fork_turn_id"),
            developer_instructions=_opt_text(row, "developer_instructions"),
            last_turn_id=_opt_text(row, "last_turn_id"),
            last_turn_status=_opt_text(row, "last_turn_status"),
            created_at=float(cast(float, row["created_at"])),
            updated_at=float(cast(float, row["updated_at"])),
            head_attempt_id=_opt_text(row, "head_attempt_id"),
        )


@dataclass(frozen=True, slots=True)
class RouteBinding:
    route_key: str
    current_task_id: str | None
    previous_task_id: str | None


# -- ops -------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CreateTask:
    """Insert a task; its settings are fixed here (a fork copies them from its source)."""

    id: str
    agent: str
    cwd: str
    runtime_kind: str
    title: str | None = None
    model: str | None = None
    effort: str | None = None
    permission_mode: str | None = None
    provider: str | None = None
    forked_from: str | None = None
    fork_turn_id: str | None = None
    developer_instructions: str | None = None
    remote_id: str | None = None
    """Set when the task adopts a session the agent already has (one another client made)."""
    at: float | None = None

    def apply(self, db: Database, /) -> None:
        now = stamp(self.at)
        db.execute(
            "INSERT INTO tasks (id, agent, cwd, runtime_kind, title, model, effort, "
            "permission_mode, provider, forked_from, fork_turn_id, developer_instructions, "
            "remote_id, created_at, updated_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                self.id,
                self.agent,
                self.cwd,
                self.runtime_kind,
                self.title,
                self.model,
                self.effort,
                self.permission_mode,
                self.provider,
                self.forked_from,
                self.fork_turn_id,
                self.developer_instructions,
                self.remote_id,
                now,
                now,
            ),
        )


_UPDATABLE = ("remote_id", "title", "model", "effort", "permission_mode", "provider")


@dataclass(frozen=True, slots=True)
class UpdateTask:
    """Set the given fields of a task (``None`` leaves a field as it is); ``False`` if the
    task does not exist. ``last_turn_*`` record the latest turn's outcome for listings."""

    id: str
    remote_id: str | None = None
    title: str | None = None
    model: str | None = None
    effort: str | None = None
    permission_mode: str | None = None
    provider: str | None = None
    last_turn_id: str | None = None
    last_turn_status: str | None = None
    at: float | None = None

    def apply(self, db: Database, /) -> bool:
        fields = {name: getattr(self, name) for name in (*_UPDATABLE, "last_turn_id")}
        fields["last_turn_status"] = self.last_turn_status
        changes = {name: value for name, value in fields.items() if value is not None}
        assignments = "".join(f"{name} = ?, " for name in changes)
        cursor = db.execute(
            f"UPDATE tasks SET {assignments}updated_at = ? WHERE id = ?",
            (*changes.values(), stamp(self.at), self.id),
        )
        return cursor.rowcount == 1


@dataclass(frozen=True, slots=True)
class BindRouteTask:
    """Make ``task_id`` the route's current task; the one it replaces becomes the previous."""

    route_key: str
    task_id: str
    at: float | None = None

    def apply(self, db: Database, /) -> None:
        db.execute(
            "INSERT INTO routes (route_key, current_task_id, updated_at) VALUES (?, ?, ?) "
            "ON CONFLICT (route_key) DO UPDATE SET "
            "previous_task_id = CASE WHEN routes.current_task_id IS excluded.current_task_id "
            "THEN routes.previous_task_id ELSE routes.current_task_id END, "
            "current_task_id = excluded.current_task_id, updated_at = excluded.updated_at",
            (self.route_key, self.task_id, stamp(self.at)),
        )


@dataclass(frozen=True, slots=True)
class FinishTurnAttempt:
    """End an attempt: completed, failed or interrupted, with what it produced.

    Also the task's latest turn, in the same savepoint, so listings never disagree with the
    attempt. ``False`` when the attempt had already finished (a duplicate end is ignored).
    """

    id: str
    status: str
    remote_turn_id: str | None = None
    final_text: str | None = None
    error: str | None = None
    usage: JSONValue = None
    at: float | None = None

    def apply(self, db: Database, /) -> bool:
        if self.status not in ("completed", "failed", "interrupted"):
            raise ValueError(
                f"a finished attempt is completed, failed or interrupted: {self.status!r}"
            )
        now = stamp(self.at)
        placeholders = ", ".join("?" for _ in ACTIVE_TURN_STATUSES)
        cursor = db.execute(
            "UPDATE turn_attempts SET status = ?, remote_turn_id = coalesce(?, remote_turn_id), "
            "final_text = ?, error = ?, usage_json = ?, finished_at = ?, updated_at = ? "
            f"WHERE id = ? AND status IN ({placeholders})",
            (
                self.status,
                self.remote_turn_id,
                self.final_text,
                self.error,
                None if self.usage is None else dump_json(self.usage),
                now,
                now,
                self.id,
                *ACTIVE_TURN_STATUSES,
            ),
        )
        if cursor.rowcount != 1:
            return False
        db.execute(
            "UPDATE tasks SET last_turn_id = ?, last_turn_status = ?, updated_at = ?, "
            "head_attempt_id = CASE WHEN ? = 'completed' THEN ? ELSE head_attempt_id END "
            "WHERE id = (SELECT task_id FROM turn_attempts WHERE id = ?)",
            (self.id, self.status, now, self.status, self.id, self.id),
        )
        return True


@dataclass(frozen=True, slots=True)
class ResetTaskToTurn:
    """Bind a task to a new agent session forked through one of its completed turns, which
    becomes where the conversation stands; audited as ``session_reset_to_turn``. ``False``
    when the task or the turn is not there (or the turn is not a completed one of the task)."""

    task_id: str
    attempt_id: str
    remote_id: str
    at: float | None = None

    def apply(self, db: Database, /) -> bool:
        now = stamp(self.at)
        cursor = db.execute(
            "UPDATE tasks SET remote_id = ?, head_attempt_id = ?, updated_at = ? "
            "WHERE id = ? AND EXISTS (SELECT 1 FROM turn_attempts WHERE id = ? "
            "AND task_id = ? AND status = 'completed')",
            (self.remote_id, self.attempt_id, now, self.task_id, self.attempt_id, self.task_id),
        )
        if cursor.rowcount != 1:
            return False
        payload = {
            "task_id": self.task_id,
            "attempt_id": self.attempt_id,
            "remote_id": self.remote_id,
        }
        db.execute(
            "INSERT INTO audit_events (event_type, payload_json, created_at) VALUES (?, ?, ?)",
            ("session_reset_to_turn", dump_json(payload), now),
        )
        return True


# -- queries ---------------------------------------------------------------------------------


def task(db: Database, task_id: str) -> Task | None:
    rows = list(db.query("SELECT * FROM tasks WHERE id = ?", (task_id,)))
    return Task.from_row(rows[0]) if rows else None


def tasks(db: Database, *, limit: int = 50, search: str | None = None) -> list[Task]:
    """Tasks, most recently used first; ``search`` matches id, title or working directory."""
    if search:
        pattern = f"%{search}%"
        rows = db.query(
            "SELECT * FROM tasks WHERE id LIKE ? OR title LIKE ? OR cwd LIKE ? "
            "ORDER BY updated_at DESC, rowid DESC LIMIT ?",
            (pattern, pattern, pattern, limit),
        )
    else:
        rows = db.query(
            "SELECT * FROM tasks ORDER BY updated_at DESC, rowid DESC LIMIT ?", (limit,)
        )
    return [Task.from_row(row) for row in rows]


def latest_task(db: Database, *, cwd: str, agent: str | None = None) -> Task | None:
    """The most recently used task in ``cwd`` (of ``agent``, when given)."""
    if agent is None:
        rows = db.query(
            "SELECT * FROM tasks WHERE cwd = ? ORDER BY updated_at DESC, rowid DESC LIMIT 1",
            (cwd,),
        )
    else:
        rows = db.query(
            "SELECT * FROM tasks WHERE cwd = ? AND agent = ? "
            "ORDER BY updated_at DESC, rowid DESC LIMIT 1",
            (cwd, agent),
        )
    found = list(rows)
    return Task.from_row(found[0]) if found else None


def find_task(db: Database, id_or_name: str) -> list[Task]:
    """Tasks named by ``id_or_name``: the task with that id, else those whose id starts with
    it, else those titled exactly so (newest first). Several results mean it is ambiguous."""
    exact = task(db, id_or_name)
    if exact is not None:
        return [exact]
    rows = list(
        db.query(
            "SELECT * FROM tasks WHERE id LIKE ? ESCAPE '\\' ORDER BY updated_at DESC LIMIT 10",
            (_prefix_pattern(id_or_name),),
        )
    )
    if not rows:
        rows = list(
            db.query(
                "SELECT * FROM tasks WHERE title = ? ORDER BY updated_at DESC LIMIT 10",
                (id_or_name,),
            )
        )
    return [Task.from_row(row) for row in rows]


def route_binding(db: Database, route_key: str) -> RouteBinding | None:
    row = db.execute(
        "SELECT current_task_id, previous_task_id FROM routes WHERE route_key = ?", (route_key,)
    ).fetchone()
    if row is None:
        return None
    return RouteBinding(route_key, row[0], row[1])


def task_turn_attempts(
    db: Database, task_id: str, *, status: str | None = None, limit: int = 100
) -> list[TurnAttempt]:
    """A task's attempts, newest first (optionally only those in ``status``)."""
    if status is None:
        rows = db.query(
            "SELECT * FROM turn_attempts WHERE task_id = ? ORDER BY created_at DESC, rowid DESC "
            "LIMIT ?",
            (task_id, limit),
        )
    else:
        rows = db.query(
            "SELECT * FROM turn_attempts WHERE task_id = ? AND status = ? "
            "ORDER BY created_at DESC, rowid DESC LIMIT ?",
            (task_id, status, limit),
        )
    return [TurnAttempt.from_row(row) for row in rows]


def latest_turn_attempt(db: Database, task_id: str, *, status: str) -> TurnAttempt | None:
    found = task_turn_attempts(db, task_id, status=status, limit=1)
    return found[0] if found else None


def find_turn_attempt(db: Database, task_id: str, ref: str) -> list[TurnAttempt]:
    """A task's attempts whose id is ``ref`` or starts with it (the listings show 8 hex
    digits), or whose agent turn id is ``ref``."""
    rows = db.query(
        "SELECT * FROM turn_attempts WHERE task_id = ? AND (id = ? OR id LIKE ? ESCAPE '\\' "
        "OR remote_turn_id = ?) ORDER BY created_at DESC, rowid DESC LIMIT 10",
        (task_id, ref, _prefix_pattern(ref), ref),
    )
    return [TurnAttempt.from_row(row) for row in rows]


def task_with_remote(db: Database, agent: str, remote_id: str) -> Task | None:
    """The task bound to the agent's session ``remote_id``, if robota has one."""
    rows = list(
        db.query(
            "SELECT * FROM tasks WHERE agent = ? AND remote_id = ? "
            "ORDER BY updated_at DESC LIMIT 1",
            (agent, remote_id),
        )
    )
    return Task.from_row(rows[0]) if rows else None


def bound_sessions(db: Database, remote_ids: Collection[str]) -> set[tuple[str, str]]:
    """``(agent, remote_id)`` of every task bound to one of ``remote_ids``: one query for a
    whole listing of agent sessions."""
    ids = list(remote_ids)
    found: set[tuple[str, str]] = set()
    for start in range(0, len(ids), 500):  # within SQLite's limit on bound parameters
        chunk = ids[start : start + 500]
        marks = ", ".join("?" for _ in chunk)
        rows = db.execute(f"SELECT agent, remote_id FROM tasks WHERE remote_id IN ({marks})", chunk)
        found.update((str(agent), str(remote)) for agent, remote in rows.fetchall())
    return found


def head_attempt(db: Database, task: Task) -> TurnAttempt | None:
    """Where the task's conversation stands (see ``Task.head_attempt_id``); for rows written
    before heads were recorded, the latest completed attempt."""
    if task.head_attempt_id is not None:
        rows = list(db.query("SELECT * FROM turn_attempts WHERE id = ?", (task.head_attempt_id,)))
        if rows:
            return TurnAttempt.from_row(rows[0])
    return latest_turn_attempt(db, task.id, status="completed")


def active_turn_attempts(db: Database) -> list[TurnAttempt]:
    """Every attempt not yet finished, oldest first: what recovery looks at on start."""
    placeholders = ", ".join("?" for _ in ACTIVE_TURN_STATUSES)
    rows = db.query(
        f"SELECT * FROM turn_attempts WHERE status IN ({placeholders}) ORDER BY created_at, id",
        ACTIVE_TURN_STATUSES,
    )
    return [TurnAttempt.from_row(row) for row in rows]


def _prefix_pattern(prefix: str) -> str:
    """A LIKE pattern (with ``ESCAPE '\\'``) matching what starts with ``prefix``."""
    return prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
