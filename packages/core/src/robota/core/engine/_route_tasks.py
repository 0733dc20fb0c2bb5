"""A route's tasks beyond the current one: making another current, forking one, and the folder
of a task without a project.

Functions of ``RouteData``, pure like the rest of the core: they read through its port and
change it, and every write, agent request or directory to create is an effect.
"""

from __future__ import annotations

from datetime import date
from pathlib import Path

from .._records import replace
from ..store import Task, TurnAttempt
from ._route_effects import MakeDirectory
from ._route_state import BUSY, RouteData

__all__ = ["fork_task", "projectless_cwd", "prompt_summary", "use_task"]


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
    refusal = route.reads.immobile(task_id)
    if refusal is not None:
        route.reply(refusal, error=True)  # its session is not opened: it runs elsewhere
        return False
    route.bind_task(task, create=False)
    route.open_session(task)
    return True


def fork_task(
    route: RouteData, task_id: str, title: str | None = None, turn_id: str | None = None
) -> bool:
    """Make a new task current that starts from ``task_id``'s latest completed turn, or from
    its completed turn ``turn_id``; ``False`` (and a reply saying why) if it cannot."""
    if route.turn is not None:
        route.reply(BUSY, error=True)
        return False
    source = route.reads.task(task_id)
    if source is None:
        route.reply(f"no task {task_id!r}", error=True)
        return False
    head = route.reads.head_attempt(source)
    completed = head
    if turn_id is not None:
        completed = _fork_point(route, source, turn_id, head)
        if completed is None:
            return False  # said why
    if source.remote_id is None or completed is None or completed.remote_turn_id is None:
        route.reply(f"task {source.id} has no completed turn to fork from", error=True)
        return False
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
    if turn_id is not None:
        route.reply(
            f"continuing task {source.title or source.id} from its turn {completed.id[:8]} "
            f"({prompt_summary(completed.prompt, 60)!r}) in a new task {fork.id}"
        )
    return True


def _fork_point(
    route: RouteData, source: Task, turn_id: str, head: TurnAttempt | None
) -> TurnAttempt | None:
    """``source``'s completed turn ``turn_id`` to fork at, else ``None`` and a reply: a turn
    that did not complete, or one before the head on an agent that forks only at the head
    (it would fork from another point than asked)."""
    found = [a for a in route.reads.find_turn_attempt(source.id, turn_id) if a.id == turn_id]
    if not found:
        route.reply(f"task {source.id} has no turn {turn_id[:8]} to fork from", error=True)
        return None
    attempt = found[0]
    if attempt.status != "completed":
        route.reply(
            f"turn {attempt.id[:8]} did not complete ({attempt.status}): there is no reliable "
            f"point to continue from; send the message outside the thread",
            error=True,
        )
        return None
    at_head = head is not None and head.id == attempt.id
    if not at_head and not route.can(source).fork_at_turn:
        route.reply(
            f"{source.agent} forks a conversation only at its latest turn, and turn "
            f"{attempt.id[:8]} is an earlier one: nothing was forked",
            error=True,
        )
        return None
    return attempt


def prompt_summary(text: str, width: int) -> str:
    """A prompt on one line, cut at ``width``: how listings and replies name a turn."""
    return " ".join(text.split())[:width]


def projectless_cwd(route: RouteData) -> Path:
    """Today's folder for tasks without a project (``/new --nodir``), created if need be (the
    ``MakeDirectory`` effect runs before the session that works in it can open)."""
    root = route.defaults.workspace or route.defaults.cwd
    folder = root / date.fromtimestamp(route.ids.wall()).isoformat()
    route.emit(MakeDirectory(folder))
    return folder
