"""Feishu/Lark progress cards (Card JSON 2.0) and final-answer messages.

Two layouts of the activity area:

* ``grouped`` (default): commentary and steering messages stay visible; the tools and reasoning
  between two commentary messages form one execution group, a collapsed ``collapsible_panel``
  titled with the group's latest reasoning summary (running while any of its tools runs, else
  neutral). Each tool is a collapsed panel of its own inside the group. A group of more than
  eight tools is split into sibling sub-panels of eight, keyed by their position in the group,
  so a sub-panel never changes identity as the group grows.
* ``timeline``: one element per activity, 40 activities per page.

``element_id``s derive from a hash of what the element shows (the tool id for a tool), so they
are unique within a card and never change across updates; ``expanded`` is always ``false`` and
never changes, so the client keeps whatever the user expanded across full-card updates.

Budgets: the activity area stays within 24 KB of UTF-8 JSON, 160 components and three Markdown
tables; pages are filled from the newest end, and each history page is measured on its own. The
whole card stays within the platform's hard limits (30 KB request body, 200 components); a card
that would not is re-paginated with a smaller activity budget.

Rendering is incremental: each top-level element is cached with its JSON and the versions of
the activities it shows (see ``TurnView``), and the elements stay in order across updates with
running sums of what the budgets count (``_card_pages``), so an update redraws only what
changed since the last one, paginates by bisection and joins the card's JSON from cached parts.
A fresh renderer renders the same card, byte for byte, from the same view.

Buttons never carry a payload the renderer made up: their callback ``value`` is
``{"token": <opaque token from the caller>}``, and a decision without a token has no button.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from robota.core.events import ApprovalDecision
from robota.core.presentation import (
    OUTCOMES,
    RESTRICTED,
    STATE_LABELS,
    STATUS_ICONS,
    Activity,
    Approval,
    DisplayState,
    ErrorNote,
    Message,
    Reasoning,
    Steer,
    ToolCall,
    ToolGroup,
    TurnView,
    count_tables,
    defuse_tables,
    element_id,
    format_elapsed,
    head,
    split_markdown,
    strip_launcher,
    tail_bytes,
    tool_label,
    utf8_len,
)

from ._card_pages import GroupedRow, Row, TimelineRow, Unit, dumps, escaped_len

__all__ = [
    "DECISION_LABELS",
    "FeishuBudget",
    "FeishuCard",
    "FeishuRenderer",
    "Layout",
    "card_components",
    "dumps",
    "feishu_final_answer",
    "render_feishu_card",
]

Layout = Literal["grouped", "timeline"]
Json = dict[str, Any]

DECISION_LABELS: dict[ApprovalDecision, tuple[str, str]] = {
    "accept": ("Allow once", "primary"),
    "accept_for_session": ("Allow for this session", "default"),
    "decline": ("Decline", "danger"),
    "cancel": ("Cancel the turn", "danger"),
}

_PANEL_ICON: Json = {
    "tag": "standard_icon",
    "token": "down-small-ccm_outlined",
    "size": "16px 16px",
}
_GROUP_RUNNING, _GROUP_NEUTRAL = "⏳", "🔹"


@dataclass(frozen=True, slots=True)
class FeishuBudget:
    activity_bytes: int = 24 * 1024
    activity_components: int = 160
    activity_tables: int = 3
    card_bytes: int = 30 * 1024
    """The request body (the card as a JSON string inside ``{"content": ...}``)."""
    card_components: int = 200
    timeline_page: int = 40
    tools_per_panel: int = 8


@dataclass(frozen=True, slots=True)
class FeishuCard:
    card: Json
    """Card JSON 2.0; shares cached parts with later renders: treat it as read-only."""
    json: str
    """``card`` serialised (compact UTF-8): what goes into the message ``content``."""
    activity: list[Json]
    """The activity elements shown (also inside ``card``)."""
    page: int
    """0 is the newest page; ``pages - 1`` the oldest."""
    pages: int
    activity_bytes: int
    activity_components: int


def card_components(value: Any) -> int:
    """Components in a card part: every object with a ``tag`` (conservative: icons count)."""
    if isinstance(value, dict):
        own = 1 if "tag" in value else 0
        return own + sum(card_components(v) for v in value.values())
    if isinstance(value, list):
        return sum(card_components(v) for v in value)
    return 0


@dataclass(frozen=True, slots=True)
class _Caps:
    """Byte caps for what one element shows; ``compact`` ones when a unit would not fit."""

    command: int = 400
    output: int = 800
    changes: int = 400
    reasoning: int = 1500
    commentary: int = 6000


_NORMAL, _COMPACT = _Caps(), _Caps(command=160, output=160, changes=160, reasoning=300)
_BODY = utf8_len(json.dumps({"content": ""}, ensure_ascii=False))
"""The request body around the card's escaped JSON."""


