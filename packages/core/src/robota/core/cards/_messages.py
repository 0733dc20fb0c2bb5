"""The messages of a turn's card: what the engine gives, what travels to the delivery service and
back, and what the engine hears in the end.

All are small frozen dataclasses. Payloads and chunks are the platform's JSON values (dicts and
lists); they are shared between threads and must be treated as read-only once built.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from ..store import ActionBinding

if TYPE_CHECKING:
    from ..events import TurnCompleted

__all__ = [
    "CardFailed",
    "CardNotice",
    "CardOutcome",
    "CardRequest",
    "CardShown",
    "CardSkipped",
    "CardTurn",
    "DeliverFinal",
    "FinalAnswerDelivered",
    "FinalAnswerFailed",
    "FinalFailed",
    "FinalSent",
    "ProgressCardPosted",
    "ShowCard",
]


@dataclass(frozen=True, slots=True)
class CardTurn:
    """Which turn a card renderer draws, and where its card and answer go."""

    turn_id: str
    task_id: str
    route: str
    """The route key. The sink reads it as its address of the conversation (chat, thread,
    the message to reply to); action tokens are bound to it."""
    started_at: float | None = None
    """When the turn started (epoch seconds), for the elapsed time on the card."""
    restricted: bool = False
    """The turn runs Restricted (``TurnBegan.restricted``): the card says "Restricted"."""
    fresh: bool = False
    """The turn began just now (its ``TurnBegan``; not one a restart opens again from the
    store): nothing of its card is stored yet, so the card's first incarnation starts empty
    without reading the store, and its first show creates the card without reading the
    ledger. Both reads sat on the way from the turn's start to its card."""
    ended: TurnCompleted | None = None
    """How the turn ended, when that is known as the card opens (a restart opens the card of
    a turn that ended meanwhile): the card's first show is already the terminal one, never the
    running view redrawn first."""


# -- actor to delivery service -----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ShowCard:
    """Put ``payload`` on the turn's progress card: create it the first time, edit it after.

    ``actions`` are the tokens the payload's buttons carry; the service binds them to the card's
    message before the edit shows them (after the send, when the card is new).
    """

    request_id: str
    turn_id: str
    route: str
    payload: Any
    content_hash: str
    actions: tuple[ActionBinding, ...] = ()


@dataclass(frozen=True, slots=True)
class DeliverFinal:
    """Send the turn's final answer as ``chunks`` (possibly none), once, and record it."""

    request_id: str
    turn_id: str
    route: str
    chunks: tuple[Any, ...]


CardRequest = ShowCard | DeliverFinal


# -- delivery service to actor -----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CardShown:
    request_id: str
    turn_id: str
    message_id: str
    content_hash: str
    created: bool
    """The card was sent now (first show), not edited."""


@dataclass(frozen=True, slots=True)
class CardSkipped:
    """Not shown because the turn's final answer is already out (the ledger says so): nothing
    may change the turn's messages any more."""

    request_id: str
    turn_id: str
    message_id: str | None
    final_ids: tuple[str, ...] = ()
    """The final answer's message ids, as the ledger has them."""
    reason: Literal["final_delivered"] = "final_delivered"


@dataclass(frozen=True, slots=True)
class CardFailed:
    request_id: str
    turn_id: str
    transient: bool
    retry_after: float | None
    error: str
    """Type and message of the error, for logs (never the payload)."""
    message_id: str | None = None


@dataclass(frozen=True, slots=True)
class FinalSent:
    request_id: str
    turn_id: str
    message_ids: tuple[str, ...]
    already: bool
    """The ledger already had the answer as delivered: nothing was sent now."""


@dataclass(frozen=True, slots=True)
class FinalFailed:
    request_id: str
    turn_id: str
    transient: bool
    retry_after: float | None
    error: str


CardOutcome = CardShown | CardSkipped | CardFailed | FinalSent | FinalFailed


# -- actor to engine ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ProgressCardPosted:
    """The turn's progress card exists now (bind the message to the turn, react to it)."""

    turn_id: str
    message_id: str


@dataclass(frozen=True, slots=True)
class FinalAnswerDelivered:
    """The turn is done on screen: the card shows its terminal state and the answer is out.

    ``already``: it was delivered before (by an earlier incarnation, or an earlier process);
    the engine may hear this notice more than once per turn and must treat it as idempotent.
    """

    turn_id: str
    message_ids: tuple[str, ...]
    card_message_id: str | None
    already: bool = False


@dataclass(frozen=True, slots=True)
class FinalAnswerFailed:
    """The answer could not be delivered (a permanent refusal, or retries exhausted)."""

    turn_id: str
    error: str


CardNotice = ProgressCardPosted | FinalAnswerDelivered | FinalAnswerFailed
