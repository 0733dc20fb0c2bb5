"""The Feishu card's activity units, kept in order across a turn's updates, and their pages.

A *unit* is one top-level element of the activity area (a message, a note, a tool, a group's
sub-panel), with its serialised JSON and what the budgets count of it. ``Row`` holds a turn's
units oldest first with running sums of those counts; ``TimelineRow`` and ``GroupedRow`` keep a
``Row`` up to date with the view, redrawing only the units whose activities changed since the
last update and regrouping only from where the grouping changed.

Why it is shaped like this: a card shows one page, but "Page 1 of N" and the history pages
need the whole turn paginated, and a 1 000-tool turn is a thousand timeline units. Each budget is
a sum over a page's units, so the longest run of newest units that fits ends where a running sum
crosses the budget: a bisection, not a walk (``Row.pages``). The running sums are recomputed
only from the oldest unit that changed (usually one of the last few), at C speed.

Changes are found from versions: the view stamps every activity it changes with a version
higher than any before, so the activities changed since the last update are those above the
version seen then (one cheap pass over the stream). What no version shows is handled apart: a
message becoming the final answer (its final flag is compared at every update) and regrouping
(``StreamGrouper.settled``). A different view object starts over.
"""

from __future__ import annotations

import json
from bisect import bisect_left
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from itertools import accumulate
from typing import Any

from robota.core.presentation import (
    Activity,
    Approval,
    Block,
    Message,
    Reasoning,
    StreamGrouper,
    ToolCall,
    ToolGroup,
    TurnView,
    activity_key,
    in_timeline,
    utf8_len,
)

__all__ = [
    "DrawOne",
    "DrawRun",
    "GroupedRow",
    "Row",
    "TimelineRow",
    "Unit",
    "changed_since",
    "dumps",
    "escaped_len",
    "sub_panels",
]

Json = dict[str, Any]


def dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def escaped_len(text: str) -> int:
    """UTF-8 bytes of ``text`` inside a JSON string (quotes excluded), as the request body
    carries the card. Escaping is per character, so the length of a concatenation is the sum of
    its parts' lengths: a card's body size adds up from its parts' without re-escaping it."""
    return utf8_len(json.dumps(text, ensure_ascii=False)) - 2


@dataclass(frozen=True, slots=True)
class Unit:
    element: Json
    text: str
    """``dumps(element)``: the card's JSON is joined from these, never re-serialised."""
    size: int
    """UTF-8 bytes of ``text``."""
    escaped: int
    """``escaped_len(text)``."""
    components: int
    tables: int


class Row:
    """A turn's units, oldest first, with running sums of what a page's budgets count."""

    __slots__ = ("_bytes", "_components", "_fresh", "_tables", "units")

    def __init__(self) -> None:
        self.units: list[Unit] = []
        # _bytes[i]: bytes of units[:i] plus one comma each; likewise components and tables.
        self._bytes = [0]
        self._components = [0]
        self._tables = [0]
        self._fresh = 0  # the sums hold for units[:_fresh]

    def __len__(self) -> int:
        return len(self.units)

    def append(self, unit: Unit) -> None:
        self.units.append(unit)

    def replace(self, index: int, unit: Unit) -> None:
        if self.units[index] is not unit:
            self.units[index] = unit
            self._fresh = min(self._fresh, index)

    def truncate(self, length: int) -> None:
        del self.units[length:]
        self._fresh = min(self._fresh, length)

    def pages(
        self, *, max_bytes: int, max_components: int, max_tables: int, max_units: int | None
    ) -> list[tuple[int, int]]:
        """``(start, end)`` of each page, newest first: the longest run of units ending where
        the newer page starts whose list (``[a,b,...]``) stays within ``max_bytes`` and whose
        components, tables and count stay within theirs; at least one unit, however big."""
        self._sum()
        sizes, components, tables = self._bytes, self._components, self._tables
        pages: list[tuple[int, int]] = []
        end = len(self.units)
        while end:
            # A run [s, end) takes 1 + sizes[end] - sizes[s] bytes ("[" "]" and a comma fewer
            # than units); every sum grows with the run, so each budget bounds s from below.
            start = max(
                bisect_left(sizes, sizes[end] + 1 - max_bytes, 0, end),
                bisect_left(components, components[end] - max_components, 0, end),
                bisect_left(tables, tables[end] - max_tables, 0, end),
                end - max_units if max_units is not None else 0,
            )
            start = min(start, end - 1)
            pages.append((start, end))
            end = start
        return pages

    def list_size(self, start: int, end: int) -> int:
        """Bytes of the units ``[start, end)`` as a compact JSON list."""
        self._sum()
        return 1 + self._bytes[end] - self._bytes[start] if end > start else 2

    def components(self, start: int, end: int) -> int:
        self._sum()
        return self._components[end] - self._components[start]

    def _sum(self) -> None:
        start = self._fresh
        if start == len(self.units) == len(self._bytes) - 1:
            return
        tail = self.units[start:]
        # Slice assignment from ``initial``: drops stale sums past the end, at C speed.
        self._bytes[start:] = accumulate([u.size + 1 for u in tail], initial=self._bytes[start])
        self._components[start:] = accumulate(
            [u.components for u in tail], initial=self._components[start]
        )
        self._tables[start:] = accumulate([u.tables for u in tail], initial=self._tables[start])
        self._fresh = len(self.units)


