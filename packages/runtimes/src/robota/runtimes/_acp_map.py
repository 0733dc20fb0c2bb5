"""ACP (Agent Client Protocol) to robota events, sans-IO.

ACP has no turn ids and no steer: a turn is one ``session/prompt`` request, from the request to
its response. ``SessionTracker`` synthesises the turn id, upserts tool calls by ``toolCallId``
(the same id may be announced twice, and some agents never announce a tool at all before
updating it), gives each assistant message an id (the agent's ``messageId`` when it sends one,
otherwise one per run of text between tools), and ignores updates outside a turn: the history an
agent replays during ``session/load`` arrives before any prompt.

Permission requests are answered by option *kind*, never by id: ids differ per agent
(``approved``, ``proceed_once``, ``allow``, ``once`` all mean "allow once").
"""

from __future__ import annotations

import secrets
import shlex
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
    Usage,
    UsageUpdated,
    classify_failure,
)

__all__ = [
    "ACP_PERMISSION_MODES",
    "SessionTracker",
    "permission_request",
    "permission_result",
    "prompt_blocks",
    "prompt_error",
]

ACP_PERMISSION_MODES: Mapping[str, tuple[str, ...]] = {
    # robota mode: ACP mode ids to try, in order (agents name their modes differently)
    "default": ("default",),
    "acceptEdits": ("acceptEdits", "autoEdit", "auto-edit"),
    "bypassPermissions": ("bypassPermissions", "yolo"),
    # codex-acp has no "plan": its "read-only" asks before every edit, the nearest it offers.
    "plan": ("plan", "read-only", "readOnly"),
}
"""How robota's permission modes map onto the modes ACP agents advertise in ``session/new``."""

_KINDS: Mapping[str, ToolKind] = {
    "execute": "command",
    "edit": "file_change",
    "delete": "file_change",
    "move": "file_change",
    "read": "read",
    "search": "read",
    "fetch": "web_search",
}

_STATUS: Mapping[str, ToolStatus] = {
    "pending": "pending",
    "in_progress": "in_progress",
    "completed": "completed",
    "failed": "failed",
}


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def prompt_blocks(text: str, images: Sequence[tuple[str, str]] = ()) -> list[dict[str, Any]]:
    """``session/prompt`` content: the text, then images as ``(mime_type, base64 data)``."""
    blocks: list[dict[str, Any]] = []
    if text:
        blocks.append({"type": "text", "text": text})
    blocks.extend({"type": "image", "mimeType": mime, "data": data} for mime, data in images)
    return blocks


def _output(update: Mapping[str, Any]) -> str | None:
    """The text a tool produced, from its content items or its raw output."""
    raw = update.get("rawOutput")
    if isinstance(raw, dict):
        for key in ("aggregated_output", "formatted_output", "output", "stdout"):
            value = raw.get(key)
            if isinstance(value, str):
                return value
    elif isinstance(raw, str):
        return raw
    texts = []
    for item in update.get("content") or ():
        if isinstance(item, dict) and item.get("type") == "content":
            inner = item.get("content")
            if isinstance(inner, dict) and isinstance(inner.get("text"), str):
                texts.append(inner["text"])
    return "\n".join(texts) if texts else None


def _changes(update: Mapping[str, Any]) -> tuple[FileChange, ...]:
    out = []
    for item in update.get("content") or ():
        if (
            isinstance(item, dict)
            and item.get("type") == "diff"
            and isinstance(item.get("path"), str)
        ):
            old = item.get("oldText")
            kind: Literal["add", "update"] = "add" if not old else "update"
            out.append(FileChange(item["path"], kind, _str(item.get("newText"))))
    return tuple(out)


def _command(update: Mapping[str, Any]) -> str | None:
    raw = update.get("rawInput")
    if not isinstance(raw, dict):
        return None
    command = raw.get("command") or raw.get("cmd")
    if isinstance(command, list):
        # An argv (codex-acp: ["/bin/bash", "-lc", "a && b"]): quoted, so the text is the
        # command that runs, as the App Server shows it, not "/bin/bash -lc a && b".
        return shlex.join(str(part) for part in command)
    return command if isinstance(command, str) else None


@dataclass
class _Tool:
    started: bool = False
    kind: ToolKind = "other"
    done: bool = False


@dataclass
class _Turn:
    id: str
    message: str | None = None
    messages: dict[str, str] = field(default_factory=dict)
    last_message: str | None = None
    tools: dict[str, _Tool] = field(default_factory=dict)
    usage: Usage | None = None
    count: int = 0


