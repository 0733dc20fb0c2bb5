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
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from .._records import FACTORY, Record, field
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
    open_ahead: bool = False
    """Open the next session like this one ahead, for the next route that opens a new one with
    the same settings (print mode's routes on a warm host): the agent's process service then
    hands that route a session opened before it asked, instead of waiting for the agent to
    open one (``robota.runtimes``' ``_spare_sessions``)."""


# -- requests ------------------------------------------------------------------------------


class OpenSession(Record):
    key: str
    spec: SessionSpec
    deliver: Deliver = field(compare=False)

    # Generated by tools/gen_records.py from the fields above: do not edit below.
    __slots__ = ("deliver", "key", "spec")
    __match_args__ = ("key", "spec", "deliver")

    def __init__(self, key: str, spec: SessionSpec, deliver: Deliver) -> None:
        object.__setattr__(self, "key", key)
        object.__setattr__(self, "spec", spec)
        object.__setattr__(self, "deliver", deliver)

    def __repr__(self) -> str:
        return (
            f"{type(self).__qualname__}(key={self.key!r}, spec={self.spec!r}, "
            f"deliver={self.deliver!r})"
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, OpenSession) or other.__class__ is not self.__class__:
            return NotImplemented
        return (self.key, self.spec) == (other.key, other.spec)

    def __hash__(self) -> int:
        return hash((self.key, self.spec))

    del deliver


class StartTurn(Record):
    key: str
    text: str
    images: tuple[Path, ...] = ()

    # Generated by tools/gen_records.py from the fields above: do not edit below.
    __slots__ = ("images", "key", "text")
    __match_args__ = ("key", "text", "images")

    def __init__(self, key: str, text: str, images: tuple[Path, ...] = ()) -> None:
        object.__setattr__(self, "key", key)
        object.__setattr__(self, "text", text)
        object.__setattr__(self, "images", images)

    def __repr__(self) -> str:
        return (
            f"{type(self).__qualname__}(key={self.key!r}, text={self.text!r}, "
            f"images={self.images!r})"
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, StartTurn) or other.__class__ is not self.__class__:
            return NotImplemented
        return (self.key, self.text, self.images) == (other.key, other.text, other.images)

    def __hash__(self) -> int:
        return hash((self.key, self.text, self.images))

    del images


class SteerTurn(Record):
    key: str
    expected_turn_id: str
    text: str

    # Generated by tools/gen_records.py from the fields above: do not edit below.
    __slots__ = ("expected_turn_id", "key", "text")
    __match_args__ = ("key", "expected_turn_id", "text")

    def __init__(self, key: str, expected_turn_id: str, text: str) -> None:
        object.__setattr__(self, "key", key)
        object.__setattr__(self, "expected_turn_id", expected_turn_id)
        object.__setattr__(self, "text", text)

    def __repr__(self) -> str:
        return (
            f"{type(self).__qualname__}(key={self.key!r}, "
            f"expected_turn_id={self.expected_turn_id!r}, text={self.text!r})"
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SteerTurn) or other.__class__ is not self.__class__:
            return NotImplemented
        return (self.key, self.expected_turn_id, self.text) == (
            other.key,
            other.expected_turn_id,
            other.text,
        )

    def __hash__(self) -> int:
        return hash((self.key, self.expected_turn_id, self.text))


class InterruptTurn(Record):
    key: str

    # Generated by tools/gen_records.py from the fields above: do not edit below.
    __slots__ = ("key",)
    __match_args__ = ("key",)

    def __init__(self, key: str) -> None:
        object.__setattr__(self, "key", key)

    def __repr__(self) -> str:
        return f"{type(self).__qualname__}(key={self.key!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, InterruptTurn) or other.__class__ is not self.__class__:
            return NotImplemented
        return (self.key,) == (other.key,)

    def __hash__(self) -> int:
        return hash((self.key,))