class FeishuRenderer:
    """Renders one turn's progress cards; keep one per card to reuse what it drew.

    The activity's units stay drawn and in order between updates (see ``_card_pages``), so an
    update costs what changed since the last one, the pagination (a bisection per page) and the
    joining of the card's JSON from its parts' cached JSON, however long the turn. A fresh
    renderer draws the same card, byte for byte, from the same view.
    """

    def __init__(
        self, *, agent: str, layout: Layout = "grouped", budget: FeishuBudget | None = None
    ) -> None:
        if layout not in ("grouped", "timeline"):
            raise ValueError(f"unknown Feishu card layout {layout!r} (grouped or timeline)")
        self.agent = agent
        self.layout = layout
        self.budget = budget or FeishuBudget()
        # The activity's units, with the view, layout and budget they were drawn for.
        self._rows: tuple[TurnView, Layout, FeishuBudget, TimelineRow | GroupedRow] | None = None

    # -- the card -------------------------------------------------------------------------------

    def render(
        self,
        view: TurnView,
        *,
        elapsed: float | None = None,
        page: int = 0,
        approval_tokens: Mapping[str, Mapping[ApprovalDecision, str]] | None = None,
        page_tokens: Mapping[Literal["older", "newer"], str] | None = None,
    ) -> FeishuCard:
        """The card for ``view``. ``elapsed`` (seconds) is the caller's: injected so that tests
        are deterministic. ``approval_tokens[approval_id][decision]`` and ``page_tokens`` are
        opaque tokens the caller stored server side; only decisions with a token get a button."""
        budget = self.budget
        row = self._row(view)
        bytes_budget = budget.activity_bytes
        for _ in range(6):
            pages = row.pages(
                max_bytes=bytes_budget,
                max_components=budget.activity_components,
                max_tables=budget.activity_tables,
                max_units=budget.timeline_page if self.layout == "timeline" else None,
            )
            shown = min(max(page, 0), len(pages) - 1) if pages else 0
            start, end = pages[shown] if pages else (0, 0)
            chosen = row.units[start:end]
            card, text, body, others = self._card(
                view,
                chosen,
                page=shown,
                pages=len(pages),
                elapsed=elapsed,
                approval_tokens=approval_tokens,
                page_tokens=page_tokens,
            )
            # Components: the activity's are known; count only the rest of the card.
            components = row.components(start, end) + card_components(others)
            components += card_components(card["header"])
            if body <= budget.card_bytes and components <= budget.card_components:
                break
            bytes_budget = bytes_budget * 3 // 4  # header, plan or approvals were unusually big
        return FeishuCard(
            card=card,
            json=text,
            activity=[unit.element for unit in chosen],
            page=shown,
            pages=len(pages),
            activity_bytes=row.list_size(start, end),
            activity_components=row.components(start, end),
        )

    def _row(self, view: TurnView) -> Row:
        """The activity's units, brought up to date with ``view``. Another view (or layout, or
        budget) starts over: the caches are keyed by versions, which only one view orders."""
        kept = self._rows
        if kept is not None and kept[0] is view and kept[1:3] == (self.layout, self.budget):
            return kept[3].update(view)
        draw = _Draw(self.budget)
        rows: TimelineRow | GroupedRow = (
            TimelineRow(draw.one)
            if self.layout == "timeline"
            else GroupedRow(draw.one, draw.run, self.budget.tools_per_panel)
        )
        self._rows = (view, self.layout, self.budget, rows)
        return rows.update(view)

    def _card(
        self,
        view: TurnView,
        activity: list[Unit],
        *,
        page: int,
        pages: int,
        elapsed: float | None,
        approval_tokens: Mapping[str, Mapping[ApprovalDecision, str]] | None,
        page_tokens: Mapping[Literal["older", "newer"], str] | None,
    ) -> tuple[Json, str, int, list[Json]]:
        """The card, its JSON, the bytes of the request body that carries it, and its elements
        other than the activity's."""
        status, template = _status(view)
        before: list[Json] = []
        if pages > 1:
            note = f"Page {page + 1} of {pages}" + (" · older activity above" if page == 0 else "")
            before.append(_markdown("history", f"<font color='grey'>{note}</font>"))
        after: list[Json] = []
        if page_tokens and pages > 1:
            if page + 1 < pages and "older" in page_tokens:
                after.append(_button("older", "Older", "default", page_tokens["older"]))
            if page > 0 and "newer" in page_tokens:
                after.append(_button("newer", "Newer", "default", page_tokens["newer"]))
        footer = self._footer(view, approval_tokens)
        if footer and (before or activity or after):
            after.append({"tag": "hr", "element_id": "footer_rule"})
        after.extend(footer)
        if not (before or activity or after):
            after.append(_markdown("empty", "<font color='grey'>Starting…</font>"))
        subtitle = [format_elapsed(elapsed)]
        if view.restricted:
            subtitle.insert(0, RESTRICTED)
        if view.tool_count:
            subtitle.append(f"{view.tool_count} tool" + ("s" if view.tool_count != 1 else ""))
        if not view.terminal and view.current_title:
            subtitle.append(view.current_title)
        body: Json = {"elements": []}
        card: Json = {
            "schema": "2.0",
            "config": {
                "update_multi": True,
                "width_mode": "fill",
                "summary": {"content": head(f"{self.agent}: {status}", 100)},
            },
            "header": {
                "title": {"tag": "plain_text", "content": head(f"{self.agent} · {status}", 100)},
                "subtitle": {
                    "tag": "plain_text",
                    "content": head(" · ".join(s for s in subtitle if s) or status, 100),
                },
                "template": template,
            },
            "body": body,
        }
        # The JSON is joined from the elements' own (compact JSON nests by concatenation), so the
        # activity, most of the card, is never serialised again; likewise the body's size.
        shell = dumps(card)  # ...,"body":{"elements":[]}}
        head_json = [dumps(element) for element in before]
        tail_json = [dumps(element) for element in after]
        parts = [*head_json, *(unit.text for unit in activity), *tail_json]
        text = _fill(shell, ",".join(parts), 3)
        escaped = escaped_len(shell) + sum(map(escaped_len, head_json + tail_json))
        escaped += sum(unit.escaped for unit in activity) + max(0, len(parts) - 1)  # commas
        body["elements"] = [*before, *(unit.element for unit in activity), *after]
        return card, text, _BODY + escaped, [*before, *after]

    def _footer(
        self, view: TurnView, tokens: Mapping[str, Mapping[ApprovalDecision, str]] | None
    ) -> list[Json]:
        elements: list[Json] = []
        if view.plan:
            lines = ["**Plan**"]
            for entry in view.plan[:20]:
                mark = {"completed": "✅", "in_progress": "⏳", "pending": "⬜"}[entry.status]
                lines.append(f"{mark} {_escape(head(entry.content, 200))}")
            if len(view.plan) > 20:
                lines.append(f"… {len(view.plan) - 20} more")
            elements.append(_markdown("plan", "\n".join(lines)))
        pending = view.pending_approvals
        for approval in pending[:3]:
            elements.append(_markdown(element_id("q", approval.approval_id), _asking(approval)))
            offered = (tokens or {}).get(approval.approval_id, {})
            for decision in approval.decisions:
                token = offered.get(decision)
                if token is None:
                    continue
                label, kind = DECISION_LABELS[decision]
                key = f"{approval.approval_id}:{decision}"
                elements.append(_button(element_id("b", key), label, kind, token))
        if len(pending) > 3:
            elements.append(_markdown("more_approvals", f"… {len(pending) - 3} more approvals"))
        if view.terminal and view.usage is not None and view.usage.total_tokens:
            elements.append(
                _markdown("usage", f"<font color='grey'>{view.usage.total_tokens:,} tokens</font>")
            )
        return elements


