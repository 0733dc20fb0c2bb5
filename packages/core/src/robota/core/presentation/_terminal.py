"""The terminal rendering of a turn: plain text lines for the TUI and print mode's stderr.

No curses and no third-party dependency: the caller writes the lines wherever it wants. Layout,
top to bottom: a status line; the grouped activity (commentary and steering messages as text,
each execution group as a title line with one line per tool, a tool's output collapsed to its
last few lines unless the caller expands it); the plan; pending approvals with their choices.

``width`` cuts every line to that many columns (counted as characters; wide characters are not
measured). ``color`` adds ANSI SGR styling; without it the output is plain text.

``TerminalRenderer`` keeps each block's lines between updates (a TUI holds one per turn);
``render_terminal`` draws from scratch and gives the same lines.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from typing import Literal

from ._groups import OUTCOMES, Block, StreamGrouper, ToolGroup, group_signature, tool_label
from ._text import RESTRICTED, STATUS_ICONS, format_elapsed, head, strip_launcher, tail_lines
from ._view import Approval, ErrorNote, Message, Steer, ToolCall, TurnView

__all__ = ["TerminalRenderer", "render_terminal"]

_RESET = "\x1b[0m"
_STYLES = {
    "bold": "\x1b[1m",
    "dim": "\x1b[2m",
    "red": "\x1b[31m",
    "green": "\x1b[32m",
    "yellow": "\x1b[33m",
    "blue": "\x1b[34m",
    "cyan": "\x1b[36m",
}
_STATUS_STYLE = {
    "pending": "blue",
    "running": "blue",
    "completed": "green",
    "interrupted": "yellow",
    "failed": "red",
}
_CONTROLS = re.compile(r"[\x00-\x09\x0b-\x1f]")
"""C0 control characters but the newline (a text is cut into its lines after), each shown as
U+FFFD: a regular expression finds the few there are faster than ``str.translate`` looks up
every character of a long output."""
_CHOICES = {
    "accept": "[a] allow once",
    "accept_for_session": "[s] allow for this session",
    "decline": "[d] decline",
    "cancel": "[c] cancel the turn",
}


class TerminalRenderer:
    """Renders one turn's terminal lines; keep one per turn to reuse its line cache.

    Each activity block's lines are cached with what they show (the versions of its activities,
    see ``group_signature``), so an update re-renders only the blocks that changed and copies
    the rest; the status line, the plan and the pending approvals are drawn afresh (they are
    few lines). A fresh renderer draws the same lines from the same view.
    """

    def __init__(self, *, agent: str) -> None:
        self.agent = agent
        self._grouper = StreamGrouper()
        self._style: tuple[int | None, bool, int] = (None, False, 3)
        self._view: TurnView | None = None
        self._cache: dict[str, tuple[object, _Fragment]] = {}

    def render(
        self,
        view: TurnView,
        *,
        elapsed: float | None = None,
        width: int | None = None,
        color: bool = False,
        expanded: Collection[str] | Literal["all"] = (),
        output_lines: int = 3,
        last: int | None = None,
        approvals: bool = True,
    ) -> list[str]:
        """The turn as lines; the arguments are ``render_terminal``'s."""
        if view is not self._view:  # another turn: versions order one view's activities only
            self._view, self._grouper, self._cache = view, StreamGrouper(), {}
        style = (width, color, output_lines)
        if style != self._style:  # a resized terminal redraws every block once
            self._style, self._cache = style, {}
        out = _Lines(width, color)
        status = view.status if not view.pending_approvals else "waiting for approval"
        facts = [f"{self.agent} · {status}", format_elapsed(elapsed)]
        if view.restricted:
            facts.insert(1, RESTRICTED)
        if view.tool_count:
            facts.append(f"{view.tool_count} tool" + ("s" if view.tool_count != 1 else ""))
        if view.usage is not None and view.usage.total_tokens:
            facts.append(f"{view.usage.total_tokens:,} tokens")
        out.add(" · ".join(f for f in facts if f), "bold", _STATUS_STYLE.get(view.status, "blue"))
        if not view.terminal and view.current_title:
            out.add(f"  {view.current_title}", "dim")

        stream = self._grouper.blocks(view)
        if last is not None and len(stream) > last:
            out.add(f"… {len(stream) - last} earlier items", "dim")
            stream = stream[len(stream) - last :]
        for key, block in stream:
            blank_before, lines = self._fragment(view, key, block, expanded, output_lines)
            if blank_before:
                out.blank()
            out.lines.extend(lines)

        if view.plan:
            out.blank()
            out.add("Plan", "bold")
            for entry in view.plan:
                mark = {"completed": "[x]", "in_progress": "[>]", "pending": "[ ]"}[entry.status]
                out.add(f"  {mark} {entry.content}", "dim" if entry.status == "completed" else "")
        for approval in view.pending_approvals if approvals else ():
            out.blank()
            out.add(f"Approval needed: {approval.title}", "bold", "yellow")
            if approval.command:
                out.add(f"  $ {strip_launcher(approval.command)}")
            if approval.cwd:
                out.add(f"  in {approval.cwd}", "dim")
            if approval.reason:
                out.add(f"  {approval.reason}", "dim")
            out.add("  " + "  ".join(_CHOICES[d] for d in approval.decisions), "yellow")
        return out.lines

    def _fragment(
        self,
        view: TurnView,
        key: str,
        block: Block,
        expanded: Collection[str] | Literal["all"],
        output_lines: int,
    ) -> _Fragment:
        signature: object
        if isinstance(block, ToolGroup):
            if expanded == "all" or not expanded:
                opened: object = expanded == "all"
            else:
                opened = tuple(tool.tool_id in expanded for tool in block.tools)
            signature = (group_signature(view, block), opened)
        else:
            signature = (type(block), block.version)
        hit = self._cache.get(key)
        if hit is not None and hit[0] == signature:
            return hit[1]
        width, color, _ = self._style
        out = _Lines(width, color)
        blank_before = False
        if isinstance(block, ToolGroup):
            _group(out, view, block, expanded, output_lines)
        elif isinstance(block, Message):
            # The one block that starts with a blank line, unless the lines before end in one.
            blank_before = True
            out.add(block.text.strip())
        elif isinstance(block, Steer):
            out.add(f"> you: {block.text.strip()}", "cyan")
        elif isinstance(block, Approval) and not block.pending:  # pending: listed below
            out.add(f"  approval: {block.title}: {OUTCOMES[block.decision]}", "yellow")
        elif isinstance(block, ErrorNote):
            out.add(f"error ({block.category}): {block.message}", "red")
        fragment = (blank_before, out.lines)
        self._cache[key] = (signature, fragment)
        return fragment