class SessionTracker:
    """Follows one ACP session; ``begin`` a turn, ``feed`` updates, ``end`` with the response."""

    def __init__(self, session_id: str) -> None:
        self.session_id = session_id
        self.turn: _Turn | None = None
        self._turns = 0
        self._nonce = secrets.token_hex(3)
        self._tools_seen: dict[str, _Tool] = {}

    def begin(self) -> TurnStarted:
        # ACP has no turn ids; a session outlives its process (session/load), so the id carries
        # a per-tracker nonce as well as a counter: a reloaded session never reuses an id.
        self._turns += 1
        self.turn = _Turn(f"{self.session_id}:{self._nonce}:{self._turns}")
        return TurnStarted(self.turn.id)

    @property
    def active_turn_id(self) -> str | None:
        return self.turn.id if self.turn is not None else None

    def feed(self, update: Any) -> list[RuntimeEvent]:
        turn = self.turn
        if turn is None or not isinstance(update, dict):
            return []  # replayed history, or an update for no turn of ours
        kind = update.get("sessionUpdate")
        if kind == "agent_message_chunk":
            return self._text(turn, update)
        if kind == "agent_thought_chunk":
            text = _text_of(update)
            return [ReasoningDelta(f"{turn.id}:thought", text)] if text else []
        if kind in ("tool_call", "tool_call_update"):
            turn.message = None  # text after a tool is a new message
            return self._tool(turn, update)
        if kind in ("plan", "plan_update"):
            return [_plan(update.get("entries"))]
        if kind == "plan_removed":
            return [PlanUpdated(())]
        if kind == "usage_update":
            used, size = update.get("used"), update.get("size")
            usage = Usage(
                total_tokens=used if isinstance(used, int) else None,
                context_window=size if isinstance(size, int) else None,
            )
            turn.usage = usage
            return [UsageUpdated(usage)]
        return []  # commands, modes, config options, session info: not turn events

    def _text(self, turn: _Turn, update: Mapping[str, Any]) -> list[RuntimeEvent]:
        text = _text_of(update)
        message_id = _str(update.get("messageId"))
        if message_id is None:
            if turn.message is None:
                turn.count += 1
                turn.message = f"{turn.id}:m{turn.count}"
            message_id = turn.message
        else:
            turn.message = message_id
        if not text:
            return []  # Claude opens each message with an empty chunk; qwen closes with one
        turn.messages[message_id] = turn.messages.get(message_id, "") + text
        turn.last_message = message_id
        return [TextDelta(message_id, text)]

    def _tool(self, turn: _Turn, update: Mapping[str, Any]) -> list[RuntimeEvent]:
        tool_id = _str(update.get("toolCallId"))
        if tool_id is None:
            return []
        tool = turn.tools.setdefault(tool_id, self._tools_seen.get(tool_id) or _Tool())
        self._tools_seen[tool_id] = tool
        if tool.done:
            return []
        events: list[RuntimeEvent] = []
        status = _STATUS.get(str(update.get("status")))
        kind = _KINDS.get(str(update.get("kind")))
        if kind is not None:
            tool.kind = kind
        title = _str(update.get("title"))
        if not tool.started:
            tool.started = True
            events.append(
                ToolStarted(
                    tool_id,
                    tool.kind,
                    title or tool.kind.replace("_", " "),
                    command=_command(update),
                    changes=_changes(update),
                    status=status if status in ("pending", "in_progress") else "in_progress",
                )
            )
        elif status not in ("completed", "failed"):
            changes = _changes(update)
            output = _output(update)
            if title or status or changes or output:
                events.append(
                    ToolUpdated(
                        tool_id,
                        output_delta=None,
                        title=title,
                        status=status,
                        changes=changes or None,
                    )
                )
        if status in ("completed", "failed"):
            tool.done = True
            events.append(ToolCompleted(tool_id, status, output=_output(update)))
        return events

    def announce(self, tool_call: Any) -> list[RuntimeEvent]:
        """A permission request describes a tool some agents never announced (codex-acp shell,
        gemini): show it as pending before the approval, so the approval has a tool to sit on."""
        if not isinstance(tool_call, dict):
            return []
        return self.feed({**tool_call, "sessionUpdate": "tool_call", "status": "pending"})

    def declined(self, tool_id: str | None) -> list[RuntimeEvent]:
        """The human said no: the tool ends as declined, whatever the agent reports later."""
        turn = self.turn
        tool = turn.tools.get(tool_id) if turn is not None and tool_id else None
        if tool is None or tool.done or tool_id is None:
            return []
        tool.done = True
        return [ToolCompleted(tool_id, "declined")]

    def end(self, result: Any) -> list[RuntimeEvent]:
        """The ``session/prompt`` response arrived: the turn is over."""
        turn = self.turn
        if turn is None:
            return []
        stop = result.get("stopReason") if isinstance(result, dict) else None
        usage = turn.usage
        raw_usage = result.get("usage") if isinstance(result, dict) else None
        if isinstance(raw_usage, dict):
            usage = Usage(
                input_tokens=_int(raw_usage.get("inputTokens")),
                output_tokens=_int(raw_usage.get("outputTokens")),
                cached_input_tokens=_int(raw_usage.get("cachedReadTokens")),
                total_tokens=_int(raw_usage.get("totalTokens")),
                context_window=usage.context_window if usage else None,
            )
        if stop == "cancelled":
            return self._finish(turn, "interrupted", None, usage)
        return self._finish(turn, "completed", None, usage)

    def fail(self, error: TurnError) -> list[RuntimeEvent]:
        turn = self.turn
        return self._finish(turn, "failed", error, turn.usage) if turn is not None else []

    def _finish(
        self,
        turn: _Turn,
        status: Literal["completed", "interrupted", "failed"],
        error: TurnError | None,
        usage: Usage | None,
    ) -> list[RuntimeEvent]:
        close_as: ToolStatus = "completed" if status == "completed" else "failed"
        events: list[RuntimeEvent] = [
            ToolCompleted(tool_id, close_as)
            for tool_id, tool in turn.tools.items()
            if not tool.done
        ]
        for tool in turn.tools.values():
            tool.done = True
        final = turn.last_message if status == "completed" else None
        events.append(
            TurnCompleted(
                turn.id,
                status,
                error=error,
                final_item_id=final,
                final_text=turn.messages.get(final) if final else None,
                usage=usage,
            )
        )
        self.turn = None
        return events


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _text_of(update: Mapping[str, Any]) -> str:
    content = update.get("content")
    if isinstance(content, dict) and content.get("type") == "text":
        return str(content.get("text") or "")
    return ""