class _Draw:
    """Draws activity units, each cached with what it shows (the versions of its activities,
    see ``TurnView``): a unit whose activities did not change is never drawn twice, and a
    group's sub-panel whose heading alone changed (the group grew) reuses its drawn children."""

    def __init__(self, budget: FeishuBudget) -> None:
        self.budget = budget
        self._units: dict[str, tuple[object, Unit]] = {}
        self._tools: dict[str, tuple[object, Unit]] = {}
        self._children: dict[str, tuple[object, _Children]] = {}

    def one(self, view: TurnView, key: str, activity: Activity) -> Unit:
        return self._cached(view, key, _activity_signature(view, activity), activity)

    def run(
        self,
        view: TurnView,
        key: str,
        group: ToolGroup,
        index: int,
        members: Sequence[ToolCall | Reasoning],
    ) -> Unit:
        """Sub-panel ``index`` of ``group``: its heading shows the group's title and size."""
        newest = 0
        approvals = view.tools_with_approvals
        for member in members:
            newest = max(newest, member.version)
            if approvals and isinstance(member, ToolCall) and member.tool_id in approvals:
                newest = max(newest, _shown_version(view, member))
        signature = (newest, len(members), group.display_title, len(group.tools))
        sub_key = key if index == 0 else f"{key}#{index}"
        return self._cached(view, sub_key, signature, _Run(group, index, members, newest))

    def _cached(self, view: TurnView, key: str, signature: object, what: object) -> Unit:
        hit = self._units.get(key)
        if hit is not None and hit[0] == signature:
            return hit[1]
        unit = self._unit(view, key, what, _NORMAL)
        if unit.size > self.budget.activity_bytes // 2:
            unit = self._unit(view, key, what, _COMPACT)
        self._units[key] = (signature, unit)
        return unit

    def _unit(self, view: TurnView, key: str, what: object, caps: _Caps) -> Unit:
        if isinstance(what, _Run):
            return self._group_panel(view, key, what, caps)
        if isinstance(what, ToolCall):
            return self._tool_panel(view, what, caps)
        if isinstance(what, Message):
            text = _cap_markdown(what.text, caps.commentary)
            if count_tables(text) > self.budget.activity_tables:
                text = defuse_tables(text)
            return _whole(_markdown(element_id("m", key), text, tables=True), count_tables(text))
        assert isinstance(what, Reasoning | Steer | Approval | ErrorNote)
        return _whole(_markdown(element_id(_PREFIX[type(what)], key), _note(what, caps)))

    def _group_panel(self, view: TurnView, key: str, run: _Run, caps: _Caps) -> Unit:
        group, members = run.group, run.members
        running = any(m.running for m in members if isinstance(m, ToolCall))
        icon = _GROUP_RUNNING if running else _GROUP_NEUTRAL
        tools = sum(1 for m in members if isinstance(m, ToolCall))
        count = len(group.tools)
        if count > self.budget.tools_per_panel:
            first = run.index * self.budget.tools_per_panel + 1
            suffix = f"tools {first}-{first + tools - 1} of {count}"
        else:
            suffix = f"{count} tool" + ("s" if count != 1 else "") if count else ""
        heading = f"{icon} **{_escape(head(group.display_title, 90))}**"
        if suffix:
            heading += f" <font color='grey'>· {suffix}</font>"
        children = self._run_children(view, key, run, caps)
        panel = _panel(element_id("g", key), heading, [])
        shell = dumps(panel)
        components = card_components(panel) + children.components
        panel["elements"] = list(children.elements)
        return Unit(
            panel,
            _fill(shell, children.text, 2),
            utf8_len(shell) + children.size,
            escaped_len(shell) + children.escaped,
            components,
            0,
        )

    def _run_children(self, view: TurnView, key: str, run: _Run, caps: _Caps) -> _Children:
        # A run holds the same members while its count does (they are contiguous from a fixed
        # start), and any change to them raises its newest version.
        signature = (run.newest, len(run.members), caps is _COMPACT)
        hit = self._children.get(key)
        if hit is not None and hit[0] == signature:
            return hit[1]
        children: list[Unit] = []
        thoughts: list[str] = []
        for member in run.members:
            if isinstance(member, Reasoning):
                thoughts.append(member.text.strip())
                continue
            if thoughts:
                children.append(_thoughts(key, len(children), thoughts, caps))
                thoughts = []
            children.append(self._tool_panel(view, member, caps))
        if thoughts:
            children.append(_thoughts(key, len(children), thoughts, caps))
        joined = _Children.of(children)
        self._children[key] = (signature, joined)
        return joined

    def _tool_panel(self, view: TurnView, tool: ToolCall, caps: _Caps) -> Unit:
        signature = (_shown_version(view, tool), caps is _COMPACT)
        hit = self._tools.get(tool.tool_id)
        if hit is not None and hit[0] == signature:
            return hit[1]
        icon = STATUS_ICONS[tool.status]
        heading = f"{icon} {_title_markdown(tool_label(tool))}"
        body = _tool_body(tool, view.approvals_for(tool.tool_id), caps)
        unit = _whole(_panel(element_id("t", tool.tool_id), heading, [body]))
        self._tools[tool.tool_id] = (signature, unit)
        return unit


