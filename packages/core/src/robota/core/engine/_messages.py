"""What a front end says to its route, and what the route says back.

A front end (the TUI, print mode, later a chat transport or a WebSocket client) owns one or more
routes. It tells a route what the person did (``UserInput``, ``Interrupt``, ``AnswerApproval``,
or a choice of task: ``NewTask``, ``UseTask``, ``ForkTask``) through ``Engine.tell``, and hears
everything the route produces through the ``deliver`` callable it connected for that route:

* ``TaskOpened``     the route's task, once the agent opened (or resumed, or forked) it
* ``TurnBegan``      a prompt became a turn (``attempt_id`` is robota's turn id)
* ``TurnUpdate``     one ``RuntimeEvent`` of the running turn, in the agent's order
* ``InputSteered``   text typed during the turn reached it
* ``InputQueued``    text waits in the route's queue (``prompt_id`` cancels it)
* ``TurnFinished``   the turn's end and its final answer, sent once per turn
* ``RouteReply``     the answer to a command, or a notice about the route
* ``RouteIdle``      nothing runs and nothing waits: a front end that reads a finite input
  may end

Everything is a frozen dataclass; notices carry their route key, so one ``deliver`` can serve
several routes.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from ..agents import PermissionMode
from ..events import ApprovalDecision, RuntimeEvent, TurnCompleted, TurnError, Usage

__all__ = [
    "AnswerApproval",
    "ForkTask",
    "FrontEndRequest",
    "InputQueued",
    "InputSteered",
    "Interrupt",
    "NewTask",
    "RouteIdle",
    "RouteNotice",
    "SessionsEntry",
    "SessionsListing",
    "RouteReply",
    "SurfaceJoined",
    "SurfaceLeft",
    "TaskOpened",
    "TaskSettings",
    "TurnBegan",
    "TurnFinished",
    "TurnUpdate",
    "UseTask",
    "UserInput",
]


@dataclass(frozen=True, slots=True)
class TaskSettings:
    """How a new task is set up; ``None`` takes the profile's default."""

    agent: str | None = None
    cwd: Path | None = None
    model: str | None = None
    permission_mode: PermissionMode | None = None
    title: str | None = None
    developer_instructions: str | None = None
    nodir: bool = False
    """No project: the task works in today's folder of the profile's workspace (what
    ``/new --nodir`` does); ``cwd`` is then ignored."""


# -- front end to route ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class UserInput:
    """A line the person typed: a prompt, a steer or a slash command; the route decides."""

    text: str
    images: tuple[Path, ...] = ()
    message_id: str | None = None
    """The chat message it is (a turn it starts answers it: the attempt's anchor)."""
    inbox: int | None = None
    """The chat transport's inbox row it came from (``robota.core.store._inbox``): consumed in
    the write that gives it its effect (the turn's attempt, the queued prompt, or its own), so
    a crash before that write leaves it to be fed again."""


@dataclass(frozen=True, slots=True)
class NewTask:
    """Start the route on a new task (it opens at the agent with the first prompt)."""

    settings: TaskSettings = TaskSettings()
    announce: bool = True
    """Reply "new task ..."; a front end that shows the task its own way says ``False``."""


@dataclass(frozen=True, slots=True)
class UseTask:
    """Make an existing task the route's current one; its agent session is resumed."""

    task_id: str


@dataclass(frozen=True, slots=True)
class ForkTask:
    """A new task from ``task_id``'s latest completed turn (``turn_id``: that completed turn,
    robota's attempt id); the original stays as it was. ``prompt`` runs on the fork once it is
    made and is dropped with a refused fork: a chat thread that continues a turn (Feishu) never
    falls back to an arbitrary point of the conversation."""

    task_id: str
    title: str | None = None
    turn_id: str | None = None
    prompt: UserInput | None = None


@dataclass(frozen=True, slots=True)
class Interrupt:
    """Stop the running turn (Ctrl-C, ``/stop``); queued prompts stay queued."""


@dataclass(frozen=True, slots=True)
class AnswerApproval:
    approval_id: str
    decision: ApprovalDecision
    surface: str | None = None
    """The surface that answered (``SurfaceJoined.surface``); ``None`` from a front end that is
    the route's only one (the TUI, print mode, a chat)."""


@dataclass(frozen=True, slots=True)
class SurfaceJoined:
    """A surface (an attached terminal, a WebSocket client) now shows the route; one that
    ``drives`` may answer its approvals, one that only observes may not. Once any surface has
    joined, an approval asked while no driving surface is joined is declined by policy."""

    surface: str
    drives: bool


