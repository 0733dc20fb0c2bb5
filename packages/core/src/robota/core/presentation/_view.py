"""The turn view: one turn's runtime events reduced to a chronological activity stream.

Why a mutable reducer and not a frozen value: a turn has thousands of events, and a frozen view
would copy its stream (or need persistent data structures) on each one. ``TurnView`` is owned by
one actor (the turn's card renderer) and mutated only there; ``apply`` is O(1) amortised. What
leaves the actor is either a rendered payload or the plain-JSON snapshot (``to_json()``), which
is also what the store persists: ``TurnView.from_json`` restores a view that continues exactly
where the old one stopped, whatever layout renders it next.

Every activity carries the ``version`` of the view when it last changed. Renderers key their
caches on it, so a render after one event re-renders only what that event touched.

The stream keeps, in the order they first appeared: assistant messages (commentary; the final
answer is a message too, but renderers leave it out of the activity), reasoning summaries (the
latest one is the turn's current title), tool calls, approvals, user steering messages and the
turn's error. The plan and usage are turn-wide and kept beside the stream.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, cast

from ..events import (
    ApprovalDecision,
    ApprovalKind,
    ApprovalRequested,
    ApprovalResolved,
    ErrorCategory,
    FileChange,
    PlanEntry,
    PlanUpdated,
    ReasoningDelta,
    RuntimeEvent,
    TextDelta,
    ToolCompleted,
    ToolKind,
    ToolStarted,
    ToolStatus,
    ToolUpdated,
    TurnCompleted,
    TurnError,
    TurnStarted,
    Usage,
    UsageUpdated,
)

__all__ = [
    "STATE_LABELS",
    "DisplayState",
    "SNAPSHOT_VERSION",
    "Activity",
    "Approval",
    "Change",
    "ErrorNote",
    "Message",
    "Reasoning",
    "Steer",
    "ToolCall",
    "TurnView",
    "UserSteer",
    "ViewStatus",
]

SNAPSHOT_VERSION = 1
"""The ``"v"`` of ``to_json()``; ``from_json`` refuses any other."""

DEFAULT_OUTPUT_CAP = 64 * 1024
"""Bytes of streamed output kept per tool (the tail); renderers show far less."""

ViewStatus = Literal["pending", "running", "completed", "interrupted", "failed"]
DisplayState = Literal["completed", "failed", "interrupted", "approval", "starting", "working"]
STATE_LABELS: dict[DisplayState, str] = {
    "completed": "Completed",
    "failed": "Failed",
    "interrupted": "Interrupted",
    "approval": "Waiting for approval",
    "starting": "Starting",
    "working": "Working",
}
Change = Literal["unchanged", "changed", "critical"]
"""What ``apply`` did: ``critical`` for a new approval or the terminal state (the updates the
throttle lets through after 500 ms instead of 2 s)."""


@dataclass(frozen=True, slots=True)
class UserSteer:
    """A message the user sent while the turn ran; it is shown in the stream where it arrived."""

    text: str


# -- activities ---------------------------------------------------------------------------------


class _Joined:
    """Streamed text: deltas are appended as parts and joined on read, so appending stays
    O(1) however long the message grows."""

    __slots__ = ("_parts", "_text")

    def __init__(self) -> None:
        self._parts: list[str] = []
        self._text: str | None = ""

    @property
    def text(self) -> str:
        if self._text is None:
            self._text = "".join(self._parts)
            self._parts = [self._text]
        return self._text

    def append(self, text: str) -> None:
        self._parts.append(text)
        self._text = None


@dataclass(slots=True, eq=False)
class Message:
    item_id: str
    phase: Literal["commentary", "final"] | None = None
    version: int = 0
    _joined: _Joined = field(default_factory=_Joined, repr=False)

    @property
    def text(self) -> str:
        return self._joined.text

    def append(self, text: str) -> None:
        self._joined.append(text)


@dataclass(slots=True, eq=False)
class Reasoning:
    item_id: str
    index: int
    version: int = 0
    _joined: _Joined = field(default_factory=_Joined, repr=False)

    @property
    def text(self) -> str:
        return self._joined.text

    def append(self, text: str) -> None:
        self._joined.append(text)

    @property
    def title(self) -> str:
        """The summary's first line without Markdown emphasis: codex writes ``**Title**``."""
        for line in self.text.split("\n"):
            stripped = line.strip().strip("#").strip().strip("*_").strip()
            if stripped:
                return stripped if len(stripped) <= 120 else stripped[:119] + "…"
        return ""


