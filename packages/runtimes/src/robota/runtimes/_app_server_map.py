"""Codex App Server protocol to robota events, sans-IO.

``ThreadTracker`` follows one thread: it owns the turn currently in progress and turns the
server's notifications into ``RuntimeEvent``s. The ownership rules (APP_SERVER.md s.5, s.11):

* a turn is adopted from whichever comes first, the ``turn/start`` result or ``turn/started``;
* events of a turn that is already terminal, of an older turn, or of a turn that is not the one
  adopted are ignored (replays after ``thread/resume`` look exactly like that);
* ``turn/completed`` ends the turn; items still open then (an interrupted answer never gets its
  ``item/completed``) are closed by the tracker, so no tool stays "running" forever;
* ``thread/status/changed`` to a non-active status while a turn is believed to run, or an event
  for an unknown newer turn, asks the caller to reconcile with ``thread/read`` (``needs_read``).

Also here: user input building and the approval request/decision mapping (the permission-mode
table is ``_handshake``'s, re-exported). Everything is a pure function of JSON values,
unit-tested on recorded transcripts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from robota.core.events import (
    ApprovalDecision,
    ApprovalKind,
    ApprovalRequested,
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
    TurnStatus,
    Usage,
    UsageUpdated,
    classify_failure,
)

from ._error_codes import APP_SERVER_ERROR_CODES
from ._handshake import PERMISSION_MODES

__all__ = [
    "APPROVAL_METHODS",
    "PERMISSION_MODES",
    "ThreadTracker",
    "approval_request",
    "approval_result",
    "notification_thread",
    "user_input",
]

PermissionMode = Literal["default", "acceptEdits", "bypassPermissions", "plan"]

APPROVAL_METHODS: Mapping[str, ApprovalKind] = {
    "item/commandExecution/requestApproval": "command",
    "item/fileChange/requestApproval": "file_change",
    "item/permissions/requestApproval": "permissions",
}

_ITEM_KINDS: Mapping[str, ToolKind] = {
    "commandExecution": "command",
    "fileChange": "file_change",
    "mcpToolCall": "mcp",
    "dynamicToolCall": "other",
    "webSearch": "web_search",
    "imageView": "read",
    "imageGeneration": "other",
    "collabAgentToolCall": "other",
}

_ITEM_STATUS: Mapping[str, ToolStatus] = {
    "inProgress": "in_progress",
    "completed": "completed",
    "failed": "failed",
    "declined": "declined",
}

_TERMINAL_TURN: frozenset[str] = frozenset({"completed", "interrupted", "failed"})


def notification_thread(params: Any) -> str | None:
    """The thread a notification belongs to: ``threadId``, or the ``thread`` object's id."""
    if not isinstance(params, dict):
        return None
    thread_id = params.get("threadId")
    if not isinstance(thread_id, str):
        thread = params.get("thread")
        thread_id = thread.get("id") if isinstance(thread, dict) else None
    return thread_id if isinstance(thread_id, str) else None


def user_input(text: str, images: Sequence[str] = ()) -> list[dict[str, Any]]:
    """``turn/start``/``turn/steer`` input: the text, then each local image by path."""
    items: list[dict[str, Any]] = []
    if text:
        items.append({"type": "text", "text": text, "text_elements": []})
    items.extend({"type": "localImage", "path": path} for path in images)
    return items


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


_CHANGE_KINDS: Mapping[Any, Literal["add", "delete", "update", "move"]] = {
    "add": "add",
    "delete": "delete",
    "update": "update",
    "move": "move",
}


def _changes(raw: Any) -> tuple[FileChange, ...]:
    out: list[FileChange] = []
    for change in raw if isinstance(raw, list) else ():
        if not isinstance(change, dict) or not isinstance(change.get("path"), str):
            continue
        kind_field = change.get("kind")
        kind = kind_field.get("type") if isinstance(kind_field, dict) else kind_field
        out.append(
            FileChange(change["path"], _CHANGE_KINDS.get(kind, "update"), _str(change.get("diff")))
        )
    return tuple(out)