class DecideApproval(Record):
    key: str
    approval_id: str
    decision: ApprovalDecision

    # Generated by tools/gen_records.py from the fields above: do not edit below.
    __slots__ = ("approval_id", "decision", "key")
    __match_args__ = ("key", "approval_id", "decision")

    def __init__(self, key: str, approval_id: str, decision: ApprovalDecision) -> None:
        object.__setattr__(self, "key", key)
        object.__setattr__(self, "approval_id", approval_id)
        object.__setattr__(self, "decision", decision)

    def __repr__(self) -> str:
        return (
            f"{type(self).__qualname__}(key={self.key!r}, "
            f"approval_id={self.approval_id!r}, decision={self.decision!r})"
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, DecideApproval) or other.__class__ is not self.__class__:
            return NotImplemented
        return (self.key, self.approval_id, self.decision) == (
            other.key,
            other.approval_id,
            other.decision,
        )

    def __hash__(self) -> int:
        return hash((self.key, self.approval_id, self.decision))


class CloseSession(Record):
    """Close the session ``key`` (its agent process keeps running)."""

    key: str
    closed: Callable[[], None] | None = field(default=None, compare=False)
    """Called once the agent closed it (an App Server thread unloaded, an ACP session closed),
    or at once when no session of ``key`` is open: a caller that must know the agent let go of
    it (another process resumes it next) waits for this, not for the tell. On the agent's
    thread: it must not block."""

    # Generated by tools/gen_records.py from the fields above: do not edit below.
    __slots__ = ("closed", "key")
    __match_args__ = ("key", "closed")

    def __init__(self, key: str, closed: Callable[[], None] | None = None) -> None:
        object.__setattr__(self, "key", key)
        object.__setattr__(self, "closed", closed)

    def __repr__(self) -> str:
        return f"{type(self).__qualname__}(key={self.key!r}, closed={self.closed!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, CloseSession) or other.__class__ is not self.__class__:
            return NotImplemented
        return (self.key,) == (other.key,)

    def __hash__(self) -> int:
        return hash((self.key,))

    del closed


class ListSessions(Record):
    """The agent's own sessions, most recent first, including those other clients of the same
    agent home created (Codex Desktop, the Codex CLI). Only App Server agents list theirs; an
    ACP agent answers with ``error`` set."""

    ref: str
    """Chosen by the asker, echoed in ``SessionsListed``."""
    deliver: Deliver = field(compare=False)
    search: str | None = None
    limit: int = 50

    # Generated by tools/gen_records.py from the fields above: do not edit below.
    __slots__ = ("deliver", "limit", "ref", "search")
    __match_args__ = ("ref", "deliver", "search", "limit")

    def __init__(
        self, ref: str, deliver: Deliver, search: str | None = None, limit: int = 50
    ) -> None:
        object.__setattr__(self, "ref", ref)
        object.__setattr__(self, "deliver", deliver)
        object.__setattr__(self, "search", search)
        object.__setattr__(self, "limit", limit)

    def __repr__(self) -> str:
        return (
            f"{type(self).__qualname__}(ref={self.ref!r}, deliver={self.deliver!r}, "
            f"search={self.search!r}, limit={self.limit!r})"
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ListSessions) or other.__class__ is not self.__class__:
            return NotImplemented
        return (self.ref, self.search, self.limit) == (other.ref, other.search, other.limit)

    def __hash__(self) -> int:
        return hash((self.ref, self.search, self.limit))

    del deliver, search, limit


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


class SessionOpened(Record):
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

    # Generated by tools/gen_records.py from the fields above: do not edit below.
    __slots__ = ("agent_version", "capabilities", "key", "restarted", "resumed", "session_id")
    __match_args__ = ("key", "session_id", "resumed", "restarted", "agent_version", "capabilities")

    def __init__(  # noqa: PLR0917
        self,
        key: str,
        session_id: str,
        resumed: bool,
        restarted: bool = False,
        agent_version: str | None = None,
        capabilities: Mapping[str, object] = FACTORY,
    ) -> None:
        object.__setattr__(self, "key", key)
        object.__setattr__(self, "session_id", session_id)
        object.__setattr__(self, "resumed", resumed)
        object.__setattr__(self, "restarted", restarted)
        object.__setattr__(self, "agent_version", agent_version)
        object.__setattr__(self, "capabilities", {} if capabilities is FACTORY else capabilities)

    def __repr__(self) -> str:
        return (
            f"{type(self).__qualname__}(key={self.key!r}, "
            f"session_id={self.session_id!r}, resumed={self.resumed!r}, "
            f"restarted={self.restarted!r}, agent_version={self.agent_version!r}, "
            f"capabilities={self.capabilities!r})"
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SessionOpened) or other.__class__ is not self.__class__:
            return NotImplemented
        return (self.key, self.session_id, self.resumed, self.restarted, self.agent_version) == (
            other.key,
            other.session_id,
            other.resumed,
            other.restarted,
            other.agent_version,
        )

    def __hash__(self) -> int:
        return hash((self.key, self.session_id, self.resumed, self.restarted, self.agent_version))

    del restarted, agent_version, capabilities


