"""A chat route's and a turn's values, platform-neutral: what ``ChatTurns`` keeps of a
followed route (``ChatRoute``: its lane, its subscription, the person's messages waiting for
their turn or reply), of a turn's card (``Opening``, then ``ChatTurn``) and how a turn ended
for its messages (``Outcome``). Pure: no I/O, no loop; the shell that fills them is
``_chat``'s.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import trio

from ..engine import prompt_answers

if TYPE_CHECKING:
    from ..events import TurnCompleted
    from ..kernel import Address
    from ._port import RouteLink

__all__ = ["ChatRoute", "ChatTurn", "Opening", "Outcome", "Pending", "take_pending"]

Outcome = Literal["completed", "failed", "interrupted"]


@dataclass(slots=True)
class Pending:
    """A person's message told to the route, waiting for the turn (or reply) it gets."""

    message_id: str
    text: str
    thread: str | None = None
    """Where the platform answers it, when that is not the message itself."""


@dataclass(slots=True)
class ChatRoute:
    key: str
    lane: trio.MemorySendChannel[Any]
    link: RouteLink
    channel: str = ""
    """The platform's conversation the route is in, where the transport needs it."""
    pending: deque[Pending] = field(default_factory=deque)
    commands: deque[Pending] = field(default_factory=deque)
    agent: str | None = None
    quiet_since: float = 0.0
    """When the route was followed, or last had an item in its lane or a notice
    (``time.monotonic``)."""
    in_lane: int = 0
    """Items handed to its lane and not yet admitted (counted from the hand-over: an item a
    waiting lane task was given is in no buffer until that task runs)."""
    retired: bool = False
    cards: deque[str] = field(default_factory=lambda: deque(maxlen=32))
    """The card turn ids its latest turns opened: forgotten with it (``_chat_retire``)."""


@dataclass(frozen=True, slots=True)
class Opening:
    """A turn's card to open: the turn, its card's turn id, and the messages it answers."""

    attempt_id: str
    task_id: str
    card_id: str
    anchor: str | None
    """The person's message the card answers, if known."""
    messages: tuple[str, ...]
    """The messages whose reactions settle with the turn."""
    started_at: float
    restricted: bool | None = None
    """The turn runs Restricted, as its ``TurnBegan`` said; ``None``: not told (a turn opened
    again from the store), so the host's trust decision is asked."""
    fresh: bool = False
    """The turn began just now (``CardTurn.fresh``)."""
    ended: TurnCompleted | None = None
    """How the turn ended, when it did before its card opened (``CardTurn.ended``)."""


@dataclass(slots=True)
class ChatTurn:
    """A running turn's card and the person's messages it answers."""

    card_id: str
    route_key: str
    address: Address
    stop_token: str
    messages: list[str] = field(default_factory=list)
    status: str | None = None
    completed: bool = False
    """The card was told the turn's end (from the route, or from the store after a restart)."""
    chat: str = ""
    """The platform's conversation its messages are in (their reactions settle there)."""
    posted: str | None = None
    """The progress message's id once it exists (its buttons' clicks find the route by it)."""
    anchor: str | None = None
    """Where its answer goes (the adapter's ``Card.anchor``): a recovery note is said there too."""
    extra: Any = None
    """The adapter's own of the turn (its card's other buttons)."""


def take_pending(pending: deque[Pending], text: str) -> Pending | None:
    """The oldest pending message whose text is ``text`` (a recovered turn's prompt ends with
    it), taken out of the queue."""
    for index, item in enumerate(pending):
        if prompt_answers(text, item.text):
            del pending[index]
            return item
    return None
