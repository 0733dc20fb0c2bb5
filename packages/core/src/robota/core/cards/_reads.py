"""Reads the card machinery makes through the store's writer, not through a reader connection.

A read op queues behind every write submitted before it on the same client, so what it sees
includes them: a restarted card actor reads the snapshot its dead predecessor saved on the way
out, and the delivery service reads the ledger after its own last record. A reader connection
could run before those writes commit. These reads are rare (an actor's start, a turn's first
request), so their place in the writer's queue costs nothing that matters.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..store import Database, FinalDelivery, card_actions, final_delivery, turn_snapshot
from ._core import Restored

__all__ = ["LedgerEntry", "RestoreTurn"]


@dataclass(frozen=True, slots=True)
class RestoreTurn:
    """Everything a card actor starts from: snapshot, ledger entry, live action tokens."""

    turn_id: str

    def apply(self, db: Database, /) -> Restored:
        return Restored(
            snapshot=turn_snapshot(db, self.turn_id),
            ledger=final_delivery(db, self.turn_id),
            actions=tuple(card_actions(db, self.turn_id)),
        )


@dataclass(frozen=True, slots=True)
class LedgerEntry:
    """The turn's final-delivery ledger entry, or ``None``."""

    turn_id: str

    def apply(self, db: Database, /) -> FinalDelivery | None:
        return final_delivery(db, self.turn_id)