@dataclass(frozen=True, slots=True)
class SurfaceLeft:
    """The surface left; the last driving surface leaving settles a pending approval."""

    surface: str


FrontEndRequest = (
    UserInput
    | NewTask
    | UseTask
    | ForkTask
    | Interrupt
    | AnswerApproval
    | SurfaceJoined
    | SurfaceLeft
)


# -- route to front end ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TaskOpened:
    route_key: str
    task_id: str
    agent: str
    cwd: str
    remote_id: str
    """The agent's id of the conversation (App Server thread, ACP session)."""
    resumed: bool
    """An earlier conversation was resumed (or forked) rather than started afresh."""
    forked_from: str | None = None
    agent_version: str | None = None


@dataclass(frozen=True, slots=True)
class TurnBegan:
    route_key: str
    task_id: str
    attempt_id: str
    prompt: str
    recovery: bool = False
    """Started by robota itself to continue a turn a crash or restart cut short."""
    restricted: bool = False
    """The task's workspace is not trusted: its agent runs with permission mode ``plan`` and
    the project's settings are ignored (front ends say "Restricted")."""
    message_id: str | None = None
    """The chat message the turn answers, when the engine knows it (``UserInput.message_id``,
    a queued prompt's, a continued turn's predecessor's): a chat transport that no longer
    holds the message (after a restart) still answers it."""


@dataclass(frozen=True, slots=True)
class TurnUpdate:
    route_key: str
    task_id: str
    attempt_id: str
    event: RuntimeEvent


@dataclass(frozen=True, slots=True)
class InputSteered:
    route_key: str
    attempt_id: str
    text: str


@dataclass(frozen=True, slots=True)
class InputQueued:
    route_key: str
    prompt_id: int
    text: str
    ahead: int
    """Prompts that will run before this one (not counting a running turn)."""


@dataclass(frozen=True, slots=True)
class TurnFinished:
    route_key: str
    task_id: str
    attempt_id: str
    status: Literal["completed", "failed", "interrupted"]
    final_text: str | None
    error: TurnError | None = None
    usage: Usage | None = None
    remote_turn_id: str | None = None
    duration_ms: int = 0

    def as_event(self, turn_id: str | None = None) -> TurnCompleted:
        """The turn's end as the event a view or a card reduces (``turn_id``: the agent's turn
        id by default): how a front end ends a turn the agent's own completion did not end."""
        return TurnCompleted(
            (self.remote_turn_id or "") if turn_id is None else turn_id,
            self.status,
            self.error,
            final_text=self.final_text,
            usage=self.usage,
        )


@dataclass(frozen=True, slots=True)
class SessionsEntry:
    """One numbered entry of a ``/sessions`` page: a robota task (``task_id``), or an agent's
    thread robota has no task for (``task_id`` None, ``session_id`` the agent's thread id)."""

    number: int
    agent: str
    updated_at: float
    title: str
    state: str
    """The task's last turn status (``new`` before its first), or ``external``."""
    cwd: str | None
    task_id: str | None = None
    session_id: str | None = None
    current: bool = False

    @property
    def ref(self) -> str:
        """What ``/switch`` and the task commands take for this entry."""
        return self.task_id or self.session_id or ""


@dataclass(frozen=True, slots=True)
class SessionsListing:
    """A ``/sessions`` page as data, beside its text: a chat can draw it as a card whose buttons
    switch to an entry, page (the search kept, the numbers global) or make a group of it."""

    entries: tuple[SessionsEntry, ...]
    page: int
    search: str | None
    more: bool
    """A next page exists."""
    failures: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class RouteReply:
    route_key: str
    text: str
    level: Literal["info", "error"] = "info"
    listing: SessionsListing | None = None
    """Set on a ``/sessions`` answer: the page ``text`` shows, for front ends that draw it."""
    surface: str | None = None
    """Addressed to this surface alone (an answer it was refused); other surfaces drop it."""


@dataclass(frozen=True, slots=True)
class RouteIdle:
    """The route has nothing running, queued or pending: it waits for input."""

    route_key: str
    inputs: int = 0
    """How many ``UserInput`` the route has taken in this engine run, this one's included:
    a front end that sent N knows an idle notice with ``inputs < N`` is from before its last."""


RouteNotice = (
    TaskOpened
    | TurnBegan
    | TurnUpdate
    | InputSteered
    | InputQueued
    | TurnFinished
    | RouteReply
    | RouteIdle
)
