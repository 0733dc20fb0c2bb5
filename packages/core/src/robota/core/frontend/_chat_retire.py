"""A quiet chat let go entirely: what the chat shell and the engine keep of it goes too.

``ChatTurns.retire_quiet`` stops following a chat with nothing in flight for ``RETIRE_AFTER``
seconds (its lane, reader and subscription). Issue 28 s.3 asks more of it: after a burst of
chats, the host's memory holds nothing of them, because what each chat leaves behind (a few
hundred bytes here and there) pins a 1 MiB pymalloc arena the burst filled. So ``let_go``,
called for each chat let go, also forgets:

* the delivery states of the cards its route opened (``CardDelivery.forget``: a card asked for
  again reads its ledger entry, as after a restart);
* its settled queue notes (``QueueNotes.forget``; a route with a note still queued is in
  flight and never let go);
* the agent the last ``TaskOpened`` named, when it is the profile's default (which a card
  shows for a route whose agent is not known): another agent is kept, so the chat's next card
  names it before its session's ``TaskOpened`` comes;
* and asks the engine, through the port, to forget the route and release its agent session
  once it is passive (``FrontEndPort.retire``, ``robota.core.engine``'s ``_retire``), which
  it does only when nothing of the route is under way.

``retire_timing``: ``ROBOTA_TEST_RETIRE_AFTER`` (seconds) shortens the quiet a chat is let go
after, for end-to-end tests only, as ``ROBOTA_TEST_HANDOFF_PAUSE`` pauses a handoff.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, MutableMapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..cards import CardDelivery
    from ._queue import QueueNotes
    from ._transport import TransportContext

__all__ = ["RETIRE_ENV", "kept_agent", "let_go", "retire_timing", "seconds_from_env"]

RETIRE_ENV = "ROBOTA_TEST_RETIRE_AFTER"


def retire_timing(after: float, every: float) -> tuple[float, float]:
    """How long a chat is quiet before it goes, and how often that is looked at: ``after``
    and ``every``, unless the test variable names a positive number of seconds (then looked
    at four times as often as that)."""
    shorter = seconds_from_env(RETIRE_ENV)
    if shorter is None:
        return after, every
    return shorter, min(every, max(shorter / 4, 0.05))


def seconds_from_env(name: str) -> float | None:
    """The positive number of seconds the variable ``name`` names (a test's shorter timing),
    else ``None``."""
    try:
        seconds = float(os.environ.get(name, ""))
    except ValueError:
        return None
    return seconds if seconds > 0 else None


def kept_agent(agent: str | None, default: str | None) -> bool:
    """Whether a chat let go keeps the agent its last ``TaskOpened`` named: only one its next
    card could not tell by itself (the profile's default is what a card shows unknown)."""
    return agent is not None and agent != default


def let_go(
    route_key: str,
    cards: Iterable[str],
    *,
    agents: MutableMapping[str, str],
    notes: QueueNotes,
    delivery: CardDelivery | None,
    context: TransportContext,
) -> None:
    """Forget what is kept of the chat ``route_key`` let go (module docstring); ``cards``: the
    card turn ids its route opened."""
    if delivery is not None:
        delivery.forget(cards)
    notes.forget(route_key)
    config = context.config
    default = config.defaults.agent if config is not None else None
    if not kept_agent(agents.get(route_key), default):
        agents.pop(route_key, None)
    context.port.retire(route_key)
