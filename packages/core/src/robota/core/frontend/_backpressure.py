"""What a front end that reads slower than its route speaks gets: the port's one policy.

A route speaks in two kinds of notice. *Lifecycle* notices (``TaskOpened``, ``TurnBegan``,
``InputSteered``, ``InputQueued``, ``TurnFinished``, ``RouteReply``, ``RouteIdle``) are a few
per turn and carry state the front end cannot recompute; so do the structural events of a turn
(a tool starting or ending, an approval, the plan). *Streaming* updates are the deltas of one
item (assistant text, a reasoning summary, a tool's output): hundreds a second, and two of them
in a row say exactly what their concatenation says.

So, per subscription:

1. Nothing is reordered and nothing is dropped while the reader keeps up: it sees every notice
   as the route sent it (print mode's ``stream-json`` keeps the agent's own granularity).
2. Once ``coalesce_after`` notices wait unread, an arriving delta that continues the last
   waiting one (same turn, same item, same kind) is merged into it (``merge_notices``): the
   reader gets the same text in fewer, larger pieces, so its cost per byte falls as it falls
   behind and it catches up instead of falling further. Lifecycle notices and structural
   events never merge and are never dropped.
3. ``capacity`` bounds what waits (merging keeps deltas from counting, so only a reader stuck
   for a long while reaches it). Past it the subscription ends with ``Overflowed``: what waits
   stays readable, then the reader learns why it was cut off and can subscribe again and read
   the route's state from the store. The route never blocks and never waits for a reader (it
   is an actor thread serving every front end), and nothing is lost silently.

This module is the pure half: which notices merge, and how. The port applies it.
"""

from __future__ import annotations

from .._records import replace
from ..engine import TurnUpdate
from ..events import ReasoningDelta, RuntimeEvent, TextDelta, ToolUpdated

__all__ = ["CAPACITY", "COALESCE_AFTER", "merge_notices"]

COALESCE_AFTER = 256
"""Unread notices after which streaming deltas merge. A reader that keeps up has a handful
waiting at most (one burst between two wake-ups); 256 is a few seconds of the fastest
streaming seen (about 100 deltas a second) that the reader has not looked at."""

CAPACITY = 10_000
"""Unread notices after which the subscription ends (``Overflowed``). With deltas merging only
structural events and lifecycle notices count: ten thousand of those is a reader that stopped
reading, not a slow one; at a few hundred bytes a notice the bound is a few megabytes."""


def merge_notices(last: object, new: object) -> object | None:
    """``last`` and ``new`` as one notice when ``new`` continues ``last``'s stream, else
    ``None``. Only ``TurnUpdate``s of one turn whose events are deltas of one item merge."""
    if not isinstance(last, TurnUpdate) or not isinstance(new, TurnUpdate):
        return None
    if (last.route_key, last.task_id, last.attempt_id) != (
        new.route_key,
        new.task_id,
        new.attempt_id,
    ):
        return None
    event = _merge_events(last.event, new.event)
    return None if event is None else replace(last, event=event)


def _merge_events(last: RuntimeEvent, new: RuntimeEvent) -> RuntimeEvent | None:
    match last, new:
        case TextDelta(), TextDelta() if (last.item_id, last.phase) == (new.item_id, new.phase):
            return TextDelta(last.item_id, last.text + new.text, last.phase)
        case ReasoningDelta(), ReasoningDelta() if (last.item_id, last.index) == (
            new.item_id,
            new.index,
        ):
            return ReasoningDelta(last.item_id, last.text + new.text, last.index)
        case ToolUpdated(), ToolUpdated() if (
            last.tool_id == new.tool_id and _output_only(last) and _output_only(new)
        ):
            return ToolUpdated(last.tool_id, output_delta=f"{last.output_delta}{new.output_delta}")
    return None


def _output_only(update: ToolUpdated) -> bool:
    """Streamed output and nothing else: a status or title change is structural."""
    return (
        update.output_delta is not None
        and update.title is None
        and update.status is None
        and update.changes is None
    )