def _tool_title(item: Mapping[str, Any], kind: ToolKind) -> str:
    if kind == "command":
        actions = item.get("commandActions")
        if isinstance(actions, list) and actions and isinstance(actions[0], dict):
            command = _str(actions[0].get("command"))
            if command:
                return command
        return _str(item.get("command")) or "command"
    if kind == "file_change":
        paths = [c.path for c in _changes(item.get("changes"))]
        return ", ".join(paths) if paths else "file change"
    if kind == "mcp":
        return f"{item.get('server', '?')}.{item.get('tool', '?')}"
    if kind == "web_search":
        return _str(item.get("query")) or "web search"
    return str(item.get("type", "tool"))


def _usage(raw: Any) -> Usage | None:
    if not isinstance(raw, dict):
        return None
    nested = raw.get("total")
    total: Mapping[str, Any] = nested if isinstance(nested, dict) else raw

    def number(key: str) -> int | None:
        value = total.get(key)
        return value if isinstance(value, int) and not isinstance(value, bool) else None

    window = raw.get("modelContextWindow")
    return Usage(
        input_tokens=number("inputTokens"),
        output_tokens=number("outputTokens"),
        cached_input_tokens=number("cachedInputTokens"),
        total_tokens=number("totalTokens"),
        context_window=window if isinstance(window, int) else None,
    )


def turn_error(raw: Any) -> TurnError:
    """A ``TurnError`` from the App Server's error object (``message``, ``codexErrorInfo``)."""
    if not isinstance(raw, dict):
        return classify_failure("the turn failed without an error")
    return classify_failure(
        str(raw.get("message") or ""),
        code=raw.get("codexErrorInfo"),
        codes=APP_SERVER_ERROR_CODES,
    )


@dataclass
class _Turn:
    id: str
    open_items: dict[str, ToolKind | Literal["message"]] = field(default_factory=dict)
    last_message: str | None = None
    message_text: dict[str, str] = field(default_factory=dict)
    error: TurnError | None = None
    usage: Usage | None = None