class SessionEvent(Record):
    key: str
    event: RuntimeEvent

    # Generated by tools/gen_records.py from the fields above: do not edit below.
    __slots__ = ("event", "key")
    __match_args__ = ("key", "event")

    def __init__(self, key: str, event: RuntimeEvent) -> None:
        object.__setattr__(self, "key", key)
        object.__setattr__(self, "event", event)

    def __repr__(self) -> str:
        return f"{type(self).__qualname__}(key={self.key!r}, event={self.event!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SessionEvent) or other.__class__ is not self.__class__:
            return NotImplemented
        return (self.key, self.event) == (other.key, other.event)

    def __hash__(self) -> int:
        return hash((self.key, self.event))


class TurnAccepted(Record):
    key: str
    turn_id: str

    # Generated by tools/gen_records.py from the fields above: do not edit below.
    __slots__ = ("key", "turn_id")
    __match_args__ = ("key", "turn_id")

    def __init__(self, key: str, turn_id: str) -> None:
        object.__setattr__(self, "key", key)
        object.__setattr__(self, "turn_id", turn_id)

    def __repr__(self) -> str:
        return f"{type(self).__qualname__}(key={self.key!r}, turn_id={self.turn_id!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, TurnAccepted) or other.__class__ is not self.__class__:
            return NotImplemented
        return (self.key, self.turn_id) == (other.key, other.turn_id)

    def __hash__(self) -> int:
        return hash((self.key, self.turn_id))


class TurnRefused(Record):
    """The prompt was not started; nothing reached the agent's model."""

    key: str
    text: str
    reason: Literal["busy", "images_unsupported", "no_session", "failed"]
    message: str

    # Generated by tools/gen_records.py from the fields above: do not edit below.
    __slots__ = ("key", "message", "reason", "text")
    __match_args__ = ("key", "text", "reason", "message")

    def __init__(
        self,
        key: str,
        text: str,
        reason: Literal["busy", "images_unsupported", "no_session", "failed"],
        message: str,
    ) -> None:
        object.__setattr__(self, "key", key)
        object.__setattr__(self, "text", text)
        object.__setattr__(self, "reason", reason)
        object.__setattr__(self, "message", message)

    def __repr__(self) -> str:
        return (
            f"{type(self).__qualname__}(key={self.key!r}, text={self.text!r}, "
            f"reason={self.reason!r}, message={self.message!r})"
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, TurnRefused) or other.__class__ is not self.__class__:
            return NotImplemented
        return (self.key, self.text, self.reason, self.message) == (
            other.key,
            other.text,
            other.reason,
            other.message,
        )

    def __hash__(self) -> int:
        return hash((self.key, self.text, self.reason, self.message))


class Steered(Record):
    key: str
    turn_id: str

    # Generated by tools/gen_records.py from the fields above: do not edit below.
    __slots__ = ("key", "turn_id")
    __match_args__ = ("key", "turn_id")

    def __init__(self, key: str, turn_id: str) -> None:
        object.__setattr__(self, "key", key)
        object.__setattr__(self, "turn_id", turn_id)

    def __repr__(self) -> str:
        return f"{type(self).__qualname__}(key={self.key!r}, turn_id={self.turn_id!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Steered) or other.__class__ is not self.__class__:
            return NotImplemented
        return (self.key, self.turn_id) == (other.key, other.turn_id)

    def __hash__(self) -> int:
        return hash((self.key, self.turn_id))


