"""Slack Block Kit: the progress message (one, updated in place) and the final answer.

Slack has no collapsible blocks, so an execution group is one ``section`` listing its tools a
line each (a running tool adds the last lines of its output); commentary, steering messages,
approvals and errors are sections or context lines of their own. The activity is paginated
from the newest end like the Feishu card: what does not fit is summarised in one context line.

Limits kept (SLACK.md): at most 50 blocks, ``section`` text within 3 000 characters, header
text within 150, total block text well under the ~13 k characters where Slack answers
``msg_blocks_too_long``; buttons' text within 75, ``value`` within 2 000, ``action_id`` within
255. Button values are the caller's opaque tokens, never a payload made up here. No
``block_id`` is set (Slack caches blocks by it; omitted, it never goes stale).

``SlackRenderer`` keeps each activity block's sections between updates (the card actor holds
one per message); ``render_slack_progress`` draws from scratch and gives the same message.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from robota.core.events import ApprovalDecision
from robota.core.presentation import (
    OUTCOMES,
    RESTRICTED,
    STATE_LABELS,
    STATUS_ICONS,
    Approval,
    Block,
    DisplayState,
    Message,
    Steer,
    StreamGrouper,
    ToolCall,
    ToolGroup,
    TurnView,
    element_id,
    format_elapsed,
    group_signature,
    head,
    split_markdown,
    strip_launcher,
    tail_lines,
    tool_label,
)

__all__ = [
    "SLACK_LIMITS",
    "SlackLimits",
    "SlackMessage",
    "SlackRenderer",
    "render_slack_progress",
    "slack_final_answer",
]

Json = dict[str, Any]


@dataclass(frozen=True, slots=True)
class SlackLimits:
    blocks: int = 50
    section_text: int = 3000
    header_text: int = 150
    block_text_total: int = 11_000
    """Budget for all block text of one message (Slack refuses around 13 k)."""
    markdown_block: int = 12_000
    """A ``markdown`` block's text, cumulative per message."""
    button_text: int = 75
    button_value: int = 2000
    action_id: int = 255
    fallback_text: int = 3000
    """The top-level ``text`` (notifications, fallback)."""


SLACK_LIMITS = SlackLimits()

# Three backticks inside a code block would end it; a zero-width joiner keeps them apart.
_BROKEN_FENCE = "`\u200d``"

_DECISIONS: dict[ApprovalDecision, tuple[str, str | None]] = {
    "accept": ("Allow once", "primary"),
    "accept_for_session": ("Allow for this session", None),
    "decline": ("Decline", "danger"),
    "cancel": ("Cancel the turn", "danger"),
}


@dataclass(frozen=True, slots=True)
class SlackMessage:
    """A ``chat.postMessage`` / ``chat.update`` body without ``channel`` and ``ts``."""

    text: str
    blocks: list[Json]

    def payload(self) -> Json:
        return {"text": self.text, "blocks": self.blocks}


