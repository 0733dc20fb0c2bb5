"""Reads of tasks, of the routes that point at them, and of the turn attempts tasks own.

Each takes a reader's connection (``open_reader``, a ``ReaderPool``'s) and returns records: a
task by id, by an id's prefix or a title (``find_task``), the latest in a directory, the one
bound to an agent's session; a route's binding; a task's attempts and where its conversation
stands (``head_attempt``); every attempt not yet finished, what recovery looks at on start.
"""

from __future__ import annotations

from collections.abc import Collection

from ._database import Database
from ._records import ACTIVE_TURN_STATUSES, TurnAttempt
from ._task_records import RouteBinding, Task

__all__ = [
    "active_turn_attempts",
    "bound_sessions",
    "find_task",
    "find_turn_attempt",
    "head_attempt",
    "latest_task",
    "latest_turn_attempt",
    "route_binding",
    "task",
    "task_turn_attempts",
    "task_with_remote",
    "tasks",
]


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