DrawOne = Callable[[TurnView, str, Activity], Unit]
"""Draws the unit of an activity shown on its own, given its key (cached by what it shows)."""
DrawRun = Callable[[TurnView, str, ToolGroup, int, Sequence[ToolCall | Reasoning]], Unit]
"""Draws sub-panel ``index`` of a group, given the group's key and the sub-panel's members."""


def changed_since(view: TurnView, seen: int) -> list[Activity]:
    """The activities the view changed after its version ``seen``."""
    return [activity for activity in view.activities if activity.version > seen]


class TimelineRow:
    """The timeline's units: one per activity the timeline shows (see ``in_timeline``)."""

    __slots__ = ("_at", "_draw", "_index", "_messages", "_seen", "_shown", "_view", "row")

    def __init__(self, draw: DrawOne) -> None:
        self._draw = draw
        self._view: TurnView | None = None
        self._start_over()

    def _start_over(self) -> None:
        self.row = Row()
        self._seen = -1  # the view version the row shows
        self._shown: list[bool] = []  # per activity: whether it has a unit
        self._at: list[int] = []  # per unit: its activity's index (ascending)
        self._index: dict[int, int] = {}  # id(activity) -> index
        self._messages: list[int] = []  # indices of messages (their final flag has no version)

    def update(self, view: TurnView) -> Row:
        if view is not self._view:
            self._view = view
            self._start_over()
        activities = view.activities
        shown = self._shown
        known = len(shown)
        redo = known  # units are rebuilt from the activity with this index on
        dirty: set[int] = set()
        for activity in changed_since(view, self._seen):
            index = self._index.get(id(activity))
            if isinstance(activity, Approval) and activity.tool_id is not None:
                tool = view.tool(activity.tool_id)  # its panel lists its approvals
                if tool is not None and id(tool) in self._index:
                    dirty.add(self._index[id(tool)])
            if index is None:
                continue  # new: drawn below
            if in_timeline(view, activity) != shown[index]:
                redo = min(redo, index)
            else:
                dirty.add(index)
        for index in self._messages:
            if in_timeline(view, activities[index]) != shown[index]:
                redo = min(redo, index)
                break  # ascending: the first one found is the oldest
        draw, row = self._draw, self.row
        for index in dirty:
            if index < redo and shown[index]:
                key = activity_key(activities[index], index)
                row.replace(bisect_left(self._at, index), draw(view, key, activities[index]))
        position = bisect_left(self._at, redo)
        row.truncate(position)
        del self._at[position:], shown[redo:]
        for index in range(redo, len(activities)):
            activity = activities[index]
            if index >= known:
                self._index[id(activity)] = index
                if isinstance(activity, Message):
                    self._messages.append(index)
            visible = in_timeline(view, activity)
            shown.append(visible)
            if visible:
                row.append(draw(view, activity_key(activity, index), activity))
                self._at.append(index)
        self._seen = view.version
        return row


