"""The runtime-neutral event model: what happens in a turn, whatever protocol the agent speaks.

Adapters (App Server, ACP) translate their wire messages into these events; everything above
them (routes, cards, print mode, the store's turn snapshots) reads only these. Events are small
frozen dataclasses, safe to pass between actors and threads.

Text is kept apart by *message*: every assistant message has an ``item_id``; the turn's final
answer is the message named by ``TurnCompleted.final_item_id`` (the App Server says which; for
ACP it is the last message of the turn), every other message is commentary. A message whose
``phase`` the agent states (``commentary`` or ``final``) carries it from its first delta on.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

__all__ = [
    "ApprovalDecision",
    "ApprovalKind",
    "ApprovalRequested",
    "ApprovalResolved",
    "ErrorCategory",
    "FileChange",
    "PlanEntry",
    "PlanUpdated",
    "ReasoningDelta",
    "RuntimeEvent",
    "TextDelta",
    "ToolCompleted",
    "ToolKind",
    "ToolStarted",
    "ToolStatus",
    "ToolUpdated",
    "TurnCompleted",
    "TurnError",
    "TurnStarted",
    "TurnStatus",
    "Usage",
    "UsageUpdated",
]

ToolKind = Literal["command", "file_change", "mcp", "web_search", "read", "other"]
ToolStatus = Literal["pending", "in_progress", "completed", "failed", "declined"]
TurnStatus = Literal["completed", "interrupted", "failed"]
ApprovalKind = Literal["command", "file_change", "permissions", "other"]
ApprovalDecision = Literal["accept", "accept_for_session", "decline", "cancel"]
ErrorCategory = Literal[
    # transient: worth another attempt
    "rate_limit",
    "overloaded",
    "upstream_5xx",
    "timeout",
    "stream_interrupted",
    # terminal: another attempt fails the same way
    "authentication",
    "quota",
    "context_limit",
    "invalid_request",
    "unsupported_model",
    "permission",
    "policy",
    "tool",
    # robota's own
    "agent_exited",
    "unknown",
]


@dataclass(frozen=True, slots=True)
class TurnStarted:
    turn_id: str


@dataclass(frozen=True, slots=True)
class TextDelta:
    """Assistant text. ``phase`` is ``None`` until the agent says (or the turn ends)."""

    item_id: str
    text: str
    phase: Literal["commentary", "final"] | None = None


@dataclass(frozen=True, slots=True)
class ReasoningDelta:
    """A reasoning *summary* stream; ``index`` separates summary parts of one item."""

    item_id: str
    text: str
    index: int = 0


@dataclass(frozen=True, slots=True)
class FileChange:
    path: str
    kind: Literal["add", "delete", "update", "move"]
    diff: str | None = None


@dataclass(frozen=True, slots=True)
class ToolStarted:
    tool_id: str
    kind: ToolKind
    title: str
    command: str | None = None
    """For commands: the command as the agent will run it (launchers included)."""
    cwd: str | None = None
    changes: tuple[FileChange, ...] = ()
    status: ToolStatus = "in_progress"


@dataclass(frozen=True, slots=True)
class ToolUpdated:
    """Streamed output, or any field that changed (``None`` = unchanged)."""

    tool_id: str
    output_delta: str | None = None
    title: str | None = None
    status: ToolStatus | None = None
    changes: tuple[FileChange, ...] | None = None


@dataclass(frozen=True, slots=True)
class ToolCompleted:
    tool_id: str
    status: ToolStatus
    output: str | None = None
    """The tool's complete output when the agent reports it (authoritative over deltas)."""
    exit_code: int | None = None


@dataclass(frozen=True, slots=True)
class PlanEntry:
    content: str
    status: Literal["pending", "in_progress", "completed"]


@dataclass(frozen=True, slots=True)
class PlanUpdated:
    entries: tuple[PlanEntry, ...]


@dataclass(frozen=True, slots=True)
class Usage:
    input_tokens: int | None = None
    output_tokens: int | None = None
    cached_input_tokens: int | None = None
    total_tokens: int | None = None
    context_window: int | None = None


@dataclass(frozen=True, slots=True)
class UsageUpdated:
    usage: Usage


@dataclass(frozen=True, slots=True)
class ApprovalRequested:
    """The agent waits for a human. ``approval_id`` is unique per agent process; the decision
    goes back through the runtime with that id."""

    approval_id: str
    kind: ApprovalKind
    title: str
    tool_id: str | None = None
    command: str | None = None
    cwd: str | None = None
    reason: str | None = None
    decisions: tuple[ApprovalDecision, ...] = ("accept", "accept_for_session", "decline", "cancel")


@dataclass(frozen=True, slots=True)
class ApprovalResolved:
    approval_id: str
    decision: ApprovalDecision
    by: Literal["user", "policy", "runtime"] = "user"
    """``runtime``: resolved because the agent process went away (always ``cancel``)."""
    answerer: str | None = None
    """Who answered, as the route knows it: a surface's id, ``policy`` (decided by a rule, not
    a person), or ``None`` when unknown; other surfaces withdraw their question and say who."""


@dataclass(frozen=True, slots=True)
class TurnError:
    message: str
    category: ErrorCategory
    retryable: bool
    code: str | None = None
    """The agent's own error code, when it gave one (``codexErrorInfo``, JSON-RPC code...)."""


@dataclass(frozen=True, slots=True)
class TurnCompleted:
    turn_id: str
    status: TurnStatus
    error: TurnError | None = None
    final_item_id: str | None = None
    final_text: str | None = None
    usage: Usage | None = field(default=None)


RuntimeEvent = (
    TurnStarted
    | TextDelta
    | ReasoningDelta
    | ToolStarted
    | ToolUpdated
    | ToolCompleted
    | PlanUpdated
    | UsageUpdated
    | ApprovalRequested
    | ApprovalResolved
    | TurnCompleted
)
