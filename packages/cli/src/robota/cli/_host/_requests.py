"""The requests the host serves on its control endpoint (``robota.core.control``).

Each is a frozen dataclass whose ``TYPE`` is its wire name; ``robota.core.control`` checks
the fields. The CLI resolves what a person typed (a list number, an id prefix) against the
store before it asks, so the host is only ever given full task ids.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

__all__ = [
    "CancelRestart",
    "HostStatus",
    "RestartHost",
    "StopHost",
    "TaskNew",
    "TaskSend",
    "TaskStop",
]


@dataclass(frozen=True, slots=True)
class HostStatus:
    """What ``robota server status`` shows: the result is ``Host.status()``."""

    TYPE: ClassVar[str] = "server.status"


@dataclass(frozen=True, slots=True)
class StopHost:
    """Stop cleanly: no new turns, routes persist, running turns are left to recovery."""

    TYPE: ClassVar[str] = "server.stop"


@dataclass(frozen=True, slots=True)
class RestartHost:
    """Schedule the safe restart (``force``: at once); ``task`` enrolls that task's route."""

    TYPE: ClassVar[str] = "server.restart"
    force: bool = False
    reason: str | None = None
    task: str | None = None


@dataclass(frozen=True, slots=True)
class CancelRestart:
    """Cancel the pending restart: the one named, or (no id) whichever is pending."""

    TYPE: ClassVar[str] = "server.restart.cancel"
    schedule_id: str | None = None


@dataclass(frozen=True, slots=True)
class TaskSend:
    """A prompt to the task's route as if its owner had typed it; with ``wait``, the reply
    comes once the route is idle again and carries the turns that ended meanwhile."""

    TYPE: ClassVar[str] = "task.send"
    task: str
    text: str
    wait: bool = False


@dataclass(frozen=True, slots=True)
class TaskNew:
    """A new task on a ``cli`` route of its own."""

    TYPE: ClassVar[str] = "task.new"
    agent: str | None = None
    cwd: str | None = None
    nodir: bool = False
    title: str | None = None


@dataclass(frozen=True, slots=True)
class TaskStop:
    """Interrupt the task's running turn; queued prompts stay queued."""

    TYPE: ClassVar[str] = "task.stop"
    task: str