class ThreadTracker:
    """Follows one thread's turns; ``feed`` a notification, get the events it means."""

    def __init__(self, thread_id: str) -> None:
        self.thread_id = thread_id
        self.turn: _Turn | None = None
        self.finished: set[str] = set()
        self.needs_read = False
        """Set when the tracker saw something it cannot explain without ``thread/read``."""

    @property
    def active_turn_id(self) -> str | None:
        return self.turn.id if self.turn is not None else None

    def adopt(self, turn_id: str) -> list[RuntimeEvent]:
        """Take ``turn_id`` as the running turn (from the ``turn/start`` result, say)."""
        if turn_id in self.finished:
            return []
        if self.turn is not None and self.turn.id == turn_id:
            return []
        self.turn = _Turn(turn_id)
        return [TurnStarted(turn_id)]

    def feed(self, method: str, params: Any) -> list[RuntimeEvent]:
        if not isinstance(params, dict):
            return []
        if method == "turn/started":
            turn = params.get("turn")
            turn_id = _str(turn.get("id")) if isinstance(turn, dict) else None
            return self.adopt(turn_id) if turn_id else []
        if method == "thread/status/changed":
            status = params.get("status")
            kind = status.get("type") if isinstance(status, dict) else None
            if self.turn is not None and kind in ("idle", "notLoaded"):
                # The turn should have completed first; the thread says otherwise.
                self.needs_read = True
            return []
        turn_id = _str(params.get("turnId"))
        if method == "turn/completed":
            turn = params.get("turn")
            if not isinstance(turn, dict):
                return []
            turn_id = _str(turn.get("id"))
            if turn_id is None or self.turn is None or turn_id != self.turn.id:
                if turn_id is not None and turn_id not in self.finished:
                    self.needs_read = self.turn is not None
                return []
            return self._complete(turn)
        if self.turn is None or turn_id != self.turn.id:
            if turn_id is not None and turn_id not in self.finished and self.turn is not None:
                self.needs_read = True
            return []
        return self._item_event(method, params)

    def end_with_error(self, message: str, category_hint: str | None = None) -> list[RuntimeEvent]:
        """The agent process went away: fail the running turn with a clear reason."""
        if self.turn is None:
            return []
        turn = self.turn
        error = TurnError(message, "agent_exited", retryable=False, code=category_hint)
        return [*self._close_items(turn, "failed"), self._finish(turn, "failed", error)]

    # -- items ---------------------------------------------------------------------------------

    def _item_event(self, method: str, params: Mapping[str, Any]) -> list[RuntimeEvent]:
        turn = self.turn
        assert turn is not None
        if method == "item/agentMessage/delta":
            item_id = _str(params.get("itemId")) or "message"
            delta = _str(params.get("delta")) or ""
            turn.message_text[item_id] = turn.message_text.get(item_id, "") + delta
            turn.last_message = item_id
            return [TextDelta(item_id, delta)] if delta else []
        if method in ("item/reasoning/summaryTextDelta", "item/reasoning/textDelta"):
            if method == "item/reasoning/textDelta":
                return []  # raw reasoning is not shown; only its summaries are
            index = params.get("summaryIndex")
            return [
                ReasoningDelta(
                    _str(params.get("itemId")) or "reasoning",
                    _str(params.get("delta")) or "",
                    index if isinstance(index, int) else 0,
                )
            ]
        if method in ("item/commandExecution/outputDelta", "item/fileChange/outputDelta"):
            tool_id = _str(params.get("itemId"))
            output = _str(params.get("delta"))
            if tool_id is None or not output:
                return []
            return [ToolUpdated(tool_id, output_delta=output)]
        if method == "turn/plan/updated":
            return [_plan(params.get("plan"))]
        if method == "thread/tokenUsage/updated":
            usage = _usage(params.get("tokenUsage"))
            if usage is None:
                return []
            turn.usage = usage
            return [UsageUpdated(usage)]
        if method == "error":
            if not params.get("willRetry"):
                turn.error = turn_error(params.get("error"))
            return []
        item = params.get("item")
        if not isinstance(item, dict):
            return []
        if method == "item/started":
            return self._item_started(turn, item)
        if method == "item/completed":
            return self._item_completed(turn, item)
        return []

    def _item_started(self, turn: _Turn, item: Mapping[str, Any]) -> list[RuntimeEvent]:
        item_id = _str(item.get("id"))
        item_type = item.get("type")
        if item_id is None:
            return []
        if item_type == "agentMessage":
            turn.open_items[item_id] = "message"
            return []
        kind = _ITEM_KINDS.get(str(item_type))
        if kind is None:
            return []
        turn.open_items[item_id] = kind
        return [
            ToolStarted(
                item_id,
                kind,
                _tool_title(item, kind),
                command=_str(item.get("command")),
                cwd=_str(item.get("cwd")),
                changes=_changes(item.get("changes")),
            )
        ]

    def _item_completed(self, turn: _Turn, item: Mapping[str, Any]) -> list[RuntimeEvent]:
        item_id = _str(item.get("id"))
        if item_id is None:
            return []
        item_type = item.get("type")
        if item_type == "agentMessage":
            turn.open_items.pop(item_id, None)
            text = _str(item.get("text"))
            if text is not None:
                turn.message_text[item_id] = text
            turn.last_message = item_id
            return []
        kind = _ITEM_KINDS.get(str(item_type))
        if kind is None:
            return []
        events: list[RuntimeEvent] = []
        if item_id not in turn.open_items:
            # Completed without a start (e.g. fast items): show it started, then done.
            events.extend(self._item_started(turn, item))
        turn.open_items.pop(item_id, None)
        status = _ITEM_STATUS.get(str(item.get("status")), "completed")
        exit_code = item.get("exitCode")
        events.append(
            ToolCompleted(
                item_id,
                status,
                output=_str(item.get("aggregatedOutput")),
                exit_code=exit_code if isinstance(exit_code, int) else None,
            )
        )
        return events

    # -- the end of a turn ---------------------------------------------------------------------

    def _complete(self, raw: Mapping[str, Any]) -> list[RuntimeEvent]:
        turn = self.turn
        assert turn is not None
        status = raw.get("status")
        if status not in _TERMINAL_TURN:
            return []
        error = turn.error
        if status == "failed":
            error = turn_error(raw.get("error")) if raw.get("error") else error
        # The summary's final agent message names the answer.
        for item in raw.get("items") or ():
            if isinstance(item, dict) and item.get("type") == "agentMessage":
                item_id = _str(item.get("id"))
                text = _str(item.get("text"))
                if item_id:
                    turn.last_message = item_id
                    if text is not None:
                        turn.message_text[item_id] = text
        close_as: ToolStatus = "completed" if status == "completed" else "failed"
        events = self._close_items(turn, close_as)
        events.append(self._finish(turn, status, error if status == "failed" else None))
        return events

    def _close_items(self, turn: _Turn, status: ToolStatus) -> list[RuntimeEvent]:
        events: list[RuntimeEvent] = [
            ToolCompleted(item_id, status)
            for item_id, kind in turn.open_items.items()
            if kind != "message"
        ]
        turn.open_items.clear()
        return events

    def _finish(self, turn: _Turn, status: TurnStatus, error: TurnError | None) -> TurnCompleted:
        self.finished.add(turn.id)
        self.turn = None
        final = turn.last_message if status == "completed" else None
        return TurnCompleted(
            turn.id,
            status,
            error=error
            if status != "failed" or error is not None
            else classify_failure("the turn failed without an error"),
            final_item_id=final,
            final_text=turn.message_text.get(final) if final else None,
            usage=turn.usage,
        )


