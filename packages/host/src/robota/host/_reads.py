"""What the host and the ``task`` commands read from the store: tasks as ``task list`` shows
them, and the routes a task is current on.

Read-only, on a connection of their own (``open_reader``), so ``task list`` and ``task
status`` work whether or not a host runs, and never wait for one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from robota.core.store import (
    Database,
    Task,
    active_turn_attempts,
    find_task,
    pending_prompts,
    task_mobility,
    task_turn_attempts,
    tasks,
)
from robota.core.store import task as load_task

from ._routing import route_kind
from ._task_names import TaskLookup

__all__ = [
    "TaskRow",
    "count_routes",
    "routes_of",
    "task_number",
    "task_rows",
    "task_lookup",
    "task_status",
    "tasks_with_remote_id",
]


@dataclass(frozen=True, slots=True)
class TaskRow:
    """One line of ``task list``: ``number`` is its place in the newest-first list."""

    number: int
    task: Task
    state: str
    """``running`` while an attempt is unfinished, else its last turn's status, else ``new``;
    a task a handoff concerns is ``moving`` (pushed, takes no input), ``moved`` (to
    ``moved_to``) or ``held`` (arrived, not startable until its source lets go)."""
    route: str | None
    """The route the task is current on (newest), ``None`` when on none."""
    moved_to: str | None = None
    """The device a ``moved`` task went to."""

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
            **({"movedTo": self.moved_to} if self.moved_to is not None else {}),
        }


def routes_of(db: Database, task_id: str) -> list[str]:
    """The routes ``task_id`` is current on, most recently bound first."""
    rows = db.query(
        "SELECT route_key FROM routes WHERE current_task_id = ? "
        "ORDER BY updated_at DESC, route_key",
        (task_id,),
    )
    return [str(row["route_key"]) for row in rows]


def tasks_with_remote_id(db: Database, remote_id: str) -> list[Task]:
    """The tasks bound to the agent session ``remote_id`` (of any agent), newest first."""
    rows = db.query(
        "SELECT * FROM tasks WHERE remote_id = ? ORDER BY updated_at DESC, rowid DESC LIMIT 10",
        (remote_id,),
    )
    return [Task.from_row(row) for row in rows]


def task_lookup(db: Database) -> TaskLookup:
    """What ``pick_task`` asks of the store, answered by ``db``: the host resolves the TASK of
    a request with it, ``task status`` the one typed on its command line."""

    def numbered(number: int) -> Task | None:
        listed = tasks(db, limit=number)
        return listed[number - 1] if len(listed) >= number else None

    return TaskLookup(
        by_id=lambda task_id: load_task(db, task_id),
        numbered=numbered,
        matching=lambda name: find_task(db, name),
        by_remote_id=lambda remote_id: tasks_with_remote_id(db, remote_id),
    )


def count_routes(db: Database) -> int:
    """Routes the store knows (each has been bound to a task)."""
    row = db.execute("SELECT COUNT(*) FROM routes").fetchone()
    return int(row[0]) if row is not None else 0


def task_rows(db: Database, *, limit: int) -> list[TaskRow]:
    """The ``limit`` most recently active tasks (all with a negative ``limit``), newest first,
    numbered from 1: a task's number is its place among all tasks, as TASK names it."""
    listed: Sequence[Task] = tasks(db, limit=limit)
    running = {a.task_id for a in active_turn_attempts(db)}
    rows = []
    for number, task in enumerate(listed, start=1):
        current = routes_of(db, task.id)
        rows.append(_row(db, number, task, running, current[0] if current else None))
    return rows


def _row(db: Database, number: int, task: Task, running: set[str], route: str | None) -> TaskRow:
    mobility = task_mobility(db, task.id)
    if mobility is not None:
        moved_to = mobility.peer if mobility.state == "moved" else None
        return TaskRow(number, task, mobility.state, route, moved_to)
    state = "running" if task.id in running else (task.last_turn_status or "new")
    return TaskRow(number, task, state, route)


def task_number(db: Database, task_id: str) -> int | None:
    """The task's number in ``task list`` (newest first over all tasks), ``None`` if unknown."""
    row = db.execute(
        "SELECT COUNT(*) FROM tasks AS t, "
        "(SELECT updated_at AS u, rowid AS r FROM tasks WHERE id = ?) AS me "
        "WHERE t.updated_at > me.u OR (t.updated_at = me.u AND t.rowid >= me.r)",
        (task_id,),
    ).fetchone()
    count = int(row[0]) if row is not None else 0
    return count or None


def task_status(db: Database, task: Task) -> dict[str, object]:
    """``task status --json``: the task's ``task list`` fields, the routes it is current on,
    what waits in their queues, and its latest turn."""
    current = routes_of(db, task.id)
    running = {a.task_id for a in active_turn_attempts(db)}
    row = _row(db, task_number(db, task.id) or 0, task, running, current[0] if current else None)
    latest = task_turn_attempts(db, task.id, limit=1)
    turn = latest[0] if latest else None
    return {
        **row.to_json(),
        "routes": current,
        "queued": {key: len(pending_prompts(db, key)) for key in current},
        "remote_id": task.remote_id,
        "model": task.model,
        "permission_mode": task.permission_mode,
        "forked_from": task.forked_from,
        "last_turn": None
        if turn is None
        else {
            "id": turn.id,
            "status": turn.status,
            "prompt": turn.prompt,
            "final": turn.final_text,
            "error": turn.error,
            "created_at": turn.created_at,
            "finished_at": turn.finished_at,
        },
    }
