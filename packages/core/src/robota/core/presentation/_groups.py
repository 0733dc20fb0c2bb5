"""Execution groups: how the grouped layouts see a turn's stream, derived at render time only.

Commentary is the only group boundary: the reasoning and tools between two commentary messages
form one group, titled by its latest reasoning summary. Steering messages, approvals and errors
stay visible where they happened; one that lands inside a group splits the group's *panel* into
parts (each part a ``ToolGroup`` with its own stable key), but not the group: a part's title is
still the group's latest reasoning up to that part's end.

Nothing here is persisted; the stream in ``TurnView`` is the only state, so a layout change or a
restart loses nothing. ``StreamGrouper`` computes the same blocks as ``group_stream`` for a
renderer that lives as long as the turn, re-grouping only from the oldest activity whose grouping
changed (see there).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ._text import strip_launcher
from ._view import Activity, Approval, ErrorNote, Message, Reasoning, Steer, ToolCall, TurnView

__all__ = [
    "OUTCOMES",
    "Block",
    "StreamGrouper",
    "ToolGroup",
    "activity_key",
    "group_signature",
    "group_stream",
    "in_timeline",
    "timeline_stream",
    "tool_label",
]

OUTCOMES: dict[str | None, str] = {
    None: "waiting for a decision",
    "accept": "allowed once",
    "accept_for_session": "allowed for this session",
    "decline": "declined",
    "cancel": "cancelled",
}
"""How an approval's state reads, keyed by its decision."""


def tool_label(tool: ToolCall) -> str:
    """What a tool is called on screen: its command without the shell launcher, else its
    title (ACP agents put the command there), else its kind."""
    if tool.kind == "command" and tool.command:
        return strip_launcher(tool.command)
    return strip_launcher(tool.title) if tool.title else tool.kind.replace("_", " ")


@dataclass(slots=True, eq=False)
class ToolGroup:
    key: str
    """The key of the part's first activity: never changes as the group grows."""
    members: list[ToolCall | Reasoning] = field(default_factory=list)
    """Tools and reasoning in the order they appeared."""
    reasoning: list[Reasoning] = field(default_factory=list)
    tools: list[ToolCall] = field(default_factory=list)
    title: str = ""

    @property
    def display_title(self) -> str:
        """The latest reasoning title, else the last tool's label."""
        if self.title:
            return self.title
        return tool_label(self.tools[-1]) if self.tools else "Thinking"

    @property
    def running(self) -> bool:
        return any(tool.running for tool in self.tools)

    @property
    def signature(self) -> tuple[int, int, int, str]:
        """Changes whenever anything shown in the group changes: versions only grow, so the
        newest member version plus the member counts identify the group's content."""
        newest = 0
        for tool in self.tools:
            newest = max(newest, tool.version)
        for part in self.reasoning:
            newest = max(newest, part.version)
        return (newest, len(self.tools), len(self.reasoning), self.title)


Block = Message | Steer | Approval | ErrorNote | ToolGroup


def activity_key(activity: Activity, index: int) -> str:
    """A key unique within the turn and stable across updates (the stream only grows)."""
    if isinstance(activity, ToolCall):
        return f"tool:{activity.tool_id}"
    if isinstance(activity, Message):
        return f"msg:{activity.item_id}"
    if isinstance(activity, Reasoning):
        return f"rsn:{activity.item_id}:{activity.index}"
    if isinstance(activity, Approval):
        return f"apv:{activity.approval_id}"
    return f"{type(activity).__name__.lower()}:{index}"


def timeline_stream(view: TurnView) -> list[tuple[str, Activity]]:
    """Every activity a timeline shows, with its key: all but the final answer and empty
    messages."""
    return [
        (activity_key(activity, index), activity)
        for index, activity in enumerate(view.activities)
        if in_timeline(view, activity)
    ]