def _plan(raw: Any) -> PlanUpdated:
    entries: list[PlanEntry] = []
    for step in raw if isinstance(raw, list) else ():
        if not isinstance(step, dict):
            continue
        content = _str(step.get("step")) or _str(step.get("content")) or ""
        status = {"inProgress": "in_progress", "completed": "completed"}.get(
            str(step.get("status")), "pending"
        )
        entries.append(PlanEntry(content, status))  # type: ignore[arg-type]
    return PlanUpdated(tuple(entries))


def approval_request(method: str, params: Any, approval_id: str) -> ApprovalRequested | None:
    """The event for an approval request, or ``None`` if ``method`` is not an approval."""
    kind = APPROVAL_METHODS.get(method)
    if kind is None or not isinstance(params, dict):
        return None
    command = _str(params.get("command"))
    actions = params.get("commandActions")
    title = command or kind.replace("_", " ")
    if isinstance(actions, list) and actions and isinstance(actions[0], dict):
        title = _str(actions[0].get("command")) or title
    decisions: tuple[ApprovalDecision, ...] = ("accept", "accept_for_session", "decline", "cancel")
    if kind == "permissions":
        decisions = ("accept", "accept_for_session", "decline")
    return ApprovalRequested(
        approval_id,
        kind,
        title,
        tool_id=_str(params.get("itemId")),
        command=command,
        cwd=_str(params.get("cwd")),
        reason=_str(params.get("reason")),
        decisions=decisions,
    )


_DECISIONS: Mapping[ApprovalDecision, str] = {
    "accept": "accept",
    "accept_for_session": "acceptForSession",
    "decline": "decline",
    "cancel": "cancel",
}


def approval_result(method: str, params: Any, decision: ApprovalDecision) -> dict[str, Any]:
    """The JSON-RPC result answering an approval request with ``decision``."""
    if APPROVAL_METHODS.get(method) == "permissions":
        requested = params.get("permissions") if isinstance(params, dict) else None
        if decision in ("accept", "accept_for_session"):
            scope = "session" if decision == "accept_for_session" else "turn"
            return {"permissions": requested or {}, "scope": scope}
        return {"permissions": {}, "scope": "turn"}
    return {"decision": _DECISIONS[decision]}
