"""robota.core.presentation: what a person sees of a turn, in a terminal, Feishu or Slack.

Pure code (sans-IO): no threads, no sockets, no clock. A turn's card actor feeds ``RuntimeEvent``s
and ``UserSteer`` messages into a ``TurnView``, asks an ``UpdateThrottle`` when to update, renders
the view for its platform and hands the payload to a transport; the view's ``to_json()`` is the
turn snapshot the store persists.

Layering, bottom up (a module imports only from the layers below it, and from
``robota.core.events``):

1. ``_text``       launcher stripping, truncation, element ids, icons, durations
2. ``_markdown``   splitting Markdown on block boundaries (never inside a fence or a table)
3. ``_view``       the turn view reducer and its JSON snapshot
4. ``_groups``     execution groups and the timeline, derived from the view at render time
5. ``_terminal``, ``_feishu``, ``_slack``     the renderers (they never import each other;
   ``_feishu_pages`` keeps the Feishu card's activity and pages across updates)
6. ``_throttle``   the card update discipline (imports nothing of the above)
"""

from ._feishu import (
    DECISION_LABELS,
    FeishuBudget,
    FeishuCard,
    FeishuRenderer,
    Layout,
    card_components,
    feishu_final_answer,
    render_feishu_card,
)
from ._groups import Block, StreamGrouper, ToolGroup, group_stream, timeline_stream
from ._markdown import split_markdown
from ._slack import (
    SLACK_LIMITS,
    SlackLimits,
    SlackMessage,
    SlackRenderer,
    render_slack_progress,
    slack_final_answer,
)
from ._terminal import TerminalRenderer, render_terminal
from ._text import RESTRICTED, format_elapsed, strip_launcher
from ._throttle import BACKOFF, ThrottleError, UpdateThrottle, payload_hash
from ._view import (
    SNAPSHOT_VERSION,
    STATE_LABELS,
    Activity,
    Approval,
    Change,
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
    "group_stream",
    "timeline_stream",
    # text
    "split_markdown",
    "strip_launcher",
    "RESTRICTED",
    "format_elapsed",
    # renderers
    "TerminalRenderer",
    "render_terminal",
    "FeishuRenderer",
    "FeishuCard",
    "FeishuBudget",
    "Layout",
    "DECISION_LABELS",
    "card_components",
    "render_feishu_card",
    "feishu_final_answer",
    "SlackRenderer",
    "SlackMessage",
    "SlackLimits",
    "SLACK_LIMITS",
    "render_slack_progress",
    "slack_final_answer",
    # update discipline
    "UpdateThrottle",
    "ThrottleError",
    "BACKOFF",
    "payload_hash",
]