@dataclass(frozen=True, slots=True)
class _Run:
    """Sub-panel ``index`` of a group, and the newest version of what it shows."""

    group: ToolGroup
    index: int
    members: Sequence[ToolCall | Reasoning]
    newest: int


@dataclass(frozen=True, slots=True)
class _Children:
    """A panel's children joined: their JSON (comma separated), its bytes plain and escaped."""

    elements: list[Json]
    text: str
    size: int
    escaped: int
    components: int

    @classmethod
    def of(cls, units: list[Unit]) -> _Children:
        commas = max(0, len(units) - 1)
        return cls(
            [unit.element for unit in units],
            ",".join(unit.text for unit in units),
            sum(unit.size for unit in units) + commas,
            sum(unit.escaped for unit in units) + commas,
            sum(unit.components for unit in units),
        )


def _whole(element: Json, tables: int = 0) -> Unit:
    text = dumps(element)
    return Unit(element, text, utf8_len(text), escaped_len(text), card_components(element), tables)


def _thoughts(key: str, position: int, texts: list[str], caps: _Caps) -> Unit:
    text, dropped = _head_bytes("\n\n".join(texts), caps.reasoning)
    if dropped:
        text += " …"
    return _whole(_markdown(element_id("r", f"{key}@{position}"), f"💭 {_escape(text)}"))