class SlackRenderer:
    """Renders one turn's progress messages; keep one per message to reuse its block cache.

    Each activity block's sections are cached with what they show (the versions of its
    activities, see ``group_signature``), and the message is filled from the newest end, so an
    update costs what changed plus the blocks that fit in one message, however long the turn.
    The header, context line and footer are drawn afresh. A fresh renderer draws the same
    message from the same view.
    """

    def __init__(self, *, agent: str, limits: SlackLimits = SLACK_LIMITS) -> None:
        self.agent = agent
        self.limits = limits
        self._grouper = StreamGrouper()
        self._view: TurnView | None = None
        """The view the caches belong to: versions order one view's activities only."""
        self._cache: dict[str, tuple[object, list[tuple[Json, int]]]] = {}

    def render(
        self,
        view: TurnView,
        *,
        elapsed: float | None = None,
        approval_tokens: Mapping[str, Mapping[ApprovalDecision, str]] | None = None,
    ) -> SlackMessage:
        """The progress message. Its blocks are shared with later renders: read-only."""
        if view is not self._view:  # another turn: start over
            self._view, self._grouper, self._cache = view, StreamGrouper(), {}
        agent, limits = self.agent, self.limits
        status, icon = _status(view)
        header = {
            "type": "header",
            "text": {"type": "plain_text", "text": head(f"{icon} {agent} · {status}", 150)},
        }
        facts = [format_elapsed(elapsed)]
        if view.restricted:
            facts.insert(0, RESTRICTED)
        if view.tool_count:
            facts.append(f"{view.tool_count} tool" + ("s" if view.tool_count != 1 else ""))
        if view.usage is not None and view.usage.total_tokens:
            facts.append(f"{view.usage.total_tokens:,} tokens")
        if not view.terminal and view.current_title:
            facts.append(_escape(head(view.current_title, 200)))
        context = _context(" · ".join(f for f in facts if f) or status)

        footer = _footer(view, approval_tokens or {}, limits)
        fixed = [header, context, *footer]
        block_room = limits.blocks - len(fixed) - 1  # one more for the "earlier" note
        text_room = limits.block_text_total - sum(_text_size(b) for b in fixed) - 200
        # Render from the newest end and stop when full: a long turn costs what its last page
        # does.
        stream = self._grouper.blocks(view)
        shown: list[Json] = []
        hidden = len(stream)
        full = False
        for key, item in reversed(stream):
            for block, size in reversed(self._sections(view, key, item)):
                if len(shown) >= block_room or size > text_room:
                    full = True
                    break
                shown.append(block)
                text_room -= size
            if full:
                break
            hidden -= 1
        shown.reverse()
        blocks = [header, context]
        if hidden:
            blocks.append(
                _context(f"… {hidden} earlier item{'s' if hidden != 1 else ''} not shown")
            )
        blocks.extend(shown)
        blocks.extend(footer)
        fallback = f"{agent}: {status}"
        if not view.terminal and view.current_title:
            fallback += f" · {view.current_title}"
        return SlackMessage(head(fallback, limits.fallback_text), blocks)

    def _sections(self, view: TurnView, key: str, item: Block) -> list[tuple[Json, int]]:
        signature: object = (
            group_signature(view, item)
            if isinstance(item, ToolGroup)
            else (type(item), item.version)
        )
        hit = self._cache.get(key)
        if hit is not None and hit[0] == signature:
            return hit[1]
        sections = [(block, _text_size(block)) for block in _sections(view, item, self.limits)]
        self._cache[key] = (signature, sections)
        return sections


def render_slack_progress(
    view: TurnView,
    *,
    agent: str,
    elapsed: float | None = None,
    approval_tokens: Mapping[str, Mapping[ApprovalDecision, str]] | None = None,
    limits: SlackLimits = SLACK_LIMITS,
) -> SlackMessage:
    """The progress message from a fresh renderer (no cache): for previews and tests."""
    renderer = SlackRenderer(agent=agent, limits=limits)
    return renderer.render(view, elapsed=elapsed, approval_tokens=approval_tokens)


def _footer(
    view: TurnView,
    approval_tokens: Mapping[str, Mapping[ApprovalDecision, str]],
    limits: SlackLimits,
) -> list[Json]:
    """The plan and the pending approvals, below the activity."""
    footer: list[Json] = []
    if view.plan:
        lines = ["*Plan*"]
        for entry in view.plan[:20]:
            mark = {"completed": "✅", "in_progress": "⏳", "pending": "⬜"}[entry.status]
            lines.append(f"{mark} {_escape(head(entry.content, 200))}")
        if len(view.plan) > 20:
            lines.append(f"… {len(view.plan) - 20} more")
        footer.append(_section("\n".join(lines), limits))
    pending = view.pending_approvals
    for approval in pending[:3]:
        footer.append(_section(_asking(approval), limits))
        buttons = _buttons(approval, approval_tokens.get(approval.approval_id, {}), limits)
        if buttons:
            footer.append({"type": "actions", "elements": buttons})
    if len(pending) > 3:
        footer.append(_context(f"… {len(pending) - 3} more approvals waiting"))

    return footer


def slack_final_answer(text: str, *, limits: SlackLimits = SLACK_LIMITS) -> list[SlackMessage]:
    """The final answer as one message per chunk, each a single ``markdown`` block (standard
    Markdown, no mrkdwn escaping), split on Markdown boundaries within the block limit."""
    budget = min(limits.markdown_block, limits.block_text_total)
    return [
        SlackMessage(head(chunk, limits.fallback_text), [{"type": "markdown", "text": chunk}])
        for chunk in split_markdown(text, budget)
    ]


# -- activity -----------------------------------------------------------------------------------


def _sections(view: TurnView, block: Block, limits: SlackLimits) -> list[Json]:
    if isinstance(block, ToolGroup):
        return _group_sections(view, block, limits)
    if isinstance(block, Message):
        text = _escape(block.text.strip())
        if len(text) > 1500:
            text = head(split_markdown(text, 1500)[0].rstrip(), 1500)
        return [_section(text, limits)]
    if isinstance(block, Steer):
        return [_section(f"🗣️ *You:* {_escape(head(block.text.strip(), 1000))}", limits)]
    if isinstance(block, Approval):
        return [_context(_approval_note(block))]
    text = f"❗ *Error* ({block.category}): {_escape(head(block.message, 1000))}"
    return [_section(text, limits)]


