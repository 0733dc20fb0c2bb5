"""A route's tasks beyond the current one: making another current, forking one, and the session
spec a task opens its agent session with.

Functions of the route (``ConversationRoute``), run in its thread, like the commands in
``_route_commands`` and the history in ``_route_history``; they change the route only through
its own methods.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING

from ..agents import PERMISSION_MODES, SessionSpec
from ..store import Database, Task, find_turn_attempt, head_attempt
from ..store import task as load_task
from ._context import EngineContext, new_task_id

if TYPE_CHECKING:
    from ._route import ConversationRoute

__all__ = ["fork_task", "projectless_cwd", "session_of_turn", "session_spec", "use_task"]


def use_task(route: ConversationRoute, task_id: str) -> bool:
    """Make ``task_id`` current and open its session; ``False`` (and a reply) if not."""
    if route.turn is not None:
        route.reply("a turn is running: /stop it first, or wait", error=True)
        return False
    task = load_task(route.db, task_id)
    if task is None:
        route.reply(f"no task {task_id!r}", error=True)
        return False
    if task.agent not in route.ctx.agents:
        route.reply(
            f"task {task_id} belongs to agent {task.agent!r}, not configured here", error=True
        )
        return False
    route.bind_task(task, create=False)
    route.open_session(task)
    return True


def fork_task(route: ConversationRoute, task_id: str, title: str | None = None) -> None:
    """Make a new task current that starts from ``task_id``'s latest completed turn."""
    if route.turn is not None:
        route.reply("a turn is running: /stop it first, or wait", error=True)
        return
    source = load_task(route.db, task_id)
    if source is None:
        route.reply(f"no task {task_id!r}", error=True)
        return
    completed = head_attempt(route.db, source)
    if source.remote_id is None or completed is None:
        route.reply(f"task {source.id} has no completed turn to fork from", error=True)
        return
    created = route.ctx.clock()
    fork = replace(
        source,
        id=new_task_id(),
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


def projectless_cwd(ctx: EngineContext) -> Path:
    """Today's folder for tasks without a project (``/new --nodir``), created if need be."""
    root = ctx.defaults.workspace or ctx.defaults.cwd
    folder = root / date.fromtimestamp(ctx.clock()).isoformat()
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def session_spec(route: ConversationRoute, task: Task) -> SessionSpec:
    """What ``task``'s agent session opens with: resumed, forked, or reset to a turn."""
    mode = task.permission_mode if task.permission_mode in PERMISSION_MODES else "default"
    resume_id, fork_from, fork_turn_id = task.remote_id, None, task.fork_turn_id
    reset = route.resetting
    if reset is not None and reset.task_id == task.id:
        resume_id, fork_from, fork_turn_id = None, reset.thread, reset.attempt.remote_turn_id
    elif task.forked_from is not None and task.remote_id is None:
        source = load_task(route.db, task.forked_from)
        if source is not None:
            fork_from = session_of_turn(route.db, source, task.fork_turn_id)
    return SessionSpec(
        cwd=Path(task.cwd),
        permission_mode=mode,
        model=task.model,
        effort=task.effort,
        resume_id=resume_id,
        human_approves=route.ctx.human_approves,
        developer_instructions=task.developer_instructions,
        fork_from=fork_from,
        fork_turn_id=fork_turn_id,
    )


def session_of_turn(db: Database, source: Task, remote_turn_id: str | None) -> str | None:
    """The agent session that ran ``remote_turn_id`` of ``source`` (a reset may have bound the
    task to another since), else the task's current one."""
    if remote_turn_id is not None:
        for attempt in find_turn_attempt(db, source.id, remote_turn_id):
            if attempt.remote_turn_id == remote_turn_id and attempt.remote_session_id:
                return attempt.remote_session_id
    return source.remote_id