def in_timeline(view: TurnView, activity: Activity) -> bool:
    """Whether a timeline shows the activity: all but the final answer, empty messages and
    empty reasoning."""
    if isinstance(activity, Message):
        return _message_shown(view, activity)
    if isinstance(activity, Reasoning):
        return not _blank(activity.text)
    return True


def group_stream(view: TurnView) -> list[tuple[str, Block]]:
    """The grouped layout's blocks, oldest first, each with a stable key. An approval about a
    tool in the stream is not a block: renderers show it with the tool."""
    blocks: list[tuple[str, Block]] = []
    part: ToolGroup | None = None
    title = ""  # the group's latest reasoning so far; commentary resets it
    for index, activity in enumerate(view.activities):
        if isinstance(activity, ToolCall | Reasoning):
            if isinstance(activity, Reasoning) and not activity.text.strip():
                continue
            if part is None:
                part = ToolGroup(activity_key(activity, index))
                blocks.append((part.key, part))
            part.members.append(activity)
            if isinstance(activity, ToolCall):
                part.tools.append(activity)
            else:
                part.reasoning.append(activity)
                title = activity.title or title
            part.title = title
            continue
        if isinstance(activity, Message):
            if not activity.text.strip() or view.is_final(activity):
                continue
            title = ""  # commentary: the only group boundary
        elif isinstance(activity, Approval) and view.about_known_tool(activity):
            continue  # shown with its tool, inside the group
        part = None
        blocks.append((activity_key(activity, index), activity))
    return blocks


def group_signature(view: TurnView, group: ToolGroup) -> tuple[int, int, int, str]:
    """Changes whenever anything a renderer shows of the group changes, approvals about its
    tools included (resolving one bumps the approval's version, not the tool's).

    Versions only grow and every change stamps the view's newest version, so the newest version
    among the members and their approvals, with the member counts and the title, identifies what
    a part shows: a part always starts at the same activity (its key) and its members are
    contiguous, so the counts fix which members it holds.
    """
    newest = 0
    approvals = view.tools_with_approvals
    for tool in group.tools:
        version = tool.version
        if approvals and tool.tool_id in approvals:
            for approval in approvals[tool.tool_id]:
                version = max(version, approval.version)
        newest = max(newest, version)
    for part in group.reasoning:
        newest = max(newest, part.version)
    return (newest, len(group.tools), len(group.reasoning), group.title)


def _blank(text: str) -> bool:
    # ``not text.strip()`` without copying the text: isspace() stops at the first visible char.
    return not text or text.isspace()


@dataclass(slots=True, eq=False)
class _Mark:
    """An activity whose grouping may change later (a message or reasoning that gains text or
    turns final, an approval whose tool is announced afterwards), with the grouper's state just
    before it was grouped, to resume from there."""

    index: int
    activity: Message | Reasoning | Approval
    version: int
    final: bool
    state: object
    blocks: int
    part: ToolGroup | None
    sizes: tuple[int, int, int]
    part_title: str
    title: str


