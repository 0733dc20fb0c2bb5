"""Execution groups: how the grouped layouts see a turn's stream, derived at render time only.

Commentary is the only group boundary: the reasoning and tools between two commentary messages
form one group, titled by its latest reasoning summary. Steering messages, approvals and errors
stay visible where they happened; one that lands inside a group splits the group's *panel* into
parts (each part a ``ToolGroup`` with its own stable key), but not the group: a part's title is
still the group's latest reasoning up to that part's end.

Nothing here is persisted; the stream in ``TurnView`` is the only state, so a layout change or a
restart loses nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ._text import strip_launcher
from ._view import Activity, Approval, ErrorNote, Message, Reasoning, Steer, ToolCall, TurnView

__all__ = [
    "OUTCOMES",
    "Block",
    "ToolGroup",
    "activity_key",
    "group_stream",
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
    shown: list[tuple[str, Activity]] = []
    for index, activity in enumerate(view.activities):
        if isinstance(activity, Message) and (not activity.text.strip() or view.is_final(activity)):
            continue
        if isinstance(activity, Reasoning) and not activity.text.strip():
            continue
        shown.append((activity_key(activity, index), activity))
    return shown


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
