"""A route's tasks beyond the current one: making another current, forking one, and the folder
of a task without a project.

Functions of ``RouteData``, pure like the rest of the core: they read through its port and
change it, and every write, agent request or directory to create is an effect.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import date
from pathlib import Path

from ._route_effects import MakeDirectory
from ._route_state import BUSY, RouteData

__all__ = ["fork_task", "projectless_cwd", "use_task"]


def use_task(route: RouteData, task_id: str) -> bool:
    """Make ``task_id`` current and open its session; ``False`` (and a reply) if not."""
    if route.turn is not None:
        route.reply(BUSY, error=True)
        return False
    task = route.reads.task(task_id)
    if task is None:
        route.reply(f"no task {task_id!r}", error=True)
        return False
    if task.agent not in route.agents:
        route.reply(
            f"task {task_id} belongs to agent {task.agent!r}, not configured here", error=True
        )
        return False
    route.bind_task(task, create=False)
    route.open_session(task)
    return True


def fork_task(route: RouteData, task_id: str, title: str | None = None) -> None:
    """Make a new task current that starts from ``task_id``'s latest completed turn."""
    if route.turn is not None:
        route.reply(BUSY, error=True)
        return
    source = route.reads.task(task_id)
    if source is None:
        route.reply(f"no task {task_id!r}", error=True)
        return
    completed = route.reads.head_attempt(source)
    if source.remote_id is None or completed is None:
        route.reply(f"task {source.id} has no completed turn to fork from", error=True)
        return
    created = route.ids.wall()
    fork = replace(
        source,
        id=route.ids.task_id(),
        remote_id=None,
        title=title,
        forked_from=source.id,
        fork_turn_id=completed.remote_turn_id,
        last_turn_id=None,
        last_turn_status=None,
        created_at=created,
        updated_at=created,
    )
    route.bind_task(fork, create=True)
    route.open_session(fork)


def projectless_cwd(route: RouteData) -> Path:
    """Today's folder for tasks without a project (``/new --nodir``), created if need be (the
    ``MakeDirectory`` effect runs before the session that works in it can open)."""
    root = route.defaults.workspace or route.defaults.cwd
    folder = root / date.fromtimestamp(route.ids.wall()).isoformat()
    route.emit(MakeDirectory(folder))
    return folder
