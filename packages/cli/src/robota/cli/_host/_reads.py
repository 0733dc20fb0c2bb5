"""What the host and the ``task`` commands read from the store: tasks as ``task list`` shows
them, and the routes a task is current on.

Read-only, on a connection of their own (``open_reader``), so ``task list`` and ``task
status`` work whether or not a host runs, and never wait for one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from robota.core.store import Database, Task, active_turn_attempts, tasks

from ._routing import route_kind

__all__ = ["TaskRow", "count_routes", "routes_of", "task_rows"]


@dataclass(frozen=True, slots=True)
class TaskRow:
    """One line of ``task list``: ``number`` is its place in the newest-first list."""

    number: int
    task: Task
    state: str
    """``running`` while an attempt is unfinished, else its last turn's status, else ``new``."""
    route: str | None
    """The route the task is current on (newest), ``None`` when on none."""

    @property
    def route_kind(self) -> str | None:
        return route_kind(self.route) if self.route is not None else None

    def to_json(self) -> dict[str, object]:
        task = self.task
        return {
            "number": self.number,
            "id": task.id,
            "title": task.title,
            "agent": task.agent,
            "cwd": task.cwd,
            "state": self.state,
            "route": self.route,
            "route_kind": self.route_kind,
            "last_activity": task.updated_at,
            "created_at": task.created_at,
            "last_turn_id": task.last_turn_id,
        }


def routes_of(db: Database, task_id: str) -> list[str]:
    """The routes ``task_id`` is current on, most recently bound first."""
    rows = db.query(
        "SELECT route_key FROM routes WHERE current_task_id = ? "
        "ORDER BY updated_at DESC, route_key",
        (task_id,),
    )
    return [str(row["route_key"]) for row in rows]


def count_routes(db: Database) -> int:
    """Routes the store knows (each has been bound to a task)."""
    row = db.execute("SELECT COUNT(*) FROM routes").fetchone()
    return int(row[0]) if row is not None else 0


def task_rows(db: Database, *, limit: int) -> list[TaskRow]:
    """The ``limit`` most recently active tasks, newest first, numbered from 1."""
    listed: Sequence[Task] = tasks(db, limit=limit)
    running = {a.task_id for a in active_turn_attempts(db)}
    rows = []
    for number, task in enumerate(listed, start=1):
        state = "running" if task.id in running else (task.last_turn_status or "new")
        current = routes_of(db, task.id)
        rows.append(TaskRow(number, task, state, current[0] if current else None))
    return rows
