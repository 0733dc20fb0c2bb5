"""robota.core.presentation: what a person sees of a turn, and the terminal's rendering of it.

Pure code (sans-IO): no threads, no sockets, no clock. A turn's card actor feeds ``RuntimeEvent``s
and ``UserSteer`` messages into a ``TurnView``, asks an ``UpdateThrottle`` when to update, renders
the view for its platform and hands the payload to a transport; the view's ``to_json()`` is the
turn snapshot the store persists.

A chat platform's renderer is its transport plugin's (``robota.core.cards.CardRenderers``): it
draws from the view, the groups and the text helpers exported here, so every platform shows the
same turn the same way and core names none of them.

Layering, bottom up (a module imports only from the layers below it, and from
``robota.core.events``):

1. ``_text``       launcher stripping, truncation, element ids, icons, durations
2. ``_markdown``   splitting Markdown on block boundaries (never inside a fence or a table)
3. ``_view``       the turn view reducer and its JSON snapshot
4. ``_groups``     execution groups and the timeline, derived from the view at render time
5. ``_terminal``   the terminal's renderer
6. ``_throttle``   the card update discipline (imports nothing of the above)
"""

from ._groups import (
    OUTCOMES,
    Block,
    StreamGrouper,
    ToolGroup,
    activity_key,
    group_signature,
    group_stream,
    in_timeline,
    timeline_stream,
    tool_label,
)
from ._markdown import count_tables, defuse_tables, split_markdown
from ._terminal import TerminalRenderer, render_terminal
from ._text import (
    RESTRICTED,
    STATUS_ICONS,
    element_id,
    format_elapsed,
    head,
    strip_launcher,
    tail_bytes,
    tail_lines,
    utf8_len,
)
from ._throttle import BACKOFF, ThrottleError, UpdateThrottle, payload_hash
from ._view import (
    SNAPSHOT_VERSION,
    STATE_LABELS,
    Activity,
    Approval,
    Change,
    DisplayState,
    ErrorNote,
    Message,
    Reasoning,
    Steer,
    ToolCall,
    TurnView,
    UserSteer,
    ViewStatus,
)

__all__ = [
    # the view
    "TurnView",
    "UserSteer",
    "Change",
    "ViewStatus",
    "DisplayState",
    "STATE_LABELS",
    "SNAPSHOT_VERSION",
    "Activity",
    "Message",
    "Reasoning",
    "ToolCall",
    "Approval",
    "Steer",
    "ErrorNote",
    # groups
    "Block",
    "ToolGroup",
    "StreamGrouper",
    "OUTCOMES",
    "activity_key",
    "group_signature",
    "group_stream",
    "in_timeline",
    "timeline_stream",
    "tool_label",
    # text, what every renderer draws with
    "split_markdown",
    "count_tables",
    "defuse_tables",
    "strip_launcher",
    "RESTRICTED",
    "STATUS_ICONS",
    "element_id",
    "format_elapsed",
    "head",
    "tail_bytes",
    "tail_lines",
    "utf8_len",
    # the terminal's renderer
    "TerminalRenderer",
    "render_terminal",
    # update discipline
    "UpdateThrottle",
    "ThrottleError",
    "BACKOFF",
    "payload_hash",
]
