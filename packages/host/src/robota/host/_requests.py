"""The requests the host serves on its control endpoint (``robota.core.control``).

Each is a frozen dataclass whose ``TYPE`` is its wire name; ``robota.core.control`` checks
the fields. A request's ``task`` is TASK as ``robota task`` takes it (a full id, a list
number, an id prefix, a title: ``robota.host._task_names``) and the host resolves it against
the store (``TaskDesk.resolve``): the client passes on what was typed and reads nothing itself,
so a ``task send`` costs its process no configuration and no store. Omitted, ``caller`` names
the task: the caller's ``ROBOTA_TASK_ID`` and ``CODEX_THREAD_ID`` (non-secret; no other name
is taken).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

__all__ = [
    "CancelRestart",
    "HostStatus",
    "RestartHost",
    "SEND_WAIT",
    "SEND_WAIT_MAX",
    "StopHost",
    "TaskFork",
    "TaskForkGroup",
    "TaskNew",
    "TaskNewGroup",
    "TaskQueue",
    "TaskRelease",
    "TaskRename",
    "TaskRun",
    "TaskSend",
    "TaskStop",
    "TeamPause",
    "TeamResume",
    "TurnsChanged",
]

SEND_WAIT = 1800.0
"""Seconds ``task.send`` with ``wait`` waits for its turns by default."""
SEND_WAIT_MAX = 86400.0


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


@dataclass(frozen=True, slots=True, kw_only=True)
class TaskSend:
    """A prompt to the task's route as if its owner had typed it. Without ``wait`` the reply
    says what the route made of it (``outcome``: started, queued, steered, replied); with
    ``wait`` it comes once the route is idle again and carries the turns that ended meanwhile
    and the task as they left it."""

    TYPE: ClassVar[str] = "task.send"
    task: str | None = None
    caller: dict[str, str] | None = None
    text: str
    wait: bool = False
    timeout: float | None = None
    """Seconds to wait (``SEND_WAIT`` by default, at most ``SEND_WAIT_MAX``); past them the
    reply is a ``timeout`` error and the turn goes on, its answer where the route's go."""


@dataclass(frozen=True, slots=True, kw_only=True)
class TaskRun:
    """``task.send`` with ``wait``, as a stream (``robota mcp serve``'s runs): a ``notice``
    frame (``robota.core.protocol``) for each notice the route says from the prompt until it
    is idle again, then one ``result`` frame holding what ``task.send`` answers. A refusal or
    a wait that ran out is the request's failure reply, as ``task.send``'s; a prompt to a task
    another process owns goes to that process and its stream holds the result alone."""

    TYPE: ClassVar[str] = "task.run"
    task: str | None = None
    caller: dict[str, str] | None = None
    text: str
    timeout: float | None = None

    def send(self) -> TaskSend:
        return TaskSend(
            task=self.task, caller=self.caller, text=self.text, wait=True, timeout=self.timeout
        )


@dataclass(frozen=True, slots=True)
class TaskNew:
    """A new task on a ``cli`` route of its own, or on ``route`` (one the host serves: a
    chat's), where it becomes the current task."""

    TYPE: ClassVar[str] = "task.new"
    agent: str | None = None
    cwd: str | None = None
    nodir: bool = False
    title: str | None = None
    route: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class TaskStop:
    """Interrupt the task's running turn; queued prompts stay queued."""

    TYPE: ClassVar[str] = "task.stop"
    task: str | None = None
    caller: dict[str, str] | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class TaskFork:
    """A new task from ``task``'s latest completed turn (the engine's ``ForkTask``), on a
    ``cli`` route of its own; a turn running on the source goes on."""

    TYPE: ClassVar[str] = "task.fork"
    task: str | None = None
    caller: dict[str, str] | None = None
    title: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class TaskQueue:
    """The prompts queued on the task's route (the route's ``/queue``), or with ``cancel``
    the one of that number removed (``/queue cancel N``)."""

    TYPE: ClassVar[str] = "task.queue"
    task: str | None = None
    caller: dict[str, str] | None = None
    cancel: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class TaskRelease:
    """Let go of the task for a background session that takes it over (``_owners``): refused
    (``busy``, naming what) while a turn of it runs, a prompt of it is queued or an approval
    waits on one of the host's routes; otherwise its agent session is closed on every route of
    the host that holds it, and the reply comes once its agents closed it (another process may
    resume it now) and the host no longer owns it. ``routes``: the routes that held it."""

    TYPE: ClassVar[str] = "task.release"
    task: str


@dataclass(frozen=True, slots=True, kw_only=True)
class TaskRename:
    """A new title for the task (the route's ``/rename``)."""

    TYPE: ClassVar[str] = "task.rename"
    task: str | None = None
    caller: dict[str, str] | None = None
    title: str


@dataclass(frozen=True, slots=True, kw_only=True)
class TaskNewGroup:
    """A new group chat, made by a transport that offers groups (``GroupMaker``), with a new
    task as its current one: ``task``'s agent and directory unless ``agent``/``cwd``/``nodir``
    say otherwise; none of them and no ``task``: the profile's defaults. ``transport`` picks
    the transport when several offer groups."""

    TYPE: ClassVar[str] = "task.newgroup"
    task: str | None = None
    caller: dict[str, str] | None = None
    title: str | None = None
    agent: str | None = None
    cwd: str | None = None
    nodir: bool = False
    transport: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class TaskForkGroup:
    """A new group chat whose current task is a fork of ``task`` (its latest completed turn),
    made as ``TaskNewGroup`` makes its group."""

    TYPE: ClassVar[str] = "task.forkgroup"
    task: str | None = None
    caller: dict[str, str] | None = None
    title: str | None = None
    transport: str | None = None


@dataclass(frozen=True, slots=True)
class TeamPause:
    """Pause a team group: its messages are claimed and counted, nothing more."""

    TYPE: ClassVar[str] = "team.pause"
    name: str


@dataclass(frozen=True, slots=True)
class TeamResume:
    """Resume a paused team group; the reply carries how many messages arrived meanwhile."""

    TYPE: ClassVar[str] = "team.resume"
    name: str


@dataclass(frozen=True, slots=True)
class TurnsChanged:
    """A terminal of this profile (the TUI, print mode) began or ended a turn: the host reads
    the running turns now instead of at its next poll (``HostTeams``: operator priority)."""

    TYPE: ClassVar[str] = "turns.changed"
