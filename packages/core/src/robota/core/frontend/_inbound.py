"""What every chat transport's inbound order shares, pure: the owner filter, the stale guard,
and the durable claim of a message (docs/architecture/chat-transports.md §10).

A transport parses its platform's events and screens them with its own mention rules; these
are the steps that do not depend on the platform:

* ``owner_filter``: with ``respondToOwnerOnly`` only the owner is heard (a sender and a
  button's clicker alike); without a configured owner nobody is, and the reason says how to
  set one.
* ``freshness``: a message created before this host started and more than ``STALE_AFTER``
  seconds ago is recorded and not run (a platform delivers the backlog of an outage).
* ``inbound_claims``: the one write that claims a message's event id and the message itself
  (``ClaimInboundEvent``, invariant 11): a redelivery, or a second event about the same
  message, runs no second turn.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Protocol

from ..store import ClaimInboundEvent, Together

__all__ = ["STALE_AFTER", "Dated", "Ignore", "freshness", "inbound_claims", "owner_filter"]

STALE_AFTER = 300.0
"""Seconds after which a message older than the host's start is not run."""


@dataclass(frozen=True, slots=True)
class Ignore:
    """A message (or a click) the transport does nothing with, and why (logged)."""

    reason: str


class Dated(Protocol):
    @property
    def created_at(self) -> float:
        """Epoch seconds the platform says the message was written."""
        ...


def owner_filter(
    sender: str, owner: str | None, *, owner_only: bool, no_owner: str
) -> Ignore | None:
    """``None``: ``sender`` may talk to the bot; else why not (``no_owner``: the reason when
    no owner is configured)."""
    if not owner_only:
        return None
    if owner is None:
        return Ignore(no_owner)
    if sender != owner:
        return Ignore("the sender is not the owner (respondToOwnerOnly)")
    return None


def freshness(message: Dated, *, now: float, started_at: float) -> Literal["run", "stale"]:
    """``stale`` for a message created before this host started and more than
    ``STALE_AFTER`` seconds ago."""
    if message.created_at < started_at and now - message.created_at > STALE_AFTER:
        return "stale"
    return "run"


def inbound_claims(event_key: str, message_key: str, *, message_kind: str = "message") -> Together:
    """The one write claiming a message's event and the message; its results are all true the
    first time only."""
    return Together(
        (ClaimInboundEvent(event_key, "message"), ClaimInboundEvent(message_key, message_kind))
    )