def _plan(raw: Any) -> PlanUpdated:
    entries = []
    for entry in raw if isinstance(raw, list) else ():
        if isinstance(entry, dict):
            status = entry.get("status")
            entries.append(
                PlanEntry(
                    str(entry.get("content") or ""),
                    status if status in ("pending", "in_progress", "completed") else "pending",
                )
            )
    return PlanUpdated(tuple(entries))


def prompt_error(code: int, message: str, data: Any) -> TurnError:
    """A failed ``session/prompt``: agents put the provider's words in different places."""
    detail = ""
    if isinstance(data, dict):
        for key in ("message", "details", "error"):
            if isinstance(data.get(key), str):
                detail = data[key]
                break
    text = f"{message}: {detail}" if detail and detail not in message else message
    # gemini answers with the provider's HTTP status as the JSON-RPC code.
    http_status = code if 400 <= code <= 599 else None
    return classify_failure(
        text, code=code if http_status is None else None, http_status=http_status
    )


def permission_request(params: Any, approval_id: str) -> ApprovalRequested | None:
    if not isinstance(params, dict):
        return None
    call = params.get("toolCall")
    call = call if isinstance(call, dict) else {}
    acp_kind = str(call.get("kind"))
    kind: ApprovalKind = (
        "command"
        if acp_kind == "execute"
        else "file_change"
        if acp_kind in ("edit", "delete", "move")
        else "other"
    )
    options = params.get("options")
    kinds = (
        {o.get("kind") for o in options if isinstance(o, dict)}
        if isinstance(options, list)
        else set()
    )
    decisions: list[ApprovalDecision] = []
    if "allow_once" in kinds or "allow_always" in kinds:
        decisions.append("accept")
    if "allow_always" in kinds:
        decisions.append("accept_for_session")
    decisions += ["decline", "cancel"]
    return ApprovalRequested(
        approval_id,
        kind,
        _str(call.get("title")) or _command(call) or "permission",
        tool_id=_str(call.get("toolCallId")),
        command=_command(call),
        decisions=tuple(decisions),
    )


_WANTED: Mapping[ApprovalDecision, tuple[str, ...]] = {
    "accept": ("allow_once", "allow_always"),
    "accept_for_session": ("allow_always", "allow_once"),
    "decline": ("reject_once", "reject_always"),
}


def permission_result(params: Any, decision: ApprovalDecision) -> dict[str, Any]:
    """The answer to ``session/request_permission``: the option whose *kind* fits."""
    if decision != "cancel":
        options = params.get("options") if isinstance(params, dict) else None
        by_kind: dict[str, str] = {}
        for option in options if isinstance(options, list) else ():
            if isinstance(option, dict) and isinstance(option.get("optionId"), str):
                by_kind.setdefault(str(option.get("kind")), option["optionId"])
        for kind in _WANTED[decision]:
            if kind in by_kind:
                return {"outcome": {"outcome": "selected", "optionId": by_kind[kind]}}
    return {"outcome": {"outcome": "cancelled"}}