class SteerRefused(Record):
    """The text did not reach the running turn; the route queues it as the next prompt."""

    key: str
    text: str
    reason: Literal["ended", "unsupported", "failed"]
    message: str

    # Generated by tools/gen_records.py from the fields above: do not edit below.
    __slots__ = ("key", "message", "reason", "text")
    __match_args__ = ("key", "text", "reason", "message")

    def __init__(
        self, key: str, text: str, reason: Literal["ended", "unsupported", "failed"], message: str
    ) -> None:
        object.__setattr__(self, "key", key)
        object.__setattr__(self, "text", text)
        object.__setattr__(self, "reason", reason)
        object.__setattr__(self, "message", message)

    def __repr__(self) -> str:
        return (
            f"{type(self).__qualname__}(key={self.key!r}, text={self.text!r}, "
            f"reason={self.reason!r}, message={self.message!r})"
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SteerRefused) or other.__class__ is not self.__class__:
            return NotImplemented
        return (self.key, self.text, self.reason, self.message) == (
            other.key,
            other.text,
            other.reason,
            other.message,
        )

    def __hash__(self) -> int:
        return hash((self.key, self.text, self.reason, self.message))


class AgentFailure(Record):
    """A request could not be carried out (the agent would not start, refused, or exited)."""

    key: str
    request: str
    message: str

    # Generated by tools/gen_records.py from the fields above: do not edit below.
    __slots__ = ("key", "message", "request")
    __match_args__ = ("key", "request", "message")

    def __init__(self, key: str, request: str, message: str) -> None:
        object.__setattr__(self, "key", key)
        object.__setattr__(self, "request", request)
        object.__setattr__(self, "message", message)

    def __repr__(self) -> str:
        return (
            f"{type(self).__qualname__}(key={self.key!r}, request={self.request!r}, "
            f"message={self.message!r})"
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, AgentFailure) or other.__class__ is not self.__class__:
            return NotImplemented
        return (self.key, self.request, self.message) == (other.key, other.request, other.message)

    def __hash__(self) -> int:
        return hash((self.key, self.request, self.message))


class AgentSessionInfo(Record):
    """One session as the agent lists it."""

    session_id: str
    title: str | None
    """The session's name, else the start of its first prompt."""
    cwd: str | None
    updated_at: float | None
    """Seconds since the epoch."""

    # Generated by tools/gen_records.py from the fields above: do not edit below.
    __slots__ = ("cwd", "session_id", "title", "updated_at")
    __match_args__ = ("session_id", "title", "cwd", "updated_at")

    def __init__(
        self, session_id: str, title: str | None, cwd: str | None, updated_at: float | None
    ) -> None:
        object.__setattr__(self, "session_id", session_id)
        object.__setattr__(self, "title", title)
        object.__setattr__(self, "cwd", cwd)
        object.__setattr__(self, "updated_at", updated_at)

    def __repr__(self) -> str:
        return (
            f"{type(self).__qualname__}(session_id={self.session_id!r}, "
            f"title={self.title!r}, cwd={self.cwd!r}, updated_at={self.updated_at!r})"
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, AgentSessionInfo) or other.__class__ is not self.__class__:
            return NotImplemented
        return (self.session_id, self.title, self.cwd, self.updated_at) == (
            other.session_id,
            other.title,
            other.cwd,
            other.updated_at,
        )

    def __hash__(self) -> int:
        return hash((self.session_id, self.title, self.cwd, self.updated_at))


class SessionsListed(Record):
    ref: str
    agent: str
    """The configured agent that listed them."""
    sessions: tuple[AgentSessionInfo, ...]
    error: str | None = None
    """Why nothing could be listed (the agent would not start, cannot list, timed out)."""

    # Generated by tools/gen_records.py from the fields above: do not edit below.
    __slots__ = ("agent", "error", "ref", "sessions")
    __match_args__ = ("ref", "agent", "sessions", "error")

    def __init__(
        self, ref: str, agent: str, sessions: tuple[AgentSessionInfo, ...], error: str | None = None
    ) -> None:
        object.__setattr__(self, "ref", ref)
        object.__setattr__(self, "agent", agent)
        object.__setattr__(self, "sessions", sessions)
        object.__setattr__(self, "error", error)

    def __repr__(self) -> str:
        return (
            f"{type(self).__qualname__}(ref={self.ref!r}, agent={self.agent!r}, "
            f"sessions={self.sessions!r}, error={self.error!r})"
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SessionsListed) or other.__class__ is not self.__class__:
            return NotImplemented
        return (self.ref, self.agent, self.sessions, self.error) == (
            other.ref,
            other.agent,
            other.sessions,
            other.error,
        )

    def __hash__(self) -> int:
        return hash((self.ref, self.agent, self.sessions, self.error))

    del error


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
