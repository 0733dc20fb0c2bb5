"""What TASK means on a ``robota task`` command line, as one pure decision.

TASK is, in order:

1. a task's full id;
2. a list number: digits only, ``N`` is the N-th task of ``robota task list`` (newest first,
   counted over all tasks, so the number is the same with or without ``--all``);
3. what ``-r`` accepts (``robota.core.frontend.resolve_task``): the one task whose id starts
   with it, else the one titled exactly so; several are refused with their ids.

Omitted, it is the task the calling agent works for, where robota can tell:

* ``ROBOTA_TASK_ID``: robota sets it for what it runs for a task (an ACP agent's terminals,
  ``robota.runtimes``). It cannot set it on an agent *process*: one process serves many
  sessions (tasks), so its environment cannot name one of them;
* ``CODEX_THREAD_ID``: Codex sets it in the commands it runs; the thread id is the task's
  session id at its agent (``Task.remote_id``).

Outside an agent, TASK is required and its absence is a usage error naming the choices.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from robota.core.frontend import AmbiguousTask, TaskNotResolved, resolve_task

if TYPE_CHECKING:
    from robota.core.store import Task

__all__ = ["ENV_NAMES", "NoTaskGiven", "TaskLookup", "pick_task"]

ENV_NAMES = ("ROBOTA_TASK_ID", "CODEX_THREAD_ID")


class NoTaskGiven(TaskNotResolved):
    """TASK omitted, and the environment names no task."""

    def __init__(self) -> None:
        super().__init__(
            "",
            "give TASK: a number from `robota task list`, a task id or a unique id prefix "
            f"(inside an agent robota started, {' or '.join(ENV_NAMES)} names it)",
        )


@dataclass(frozen=True, slots=True)
class TaskLookup:
    """The store's answers the decision needs (a real store, or a table in tests)."""

    by_id: Callable[[str], Task | None]
    numbered: Callable[[int], Task | None]
    """The N-th task, newest first, from 1; ``None`` past the last."""
    matching: Callable[[str], Sequence[Task]]
    """Tasks whose id starts with the name, else titled so (the store's ``find_task``)."""
    by_remote_id: Callable[[str], Sequence[Task]]


MAX_NUMBER_DIGITS = 6
"""Longer digit strings are id prefixes (a task id is 12 hex digits), never list numbers."""


def pick_task(wanted: str | None, lookup: TaskLookup, environ: Mapping[str, str]) -> Task:
    """The one task ``wanted`` names (or, omitted, the environment names); raises a
    ``TaskNotResolved`` whose message says why not."""
    if wanted is None or not wanted.strip():
        return _from_environment(lookup, environ)
    wanted = wanted.strip()
    exact = lookup.by_id(wanted)
    if exact is not None:
        return exact
    if wanted.isdigit() and len(wanted) <= MAX_NUMBER_DIGITS and int(wanted) > 0:
        numbered = lookup.numbered(int(wanted))
        if numbered is not None:
            return numbered
    return resolve_task(wanted, lookup.matching(wanted))


def _from_environment(lookup: TaskLookup, environ: Mapping[str, str]) -> Task:
    task_id = environ.get("ROBOTA_TASK_ID", "").strip()
    if task_id:
        task = lookup.by_id(task_id)
        if task is None:
            message = f"ROBOTA_TASK_ID={task_id}: no such task in this profile"
            raise TaskNotResolved(task_id, message)
        return task
    thread = environ.get("CODEX_THREAD_ID", "").strip()
    if thread:
        found = lookup.by_remote_id(thread)
        if not found:
            raise TaskNotResolved(
                thread, f"CODEX_THREAD_ID={thread}: no task of this profile has that session"
            )
        if len(found) > 1:
            raise AmbiguousTask(thread, found)
        return found[0]
    raise NoTaskGiven()
