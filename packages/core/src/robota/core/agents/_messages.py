"""What a route says to an agent, and what the agent says back.

An agent (one per configured agent name, whatever protocol it speaks) is reached through its
``Address``. A route opens a *session* under a key of its own choosing, naming a ``deliver``
callable (usually the route's own ``Address.tell``); from then on every answer and every event of
that session goes to ``deliver``, in order, as one of the notices below. Requests never block and
carry no reply channel: the answer is a later notice, so a route actor never waits on I/O.

Requests (route to agent):

* ``OpenSession``   bind ``key`` to a new agent session, or resume ``SessionSpec.resume_id``;
  for a key already open, rebind it to ``deliver`` and take the spec's settings for later turns
* ``StartTurn``     run a prompt; answered ``TurnAccepted`` or ``TurnRefused``
* ``SteerTurn``     add text to the running turn; answered ``Steered`` or ``SteerRefused``
  (the text then belongs in the route's queue)
* ``InterruptTurn``, ``DecideApproval``, ``CloseSession``
* ``ListSessions``  the agent's own sessions (App Server ``thread/list``), answered
  ``SessionsListed`` to the request's own ``deliver``: it belongs to no session

Notices (agent to route): ``SessionOpened``, ``SessionEvent`` (a ``RuntimeEvent`` of the
session), ``TurnAccepted``, ``TurnRefused``, ``Steered``, ``SteerRefused``, ``AgentFailure``,
``SessionsListed``.

A session outlives its agent process: when the process exits, the running turn ends failed
(``agent_exited``), and the next request resumes the session in a new process, announced by a
second ``SessionOpened`` with ``restarted=True`` (``resumed=False`` there means the agent could
not resume and the conversation starts afresh).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from ..events import ApprovalDecision, RuntimeEvent

__all__ = [
    "PERMISSION_MODES",
    "AgentFailure",
    "AgentNotice",
    "AgentRequest",
    "AgentSessionInfo",
    "CloseSession",
    "DecideApproval",
    "Deliver",
    "InterruptTurn",
    "ListSessions",
    "OpenSession",
    "PermissionMode",
    "SessionEvent",
    "SessionOpened",
    "SessionSpec",
    "SessionsListed",
    "StartTurn",
    "SteerRefused",
    "SteerTurn",
    "Steered",
    "TurnAccepted",
    "TurnRefused",
]

PermissionMode = Literal["default", "acceptEdits", "bypassPermissions", "plan"]
PERMISSION_MODES: tuple[PermissionMode, ...] = (
    "default",
    "acceptEdits",
    "bypassPermissions",
    "plan",
)

Deliver = Callable[[object], None]
"""Where a session's notices go. Called on the agent's thread: it must not block (an
``Address.tell`` or a ``LoopPort.post`` is right)."""


@dataclass(frozen=True, slots=True)
class SessionSpec:
    """How a session is opened, and reopened after its agent process restarted."""

    cwd: Path
    permission_mode: PermissionMode = "default"
    model: str | None = None
    effort: str | None = None
    """Reasoning effort (``minimal`` ... ``xhigh``) where the agent takes one."""
    resume_id: str | None = None
    """The agent's own id of an earlier session (thread) to resume instead of starting anew."""
    human_approves: bool = True
    """Whether a person can answer approvals. When not (print mode without a terminal, a
    background job), the ``default`` mode declines each request and the turn shows why."""
    developer_instructions: str | None = None
    fork_from: str | None = None
    """The agent's id of a session to fork: the new session starts with its history (through
    ``fork_turn_id`` where the agent can fork at a turn) and the source stays as it was. Used
    only when there is no ``resume_id``: a fork that was opened once is resumed afterwards."""
    fork_turn_id: str | None = None
    task_id: str | None = None
    """robota's id of the task the session belongs to: what robota runs for the session
    itself (an ACP agent's terminals) sees it as ``ROBOTA_TASK_ID``, so ``robota task`` run
    there finds its own task. The agent *process* cannot carry it: one process serves the
    sessions of many tasks."""
    restricted: bool = False
    """The task's workspace is not trusted (or the start asked for Restricted): besides
    permission mode ``plan``, the session is offered none of the configured MCP servers."""


# -- requests ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class OpenSession:
    key: str
    spec: SessionSpec
    deliver: Deliver = field(compare=False)


@dataclass(frozen=True, slots=True)
class StartTurn:
    key: str
    text: str
    images: tuple[Path, ...] = ()


@dataclass(frozen=True, slots=True)
class SteerTurn:
    key: str
    expected_turn_id: str
    text: str


@dataclass(frozen=True, slots=True)
class InterruptTurn:
    key: str


@dataclass(frozen=True, slots=True)
class DecideApproval:
    key: str
    approval_id: str
    decision: ApprovalDecision


@dataclass(frozen=True, slots=True)
class CloseSession:
    key: str


@dataclass(frozen=True, slots=True)
class ListSessions:
    """The agent's own sessions, most recent first, including those other clients of the same
    agent home created (Codex Desktop, the Codex CLI). Only App Server agents list theirs; an
    ACP agent answers with ``error`` set."""

    ref: str
    """Chosen by the asker, echoed in ``SessionsListed``."""
    deliver: Deliver = field(compare=False)
    search: str | None = None
    limit: int = 50


AgentRequest = (
    OpenSession
    | StartTurn
    | SteerTurn
    | InterruptTurn
    | DecideApproval
    | CloseSession
    | ListSessions
)


# -- notices -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SessionOpened:
    key: str
    session_id: str
    """The agent's id of the session (App Server thread id, ACP session id): store it to
    resume later."""
    resumed: bool
    """Whether an earlier session (``resume_id``, or the one before a restart) was resumed."""
    restarted: bool = False
    """Opened again in a new agent process after the previous one exited."""
    agent_version: str | None = None
    capabilities: Mapping[str, object] = field(default_factory=dict, compare=False)


@dataclass(frozen=True, slots=True)
class SessionEvent:
    key: str
    event: RuntimeEvent


@dataclass(frozen=True, slots=True)
class TurnAccepted:
    key: str
    turn_id: str


@dataclass(frozen=True, slots=True)
class TurnRefused:
    """The prompt was not started; nothing reached the agent's model."""

    key: str
    text: str
    reason: Literal["busy", "images_unsupported", "no_session", "failed"]
    message: str


@dataclass(frozen=True, slots=True)
class Steered:
    key: str
    turn_id: str


@dataclass(frozen=True, slots=True)
class SteerRefused:
    """The text did not reach the running turn; the route queues it as the next prompt."""

    key: str
    text: str
    reason: Literal["ended", "unsupported", "failed"]
    message: str


@dataclass(frozen=True, slots=True)
class AgentFailure:
    """A request could not be carried out (the agent would not start, refused, or exited)."""

    key: str
    request: str
    message: str


@dataclass(frozen=True, slots=True)
class AgentSessionInfo:
    """One session as the agent lists it."""

    session_id: str
    title: str | None
    """The session's name, else the start of its first prompt."""
    cwd: str | None
    updated_at: float | None
    """Seconds since the epoch."""


@dataclass(frozen=True, slots=True)
class SessionsListed:
    ref: str
    agent: str
    """The configured agent that listed them."""
    sessions: tuple[AgentSessionInfo, ...]
    error: str | None = None
    """Why nothing could be listed (the agent would not start, cannot list, timed out)."""


AgentNotice = (
    SessionOpened
    | SessionEvent
    | TurnAccepted
    | TurnRefused
    | Steered
    | SteerRefused
    | AgentFailure
    | SessionsListed
)