def _fill(shell: str, parts: str, tail: int) -> str:
    """``shell``, the JSON of an element whose ``elements`` list is empty and followed by
    ``tail`` characters, with ``parts`` (the children's JSON, comma separated) in that list."""
    return shell[:-tail] + parts + shell[-tail:]


def render_feishu_card(
    view: TurnView,
    *,
    agent: str,
    layout: Layout = "grouped",
    elapsed: float | None = None,
    page: int = 0,
    approval_tokens: Mapping[str, Mapping[ApprovalDecision, str]] | None = None,
) -> FeishuCard:
    """One card from a fresh renderer (no cache): for previews and tests."""
    renderer = FeishuRenderer(agent=agent, layout=layout)
    return renderer.render(view, elapsed=elapsed, page=page, approval_tokens=approval_tokens)


def feishu_final_answer(text: str, *, card_bytes: int = 30 * 1024) -> list[Json]:
    """The final answer as Card 2.0 messages (``msg_type: interactive``), one per chunk.

    Chunks break on Markdown boundaries (never inside a fence or table) with at most three
    tables each; a chunk whose request body would still exceed ``card_bytes`` (JSON escaping
    grows text full of quotes and newlines) is split again with a smaller limit.
    """
    cards: list[Json] = []
    pending = split_markdown(text, 16 * 1024, unit="bytes", max_tables=3)
    pending.reverse()
    while pending:
        chunk = pending.pop()
        card = {
            "schema": "2.0",
            "config": {"update_multi": True, "width_mode": "fill"},
            "body": {"elements": [_markdown("answer", chunk, tables=True)]},
        }
        body = utf8_len(json.dumps({"content": dumps(card)}, ensure_ascii=False))
        if body > card_bytes and utf8_len(chunk) > 1024:
            smaller = split_markdown(chunk, utf8_len(chunk) // 2, unit="bytes", max_tables=3)
            pending.extend(reversed(smaller))
            continue
        cards.append(card)
    return cards


# -- elements -----------------------------------------------------------------------------------

_PREFIX: dict[type, str] = {Reasoning: "r", Steer: "u", Approval: "a", ErrorNote: "e"}


def _markdown(eid: str, content: str, *, tables: bool = False) -> Json:
    """A markdown element; tables (which the card limits) only where ``tables`` allows them:
    anywhere else a table-shaped text is shown as code."""
    if not tables and "|" in content and count_tables(content):
        content = defuse_tables(content)
    return {"tag": "markdown", "element_id": eid, "content": content or " "}


def _panel(eid: str, heading: str, children: list[Json]) -> Json:
    return {
        "tag": "collapsible_panel",
        "element_id": eid,
        "expanded": False,
        "header": {
            "title": {"tag": "markdown", "content": heading},
            "icon": _PANEL_ICON,
            "icon_position": "right",
            "icon_expanded_angle": -180,
        },
        "elements": children,
    }


def _button(eid: str, label: str, kind: str, token: str) -> Json:
    return {
        "tag": "button",
        "element_id": eid,
        "text": {"tag": "plain_text", "content": label},
        "type": kind,
        "behaviors": [{"type": "callback", "value": {"token": token}}],
    }


_TEMPLATES: dict[DisplayState, str] = {
    "completed": "green",
    "failed": "red",
    "interrupted": "grey",
    "approval": "orange",
    "starting": "blue",
    "working": "blue",
}


def _status(view: TurnView) -> tuple[str, str]:
    state = view.display_state
    return STATE_LABELS[state], _TEMPLATES[state]


def _shown_version(view: TurnView, member: ToolCall | Reasoning) -> int:
    """The newest version of what a tool's panel shows: the tool and its approvals."""
    if isinstance(member, Reasoning):
        return member.version
    version = member.version
    for approval in view.approvals_for(member.tool_id):
        version = max(version, approval.version)
    return version


def _activity_signature(view: TurnView, activity: Activity) -> object:
    if isinstance(activity, Message):
        return (activity.version, view.is_final(activity))
    if isinstance(activity, ToolCall):
        return _shown_version(view, activity)
    return activity.version


def _title_markdown(title: str) -> str:
    line = head(title.replace("\n", " ").strip(), 100)
    if "`" not in line:
        return f"`{line}`"
    return _escape(line)


def _tool_body(tool: ToolCall, approvals: Sequence[Approval], caps: _Caps) -> Json:
    parts: list[str] = []
    if tool.command:
        command, dropped = _head_bytes(strip_launcher(tool.command), caps.command)
        parts.append(_fence("$ " + command + (" …" if dropped else "")))
    elif tool.title:
        parts.append(_escape(head(tool.title.replace("\n", " "), 200)))
    if tool.cwd:
        parts.append(f"<font color='grey'>in {_escape(head(tool.cwd, 120))}</font>")
    if tool.changes:
        lines: list[str] = []
        budget = caps.changes
        for change in tool.changes:
            path = head(change.path, 120).replace("`", "'")
            line = f"- {change.kind} `{path}`"
            budget -= utf8_len(line)
            if budget < 0:
                lines.append(f"- … {len(tool.changes) - len(lines)} more")
                break
            lines.append(line)
        parts.append("\n".join(lines))
        diffs = "\n".join(c.diff.rstrip("\n") for c in tool.changes if c.diff)
        if diffs.strip():
            diff, cut = _head_bytes(diffs, caps.output)
            parts.append(_fence(diff + ("\n…" if cut else "")))
    output, dropped = tail_bytes(tool.output, caps.output)
    if output.strip():
        earlier = dropped + tool.output_dropped
        if earlier:
            parts.append(f"<font color='grey'>… {earlier:,} earlier bytes</font>")
        parts.append(_fence(output.rstrip("\n")))
    for approval in approvals:
        parts.append(f"🔐 {OUTCOMES[approval.decision]}" + _by(approval))
    if tool.exit_code is not None:
        parts.append(f"exit code {tool.exit_code}")
    elif tool.status in ("failed", "declined"):
        parts.append(tool.status)
    return _markdown(element_id("o", tool.tool_id), "\n".join(parts) or tool.status)


def _note(activity: Reasoning | Steer | Approval | ErrorNote, caps: _Caps) -> str:
    if isinstance(activity, Reasoning):
        text, dropped = _head_bytes(activity.text.strip(), caps.reasoning)
        return f"💭 {_escape(text)}" + (" …" if dropped else "")
    if isinstance(activity, Steer):
        text, dropped = _head_bytes(activity.text.strip(), 2000)
        return f"🗣️ **You:** {_escape(text)}" + (" …" if dropped else "")
    if isinstance(activity, Approval):
        outcome = OUTCOMES[activity.decision]
        return f"🔐 {_escape(head(activity.title, 200))}: **{outcome}**{_by(activity)}"
    text, _ = _head_bytes(activity.message, 2000)
    return f"❗ **Error** ({activity.category}): {_escape(text)}"


def _by(approval: Approval) -> str:
    return f" ({approval.by})" if approval.by not in (None, "user") else ""


def _asking(approval: Approval) -> str:
    lines = [f"🔐 **Approval needed**: {_escape(head(approval.title, 200))}"]
    if approval.command:
        command, dropped = _head_bytes(strip_launcher(approval.command), 600)
        lines.append(_fence(command + (" …" if dropped else "")))
    if approval.cwd:
        lines.append(f"<font color='grey'>in {_escape(head(approval.cwd, 120))}</font>")
    if approval.reason:
        lines.append(_escape(head(approval.reason, 300)))
    return "\n".join(lines)


def _fence(text: str) -> str:
    # A run of backticks inside would close the fence early; a zero-width joiner breaks it.
    return "```\n" + text.replace("```", "`\u200d``") + "\n```"


def _escape(text: str) -> str:
    """Text shown as-is inside Feishu Markdown: no stray tags or emphasis."""
    return text.replace("<", "&lt;").replace(">", "&gt;")


def _head_bytes(text: str, limit: int) -> tuple[str, int]:
    data = text.encode("utf-8")
    if len(data) <= limit:
        return text, 0
    kept = data[:limit].decode("utf-8", errors="ignore")
    return kept, len(data) - utf8_len(kept)


def _cap_markdown(text: str, limit: int) -> str:
    if utf8_len(text) <= limit:
        return text
    chunks = split_markdown(text, limit - 8, unit="bytes")
    return chunks[0].rstrip() + "\n\n…"