@dataclass(slots=True, eq=False)
class ToolCall:
    tool_id: str
    kind: ToolKind
    title: str
    command: str | None = None
    cwd: str | None = None
    changes: tuple[FileChange, ...] = ()
    status: ToolStatus = "in_progress"
    exit_code: int | None = None
    output_dropped: int = 0
    """Bytes of output dropped before the kept tail."""
    output_cap: int = DEFAULT_OUTPUT_CAP
    version: int = 0
    _chunks: list[str] = field(default_factory=list)
    _size: int = 0
    _output: str | None = ""

    @property
    def output(self) -> str:
        if self._output is None:
            self._compact()
            self._output = "".join(self._chunks)
        return self._output

    @property
    def running(self) -> bool:
        return self.status in ("pending", "in_progress")

    def append_output(self, text: str) -> None:
        self._chunks.append(text)
        self._size += len(text.encode("utf-8"))
        self._output = None
        # Compact only past twice the cap: each byte is copied O(1) times on average.
        if self._size > 2 * self.output_cap:
            self._compact()

    def replace_output(self, text: str) -> None:
        self._chunks = [text]
        self._size = len(text.encode("utf-8"))
        self.output_dropped = 0
        self._output = None
        self._compact()

    def _compact(self) -> None:
        if self._size <= self.output_cap:
            return
        data = "".join(self._chunks).encode("utf-8")
        kept = data[len(data) - self.output_cap :].decode("utf-8", errors="ignore")
        kept_size = len(kept.encode("utf-8"))
        self.output_dropped += len(data) - kept_size
        self._chunks = [kept]
        self._size = kept_size


@dataclass(slots=True, eq=False)
class Approval:
    approval_id: str
    kind: ApprovalKind
    title: str
    tool_id: str | None = None
    command: str | None = None
    cwd: str | None = None
    reason: str | None = None
    decisions: tuple[ApprovalDecision, ...] = ("accept", "accept_for_session", "decline", "cancel")
    decision: ApprovalDecision | None = None
    by: Literal["user", "policy", "runtime"] | None = None
    version: int = 0

    @property
    def pending(self) -> bool:
        return self.decision is None


@dataclass(slots=True, eq=False)
class Steer:
    text: str
    version: int = 0


@dataclass(slots=True, eq=False)
class ErrorNote:
    message: str
    category: ErrorCategory
    retryable: bool
    code: str | None = None
    version: int = 0


Activity = Message | Reasoning | ToolCall | Approval | Steer | ErrorNote

_ACTIVITY_EVENTS = (
    TextDelta,
    ReasoningDelta,
    ToolStarted,
    ToolUpdated,
    ToolCompleted,
    ApprovalRequested,
)
_TERMINAL: frozenset[ViewStatus] = frozenset({"completed", "interrupted", "failed"})