@dataclass(slots=True, eq=False)
class _Span:
    """One block's units in the row: from ``start``, one per sub-panel of a group (``runs``),
    else one."""

    index: int
    """The block's position in the grouper's blocks."""
    key: str
    block: Block
    start: int
    runs: list[list[ToolCall | Reasoning]] = field(default_factory=list)
    title: str = ""
    """The group title the units were drawn with (it can follow the last tool's label)."""


class GroupedRow:
    """The grouped layout's units: one per block of ``StreamGrouper``, a group's split into
    sub-panels of ``per_panel`` tools (see ``sub_panels``)."""

    __slots__ = (
        "_draw_one",
        "_draw_run",
        "_grouper",
        "_home",
        "_per_panel",
        "_seen",
        "_spans",
        "_view",
        "row",
    )

    def __init__(self, draw_one: DrawOne, draw_run: DrawRun, per_panel: int) -> None:
        self._draw_one, self._draw_run = draw_one, draw_run
        self._per_panel = per_panel
        self._view: TurnView | None = None
        self._start_over()

    def _start_over(self) -> None:
        self.row = Row()
        self._grouper = StreamGrouper()
        self._seen = -1
        self._spans: list[_Span] = []
        # id(activity) -> the span and sub-panel that show it; a stale entry (its span was
        # rebuilt since) is told by the span no longer being in _spans.
        self._home: dict[int, tuple[_Span, int]] = {}

    def update(self, view: TurnView) -> Row:
        if view is not self._view:
            self._view = view
            self._start_over()
        changed = changed_since(view, self._seen)
        blocks = self._grouper.blocks(view)
        settled = min(self._grouper.settled, len(self._spans))
        spans = self._spans
        # What changed in blocks whose grouping did not: redraw just their units.
        for activity in changed:
            target: Activity = activity
            if isinstance(activity, Approval) and activity.tool_id is not None:
                target = view.tool(activity.tool_id) or activity  # shown in its tool's panel
            home = self._home.get(id(target))
            if home is None:
                continue
            span, run = home
            if span.index < settled and spans[span.index] is span:
                self._redraw(view, span, run)
        # Then regroup the rest: a new block, or the newest group's new tools.
        start = spans[settled].start if settled < len(spans) else len(self.row)
        del spans[settled:]
        self.row.truncate(start)
        for index in range(settled, len(blocks)):
            key, block = blocks[index]
            span = _Span(index, key, block, len(self.row))
            spans.append(span)
            if not isinstance(block, ToolGroup):
                self._home[id(block)] = (span, 0)
                self.row.append(self._draw_one(view, key, block))
                continue
            span.runs = sub_panels(block, self._per_panel)
            span.title = block.display_title
            for run, members in enumerate(span.runs):
                for member in members:
                    self._home[id(member)] = (span, run)
                self.row.append(self._draw_run(view, key, block, run, members))
        self._seen = view.version
        return self.row

    def _redraw(self, view: TurnView, span: _Span, run: int) -> None:
        block = span.block
        if not isinstance(block, ToolGroup):
            self.row.replace(span.start, self._draw_one(view, span.key, block))
            return
        runs = [run]
        title = block.display_title
        if title != span.title:  # every sub-panel's heading shows it
            span.title = title
            runs = list(range(len(span.runs)))
        for index in runs:
            unit = self._draw_run(view, span.key, block, index, span.runs[index])
            self.row.replace(span.start + index, unit)


def sub_panels(group: ToolGroup, size: int) -> list[list[ToolCall | Reasoning]]:
    """The group's members in chronological runs of at most ``size`` tools: run ``n`` always
    holds tools ``n*size ..`` so a run never changes identity as the group grows."""
    runs: list[list[ToolCall | Reasoning]] = [[]]
    tools = 0
    for member in group.members:
        if isinstance(member, ToolCall):
            if tools == size:
                runs.append([])
                tools = 0
            tools += 1
        runs[-1].append(member)
    return runs