def _group_sections(view: TurnView, group: ToolGroup, limits: SlackLimits) -> list[Json]:
    icon = "⏳" if group.running else "🔹"
    lines = [f"{icon} *{_escape(head(group.display_title, 150))}*"]
    for tool in group.tools:
        line = _tool_line(tool)
        for approval in view.approvals_for(tool.tool_id):
            line += f" · 🔐 {OUTCOMES[approval.decision]}"
        lines.append(line)
        if tool.running and tool.output.strip():
            tail, _ = tail_lines(tool.output, 3)
            shown = "\n".join(head(line, 200) for line in tail).replace("```", _BROKEN_FENCE)
            lines.append(f"```{_escape(shown)}```")
    sections: list[Json] = []
    current: list[str] = []
    size = 0
    room = limits.section_text - 100
    for full in lines:
        line = head(full, room)
        if current and size + len(line) + 1 > room:
            sections.append(_section("\n".join(current), limits))
            current, size = [], 0
        current.append(line)
        size += len(line) + 1
    if current:
        sections.append(_section("\n".join(current), limits))
    return sections


def _tool_line(tool: ToolCall) -> str:
    what = head(tool_label(tool).replace("\n", " ").strip(), 150).replace("`", "'")
    line = f"{STATUS_ICONS[tool.status]} `{_escape(what)}`"
    if tool.exit_code not in (None, 0):
        line += f" → exit {tool.exit_code}"
    if tool.changes:
        paths = ", ".join(_escape(head(c.path, 80)) for c in tool.changes[:3])
        more = f" +{len(tool.changes) - 3}" if len(tool.changes) > 3 else ""
        line += f" ({paths}{more})"
    return line


def _approval_note(approval: Approval) -> str:
    outcome = OUTCOMES[approval.decision]
    return f"🔐 {_escape(head(approval.title, 200))}: *{outcome}*"


def _asking(approval: Approval) -> str:
    lines = [f"🔐 *Approval needed*: {_escape(head(approval.title, 300))}"]
    if approval.command:
        command = head(strip_launcher(approval.command), 1200).replace("```", _BROKEN_FENCE)
        lines.append(f"```{_escape(command)}```")
    if approval.cwd:
        lines.append(f"in `{_escape(head(approval.cwd, 200))}`")
    if approval.reason:
        lines.append(_escape(head(approval.reason, 500)))
    return "\n".join(lines)


def _buttons(
    approval: Approval, tokens: Mapping[ApprovalDecision, str], limits: SlackLimits
) -> list[Json]:
    buttons: list[Json] = []
    for decision in approval.decisions:
        token = tokens.get(decision)
        if token is None:
            continue
        if len(token) > limits.button_value:
            raise ValueError(f"an approval token of {len(token)} characters exceeds Slack's 2000")
        label, style = _DECISIONS[decision]
        button: Json = {
            "type": "button",
            "action_id": element_id("a", f"{approval.approval_id}:{decision}") + f"_{decision}",
            "text": {"type": "plain_text", "text": head(label, limits.button_text)},
            "value": token,
        }
        if style is not None:
            button["style"] = style
        buttons.append(button)
    return buttons


# -- blocks -------------------------------------------------------------------------------------


def _section(text: str, limits: SlackLimits) -> Json:
    text = head(text or " ", limits.section_text)
    return {"type": "section", "text": {"type": "mrkdwn", "text": text}}


def _context(text: str) -> Json:
    return {"type": "context", "elements": [{"type": "mrkdwn", "text": head(text, 2000)}]}


def _text_size(block: Json) -> int:
    if block["type"] in ("section", "header"):
        return len(block["text"]["text"])
    if block["type"] == "context":
        return sum(len(e["text"]) for e in block["elements"])
    if block["type"] == "actions":
        return sum(len(e["text"]["text"]) + len(e["value"]) for e in block["elements"])
    return len(str(block.get("text", "")))


_ICONS: dict[DisplayState, str] = {
    "completed": "✅",
    "failed": "❌",
    "interrupted": "⏹️",
    "approval": "🔐",
    "starting": "⏳",
    "working": "⏳",
}


def _status(view: TurnView) -> tuple[str, str]:
    state = view.display_state
    return STATE_LABELS[state], _ICONS[state]


def _escape(text: str) -> str:
    """mrkdwn control characters (Slack's own escaping rule: only these three)."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
