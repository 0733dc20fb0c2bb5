"""What ``-r``/``--resume`` (and later ``robota session attach``) names: one task, or why not.

Both front ends ask the engine for the candidates (``Engine.find_tasks``: the store's
``find_task``, by id, id prefix or exact title) and decide here, so a name means the same task
in the TUI and in print mode, and a wrong one is reported in the same words.

The rule, in order: a task whose id is the name; else the one task whose id starts with it;
else the one task titled exactly so. Several at the step that matched is ambiguous (the ids are
listed, to pick one); none at all is unknown.
"""

from __future__ import annotations

from collections.abc import Sequence

from .._errors import RobotaError
from ..store import Task

__all__ = ["AmbiguousTask", "TaskNotFound", "TaskNotResolved", "resolve_task"]


class TaskNotResolved(RobotaError):
    """The name does not pick exactly one task; the message says which way it failed."""

    def __init__(self, wanted: str, message: str) -> None:
        self.wanted = wanted
        super().__init__(message)


class TaskNotFound(TaskNotResolved):
    def __init__(self, wanted: str) -> None:
        super().__init__(
            wanted,
            f"no session {wanted!r}: no task named {wanted!r} and no task id starts with it",
        )


class AmbiguousTask(TaskNotResolved):
    def __init__(self, wanted: str, matches: Sequence[Task]) -> None:
        self.matches = tuple(matches)
        ids = ", ".join(task.id for task in self.matches)
        super().__init__(wanted, f"{wanted!r} names several sessions: {ids}; give one id")


def resolve_task(wanted: str, candidates: Sequence[Task]) -> Task:
    """The one task ``wanted`` names among ``candidates`` (any superset of the store's
    matches will do, newest first); ``TaskNotFound`` or ``AmbiguousTask`` otherwise."""
    for task in candidates:
        if task.id == wanted:
            return task
    for matches in (
        [t for t in candidates if wanted and t.id.startswith(wanted)],
        [t for t in candidates if t.title == wanted],
    ):
        if len(matches) == 1:
            return matches[0]
        if matches:
            raise AmbiguousTask(wanted, matches)
    raise TaskNotFound(wanted)