class TurnView:
    """The reducer. ``apply`` each event in order; read the stream and turn-wide state."""

    def __init__(self, *, output_cap: int = DEFAULT_OUTPUT_CAP) -> None:
        self.output_cap = output_cap
        self.turn_id: str | None = None
        self.status: ViewStatus = "pending"
        self.version = 0
        self.plan: tuple[PlanEntry, ...] = ()
        self.usage: Usage | None = None
        self.error: ErrorNote | None = None
        self.final_item_id: str | None = None
        self._final_text: str | None = None
        self._stream: list[Activity] = []
        self._messages: dict[str, Message] = {}
        self._reasoning: dict[tuple[str, int], Reasoning] = {}
        self._tools: dict[str, ToolCall] = {}
        self._approvals: dict[str, Approval] = {}
        self._pending: dict[str, Approval] = {}  # insertion-ordered: oldest request first
        self._tool_approvals: dict[str, list[Approval]] = {}
        self._latest_reasoning: Reasoning | None = None
        self._last_message: Message | None = None
        self.restricted = False
        """The turn runs Restricted (its workspace is not trusted): every renderer says so."""

    # -- reading --------------------------------------------------------------------------------

    @property
    def activities(self) -> Sequence[Activity]:
        """The stream, oldest first. Read-only by contract: mutate only through ``apply``."""
        return self._stream

    @property
    def terminal(self) -> bool:
        return self.status in _TERMINAL

    @property
    def current_title(self) -> str:
        """The latest reasoning summary's title: what the agent says it is doing."""
        return self._latest_reasoning.title if self._latest_reasoning is not None else ""

    @property
    def display_state(self) -> DisplayState:
        """What a card header shows: the terminal status, else whether the turn waits for an
        approval, has not started or is working."""
        if self.status in _TERMINAL:
            return cast(DisplayState, self.status)
        if self._pending:
            return "approval"
        return "starting" if self.status == "pending" else "working"

    @property
    def pending_approvals(self) -> list[Approval]:
        return list(self._pending.values())

    @property
    def tool_count(self) -> int:
        return len(self._tools)

    def tool(self, tool_id: str) -> ToolCall | None:
        return self._tools.get(tool_id)

    def approvals_for(self, tool_id: str) -> Sequence[Approval]:
        """The approvals asked about a tool, oldest first."""
        return self._tool_approvals.get(tool_id, ())

    @property
    def tools_with_approvals(self) -> Mapping[str, Sequence[Approval]]:
        return self._tool_approvals

    def about_known_tool(self, approval: Approval) -> bool:
        """Whether the approval is about a tool in the stream (grouped layouts show it there)."""
        return approval.tool_id is not None and approval.tool_id in self._tools

    def is_final(self, message: Message) -> bool:
        """The final answer is not commentary: renderers leave it out of the activity."""
        if self.final_item_id is not None:
            return message.item_id == self.final_item_id
        return message.phase == "final"

    @property
    def final_text(self) -> str | None:
        """The answer to send as its own message once the turn ended, if there is one."""
        if self._final_text is not None:
            return self._final_text
        if self.final_item_id is not None:
            message = self._messages.get(self.final_item_id)
            return message.text if message is not None else None
        return None

    # -- the reducer ----------------------------------------------------------------------------

    def _touch(self, activity: Activity | None = None) -> None:
        self.version += 1
        if activity is not None:
            activity.version = self.version

    def _append(self, activity: Activity) -> None:
        self._stream.append(activity)
        self._touch(activity)

    def apply(self, event: RuntimeEvent | UserSteer) -> Change:
        """Fold one event into the view; O(1) amortised."""
        if self.status == "pending" and isinstance(event, _ACTIVITY_EVENTS):
            self.status = "running"  # the agent is evidently at work, announced or not
        if isinstance(event, TextDelta):
            return self._text(event)
        if isinstance(event, ReasoningDelta):
            return self._reason(event)
        if isinstance(event, ToolStarted):
            return self._tool_started(event)
        if isinstance(event, ToolUpdated):
            return self._tool_updated(event)
        if isinstance(event, ToolCompleted):
            return self._tool_completed(event)
        if isinstance(event, ApprovalRequested):
            return self._approval_requested(event)
        if isinstance(event, ApprovalResolved):
            return self._approval_resolved(event)
        if isinstance(event, UserSteer):
            if not event.text:
                return "unchanged"
            self._append(Steer(event.text))
            return "changed"
        if isinstance(event, PlanUpdated):
            if event.entries == self.plan:
                return "unchanged"
            self.plan = event.entries
            self._touch()
            return "changed"
        if isinstance(event, UsageUpdated):
            if event.usage == self.usage:
                return "unchanged"
            self.usage = event.usage
            self._touch()
            return "changed"
        if isinstance(event, TurnStarted):
            if self.terminal or (self.turn_id == event.turn_id and self.status == "running"):
                return "unchanged"
            self.turn_id = event.turn_id
            self.status = "running"
            self._touch()
            return "changed"
        return self._completed(event)

    def _text(self, event: TextDelta) -> Change:
        message = self._messages.get(event.item_id)
        if message is None:
            message = Message(event.item_id, phase=event.phase)
            self._messages[event.item_id] = message
            self._stream.append(message)
        elif event.phase is not None:
            message.phase = event.phase
        if not event.text and message.version:
            return "unchanged"
        message.append(event.text)
        self._last_message = message
        self._touch(message)
        return "changed"

    def _reason(self, event: ReasoningDelta) -> Change:
        key = (event.item_id, event.index)
        part = self._reasoning.get(key)
        if part is None:
            part = Reasoning(event.item_id, event.index)
            self._reasoning[key] = part
            self._stream.append(part)
            self._latest_reasoning = part
        elif not event.text:
            return "unchanged"
        part.append(event.text)
        self._touch(part)
        return "changed"

    def _new_tool(self, tool_id: str, kind: ToolKind, title: str) -> ToolCall:
        tool = ToolCall(tool_id, kind, title, output_cap=self.output_cap)
        self._tools[tool_id] = tool
        self._stream.append(tool)
        return tool

    def _tool_started(self, event: ToolStarted) -> Change:
        tool = self._tools.get(event.tool_id)
        if tool is None:
            tool = self._new_tool(event.tool_id, event.kind, event.title)
        tool.kind, tool.title, tool.status = event.kind, event.title, event.status
        if event.command is not None:
            tool.command = event.command
        if event.cwd is not None:
            tool.cwd = event.cwd
        if event.changes:
            tool.changes = event.changes
        self._touch(tool)
        return "changed"

    def _tool_updated(self, event: ToolUpdated) -> Change:
        tool = self._tools.get(event.tool_id)
        if tool is None:  # an update for a tool never announced: show it anyway
            tool = self._new_tool(event.tool_id, "other", event.title or event.tool_id)
        if event.output_delta:
            tool.append_output(event.output_delta)
        if event.title is not None:
            tool.title = event.title
        if event.status is not None:
            tool.status = event.status
        if event.changes is not None:
            tool.changes = event.changes
        self._touch(tool)
        return "changed"

    def _tool_completed(self, event: ToolCompleted) -> Change:
        tool = self._tools.get(event.tool_id)
        if tool is None:
            tool = self._new_tool(event.tool_id, "other", event.tool_id)
        tool.status = event.status
        if event.output is not None:
            tool.replace_output(event.output)
        if event.exit_code is not None:
            tool.exit_code = event.exit_code
        self._touch(tool)
        return "changed"

    def _approval_requested(self, event: ApprovalRequested) -> Change:
        approval = self._approvals.get(event.approval_id)
        if approval is not None:
            return "unchanged"  # re-delivered request: the first one stands
        approval = Approval(
            event.approval_id,
            event.kind,
            event.title,
            tool_id=event.tool_id,
            command=event.command,
            cwd=event.cwd,
            reason=event.reason,
            decisions=event.decisions,
        )
        self._approvals[event.approval_id] = approval
        self._pending[event.approval_id] = approval
        if approval.tool_id is not None:
            self._tool_approvals.setdefault(approval.tool_id, []).append(approval)
        self._append(approval)
        return "critical"

    def _approval_resolved(self, event: ApprovalResolved) -> Change:
        approval = self._approvals.get(event.approval_id)
        if approval is None or not approval.pending:
            return "unchanged"
        approval.decision, approval.by = event.decision, event.by
        del self._pending[event.approval_id]
        self._touch(approval)
        return "changed"

    def _completed(self, event: TurnCompleted) -> Change:
        if self.terminal:
            return "unchanged"
        if self.turn_id is None:
            self.turn_id = event.turn_id
        self.status = event.status
        if event.usage is not None:
            self.usage = event.usage
        if event.final_item_id is not None:
            self.final_item_id = event.final_item_id
        elif self._last_message is not None:
            self.final_item_id = self._last_message.item_id
        self._final_text = event.final_text
        final = self._messages.get(self.final_item_id or "")
        if final is not None:
            self._touch(final)  # it leaves the commentary
        # Approvals still open when the turn ends were answered by nobody.
        for approval in list(self._pending.values()):
            approval.decision, approval.by = "cancel", "runtime"
            self._touch(approval)
        self._pending.clear()
        if event.error is not None:
            self.error = _error_note(event.error)
            self._append(self.error)
        self._touch()
        return "critical"

    # -- snapshots ------------------------------------------------------------------------------

    def to_json(self) -> dict[str, Any]:
        """Plain JSON (dicts, lists, str, int, bool, None) of everything the view knows."""
        return {
            "v": SNAPSHOT_VERSION,
            "turn_id": self.turn_id,
            "status": self.status,
            "version": self.version,
            "output_cap": self.output_cap,
            "final_item_id": self.final_item_id,
            "final_text": self._final_text,
            "plan": [{"content": e.content, "status": e.status} for e in self.plan],
            "usage": _usage_json(self.usage),
            "activities": [_activity_json(a) for a in self._stream],
            "restricted": self.restricted,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> TurnView:
        if data.get("v") != SNAPSHOT_VERSION:
            raise ValueError(
                f"turn snapshot version {data.get('v')!r} is not {SNAPSHOT_VERSION} "
                "(written by another robota?)"
            )
        view = cls(output_cap=int(data["output_cap"]))
        view.turn_id = data["turn_id"]
        view.status = data["status"]
        view.final_item_id = data["final_item_id"]
        view._final_text = data["final_text"]
        view.plan = tuple(PlanEntry(e["content"], e["status"]) for e in data["plan"])
        view.usage = Usage(**data["usage"]) if data["usage"] is not None else None
        view.restricted = bool(data.get("restricted", False))
        for raw in data["activities"]:
            activity = _activity_from_json(raw, view.output_cap)
            view._stream.append(activity)
            if isinstance(activity, Message):
                view._messages[activity.item_id] = activity
                if activity.version >= (view._last_message.version if view._last_message else -1):
                    view._last_message = activity
            elif isinstance(activity, Reasoning):
                view._reasoning[(activity.item_id, activity.index)] = activity
                view._latest_reasoning = activity
            elif isinstance(activity, ToolCall):
                view._tools[activity.tool_id] = activity
            elif isinstance(activity, Approval):
                view._approvals[activity.approval_id] = activity
                if activity.tool_id is not None:
                    view._tool_approvals.setdefault(activity.tool_id, []).append(activity)
                if activity.pending:
                    view._pending[activity.approval_id] = activity
            elif isinstance(activity, ErrorNote):
                view.error = activity
        view.version = int(data["version"])
        return view


# -- JSON helpers -------------------------------------------------------------------------------


def _error_note(error: TurnError) -> ErrorNote:
    return ErrorNote(error.message, error.category, error.retryable, error.code)


def _usage_json(usage: Usage | None) -> dict[str, int | None] | None:
    if usage is None:
        return None
    return {
        "input_tokens": usage.input_tokens,
        "output_tokens": usage.output_tokens,
        "cached_input_tokens": usage.cached_input_tokens,
        "total_tokens": usage.total_tokens,
        "context_window": usage.context_window,
    }


def _changes_json(changes: tuple[FileChange, ...]) -> list[dict[str, str | None]]:
    return [{"path": c.path, "kind": c.kind, "diff": c.diff} for c in changes]


def _activity_json(activity: Activity) -> dict[str, Any]:
    if isinstance(activity, Message):
        return {
            "type": "message",
            "item_id": activity.item_id,
            "phase": activity.phase,
            "text": activity.text,
            "version": activity.version,
        }
    if isinstance(activity, Reasoning):
        return {
            "type": "reasoning",
            "item_id": activity.item_id,
            "index": activity.index,
            "text": activity.text,
            "version": activity.version,
        }
    if isinstance(activity, ToolCall):
        return {
            "type": "tool",
            "tool_id": activity.tool_id,
            "kind": activity.kind,
            "title": activity.title,
            "command": activity.command,
            "cwd": activity.cwd,
            "changes": _changes_json(activity.changes),
            "status": activity.status,
            "exit_code": activity.exit_code,
            "output": activity.output,
            "output_dropped": activity.output_dropped,
            "version": activity.version,
        }
    if isinstance(activity, Approval):
        return {
            "type": "approval",
            "approval_id": activity.approval_id,
            "kind": activity.kind,
            "title": activity.title,
            "tool_id": activity.tool_id,
            "command": activity.command,
            "cwd": activity.cwd,
            "reason": activity.reason,
            "decisions": list(activity.decisions),
            "decision": activity.decision,
            "by": activity.by,
            "version": activity.version,
        }
    if isinstance(activity, Steer):
        return {"type": "steer", "text": activity.text, "version": activity.version}
    return {
        "type": "error",
        "message": activity.message,
        "category": activity.category,
        "retryable": activity.retryable,
        "code": activity.code,
        "version": activity.version,
    }


def _activity_from_json(raw: Mapping[str, Any], output_cap: int) -> Activity:
    kind = raw["type"]
    version = int(raw["version"])
    if kind == "message":
        message = Message(raw["item_id"], phase=raw["phase"], version=version)
        message.append(raw["text"])
        return message
    if kind == "reasoning":
        part = Reasoning(raw["item_id"], int(raw["index"]), version=version)
        part.append(raw["text"])
        return part
    if kind == "tool":
        tool = ToolCall(
            raw["tool_id"],
            raw["kind"],
            raw["title"],
            command=raw["command"],
            cwd=raw["cwd"],
            changes=tuple(FileChange(c["path"], c["kind"], c["diff"]) for c in raw["changes"]),
            status=raw["status"],
            exit_code=raw["exit_code"],
            output_cap=output_cap,
            version=version,
        )
        tool.replace_output(raw["output"])
        tool.output_dropped = int(raw["output_dropped"])
        return tool
    if kind == "approval":
        return Approval(
            raw["approval_id"],
            raw["kind"],
            raw["title"],
            tool_id=raw["tool_id"],
            command=raw["command"],
            cwd=raw["cwd"],
            reason=raw["reason"],
            decisions=cast(tuple[ApprovalDecision, ...], tuple(raw["decisions"])),
            decision=raw["decision"],
            by=raw["by"],
            version=version,
        )
    if kind == "steer":
        return Steer(raw["text"], version=version)
    if kind == "error":
        return ErrorNote(
            raw["message"], raw["category"], bool(raw["retryable"]), raw["code"], version=version
        )
    raise ValueError(f"unknown activity type {kind!r} in a turn snapshot")