_Fragment = tuple[bool, list[str]]
"""A block's lines, and whether a blank line separates them from non-blank lines above."""


def render_terminal(
    view: TurnView,
    *,
    agent: str,
    elapsed: float | None = None,
    width: int | None = None,
    color: bool = False,
    expanded: Collection[str] | Literal["all"] = (),
    output_lines: int = 3,
    last: int | None = None,
    approvals: bool = True,
) -> list[str]:
    """The turn as lines, from a fresh renderer (no cache). ``expanded``: tool ids whose whole
    kept output is shown (or ``"all"``); other tools show their last ``output_lines`` lines
    while running, none after. ``last``: only the newest that many activity blocks (print
    mode's progress), so a long turn costs what its tail does; ``None`` renders them all (a
    scrollable TUI). ``approvals``: draw the pending approvals with their choices; ``False``
    for a front end that shows them in a place of its own (the TUI's approval bar), so they
    are not shown twice."""
    return TerminalRenderer(agent=agent).render(
        view,
        elapsed=elapsed,
        width=width,
        color=color,
        expanded=expanded,
        output_lines=output_lines,
        last=last,
        approvals=approvals,
    )


def _group(
    out: _Lines,
    view: TurnView,
    group: ToolGroup,
    expanded: Collection[str] | Literal["all"],
    output_lines: int,
) -> None:
    marker = "▸" if not group.running else "…"
    out.add(f"{marker} {group.display_title}", "bold" if group.running else "dim")
    for tool in group.tools:
        _tool(out, tool, expanded == "all" or tool.tool_id in expanded, output_lines)
        for approval in view.approvals_for(tool.tool_id):
            out.add(f"      approval: {OUTCOMES[approval.decision]}", "yellow")


def _tool(out: _Lines, tool: ToolCall, expand: bool, output_lines: int) -> None:
    what = head(tool_label(tool).replace("\n", " ⏎ ").strip() or tool.kind, 300)
    line = f"  {STATUS_ICONS[tool.status]} {what}"
    if tool.exit_code not in (None, 0):
        line += f"  (exit {tool.exit_code})"
    style = {"failed": "red", "declined": "yellow"}.get(tool.status, "")
    out.add(line, style)
    for change in tool.changes:
        out.add(f"      {change.kind} {change.path}", "dim")
    if not tool.output.strip() or not (expand or tool.running):
        return
    if expand:
        lines, hidden = tool.output.rstrip("\n").split("\n"), 0
        if tool.output_dropped:
            out.add(f"      │ … {tool.output_dropped:,} earlier bytes", "dim")
    else:
        lines, hidden = tail_lines(tool.output, output_lines)
        if hidden or tool.output_dropped:
            out.add(f"      │ … {hidden} more lines", "dim")
    if lines:
        out.add("      │ " + "\n      │ ".join(lines), "dim")


class _Lines:
    def __init__(self, width: int | None, color: bool) -> None:
        self.lines: list[str] = []
        self.width = width
        self.color = color

    def blank(self) -> None:
        if self.lines and self.lines[-1]:
            self.lines.append("")

    def add(self, text: str, *styles: str) -> None:
        """One screen line per line of ``text``, whatever the agent sent. A whole output is
        cleaned in one pass and then cut into its lines: a line at a time, an expanded output
        of thousands of lines cost a Python call each at every redraw."""
        text = text.replace("\t", "    ").replace("\r", "")
        # Control characters from agent output must not restyle or move the user's terminal.
        lines = _CONTROLS.sub("\ufffd", text).split("\n")
        width = self.width
        if width is not None:
            cut = max(1, width - 1)
            lines = [line if len(line) <= width else line[:cut] + "…" for line in lines]
        codes = "".join(_STYLES[s] for s in styles if s)
        if self.color and codes:
            lines = [f"{codes}{line}{_RESET}" for line in lines]
        self.lines.extend(lines)