class StreamGrouper:
    """``group_stream``, incrementally, for one view.

    The stream only grows, and only messages, reasoning and approvals can change how the part
    of it already grouped is grouped (see ``_Mark``). Each call checks those few activities,
    rewinds to the oldest one whose grouping changed (usually none: a turn moves at its end)
    and groups from there, so a call costs what changed plus one look at each mark, not the
    whole turn. A different view object starts over.

    The returned list is the caller's, but its ``ToolGroup``s are the grouper's: valid until the
    next call, which may extend or shorten the newest ones. ``settled`` tells a caller that
    keeps something per block how much of it still holds.
    """

    __slots__ = ("_blocks", "_done", "_marks", "_part", "_title", "_view", "settled")

    def __init__(self) -> None:
        self._view: TurnView | None = None
        self.settled = 0
        """After ``blocks``: how many leading blocks are the ones the call before returned, with
        the same members and title (0 after a view change). What they show may still have
        changed (a tool's output, an approval): only their grouping is known to be the same."""
        self._reset()

    def _reset(self) -> None:
        self._done = 0
        self._blocks: list[tuple[str, Block]] = []
        self._part: ToolGroup | None = None
        self._title = ""
        self._marks: list[_Mark] = []

    def blocks(self, view: TurnView) -> list[tuple[str, Block]]:
        """What ``group_stream(view)`` returns."""
        if view is not self._view:
            self._view = view
            self._reset()
            self.settled = 0
        else:
            self.settled = len(self._blocks)
            self._rewind(view)
        activities = view.activities
        for index in range(self._done, len(activities)):
            self._group(view, index, activities[index])
        self._done = len(activities)
        return list(self._blocks)

    def _rewind(self, view: TurnView) -> None:
        for position, mark in enumerate(self._marks):
            activity = mark.activity
            if isinstance(activity, Approval):
                if view.about_known_tool(activity) == mark.state:
                    continue
            else:
                final = isinstance(activity, Message) and view.is_final(activity)
                if activity.version == mark.version and final == mark.final:
                    continue  # nothing it shows changed, so neither did its grouping
                if _grouping(view, activity) == mark.state:
                    mark.version, mark.final = activity.version, final
                    continue
            self._restore(mark)
            del self._marks[position:]
            return

    def _restore(self, mark: _Mark) -> None:
        del self._blocks[mark.blocks :]
        part = self._part = mark.part
        # The blocks after the mark are gone, and its part (the last block then) loses members.
        self.settled = min(self.settled, mark.blocks - (part is not None))
        if part is not None:
            members, tools, reasoning = mark.sizes
            del part.members[members:]
            del part.tools[tools:]
            del part.reasoning[reasoning:]
            part.title = mark.part_title
        self._title = mark.title
        self._done = mark.index

    def _mark(
        self, view: TurnView, index: int, activity: Message | Reasoning | Approval, state: object
    ) -> None:
        part = self._part
        self._marks.append(
            _Mark(
                index,
                activity,
                activity.version,
                isinstance(activity, Message) and view.is_final(activity),
                state,
                len(self._blocks),
                part,
                (len(part.members), len(part.tools), len(part.reasoning)) if part else (0, 0, 0),
                part.title if part else "",
                self._title,
            )
        )

    def _group(self, view: TurnView, index: int, activity: Activity) -> None:
        # The same steps as group_stream, one activity at a time.
        if isinstance(activity, ToolCall | Reasoning):
            title = ""
            if isinstance(activity, Reasoning):
                visible, title = _reasoning_grouping(activity)
                self._mark(view, index, activity, (visible, title))
                if not visible:
                    return
            part = self._part
            if part is None:
                part = self._part = ToolGroup(activity_key(activity, index))
                self._blocks.append((part.key, part))
            else:  # the newest block grows
                self.settled = min(self.settled, len(self._blocks) - 1)
            part.members.append(activity)
            if isinstance(activity, ToolCall):
                part.tools.append(activity)
            else:
                part.reasoning.append(activity)
                self._title = title or self._title
            part.title = self._title
            return
        if isinstance(activity, Message):
            shown = _message_shown(view, activity)
            self._mark(view, index, activity, shown)
            if not shown:
                return
            self._title = ""  # commentary: the only group boundary
        elif isinstance(activity, Approval):
            with_tool = view.about_known_tool(activity)
            self._mark(view, index, activity, with_tool)
            if with_tool:
                return
        self._part = None
        self._blocks.append((activity_key(activity, index), activity))


def _message_shown(view: TurnView, message: Message) -> bool:
    return not _blank(message.text) and not view.is_final(message)


def _reasoning_grouping(part: Reasoning) -> tuple[bool, str]:
    """Whether the reasoning is shown and the title it gives its group."""
    return not _blank(part.text), part.title


def _grouping(view: TurnView, activity: Message | Reasoning) -> object:
    if isinstance(activity, Message):
        return _message_shown(view, activity)
    return _reasoning_grouping(activity)
