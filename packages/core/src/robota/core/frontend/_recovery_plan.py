"""What a restarted chat transport opens again, pure (``recovery_plan``): the turns the last
run left unsettled (their card still running, their answer not sent), and for each the message
its card answers, the messages it settles and the end to tell its card at once.

``ChatTurns.recover`` reads the unsettled attempts twice (the second time on the loop with no
await before the cards open) and opens what this plan says; ``_recovery_notes`` says what each
conversation is told of it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..events import TurnCompleted, TurnError
from ..store import ACTIVE_TURN_STATUSES, TurnAttempt
from ._chat_values import Outcome

__all__ = ["RecoveredTurn", "recovery_plan"]


@dataclass(frozen=True, slots=True)
class RecoveredTurn:
    """A turn the last run left unsettled, and how its card opens again."""

    attempt: TurnAttempt
    anchor: str | None
    """The person's message the card answers (a continued turn: its predecessor's)."""
    messages: tuple[str, ...]
    """The messages whose reaction settles with this turn (not a predecessor's: its
    successor settles them)."""
    ended: TurnCompleted | None
    """The end to tell the card at once (the attempt ended before this start); ``None``: it
    runs on, and its route tells the end."""
    continues: bool = False
    """It continues an interrupted predecessor."""
    continued: bool = False
    """It was interrupted and a successor continues it."""


def recovery_plan(
    unsettled: Sequence[tuple[TurnAttempt, str | None]], *, skip: frozenset[str] = frozenset()
) -> list[RecoveredTurn]:
    """The cards to open again for ``unsettled`` (attempt, its card's message id), oldest
    first; ``skip``: attempts not to open (already open, or on no route of this transport)."""
    attempts = [
        attempt
        for attempt, card in unsettled
        # An interrupted or failed turn that never showed a card needs none now.
        if card is not None or attempt.status in (*ACTIVE_TURN_STATUSES, "completed")
    ]
    # An interrupted or failed turn whose card's send was claimed and never recorded (``""``:
    # the kill came between the platform creating it and its record) is reopened only to end
    # that card: it settles no message, as before such a card could be known, and a successor
    # that already answered it is not contradicted.
    card_only = {
        attempt.id
        for attempt, card in unsettled
        if card == "" and attempt.status not in (*ACTIVE_TURN_STATUSES, "completed")
    }
    anchors: dict[str, str | None] = {}
    taken: set[str] = set()
    continuing: set[str] = set()
    for attempt in attempts:
        if attempt.id in skip:
            continue
        anchor = attempt.anchor_message_id
        if attempt.status in ACTIVE_TURN_STATUSES:
            # A continued turn answers the message its interrupted predecessor did (its
            # prompt ends with that message's text; since the inbox, its anchor is that
            # message too).
            for earlier, _ in unsettled:
                if (
                    earlier.route_key == attempt.route_key
                    and earlier.status == "interrupted"
                    and earlier.anchor_message_id
                    and anchor in (None, earlier.anchor_message_id)
                    and attempt.prompt.endswith(earlier.prompt)
                ):
                    anchor = earlier.anchor_message_id
                    taken.add(earlier.id)
                    continuing.add(attempt.id)
        anchors[attempt.id] = anchor
    plan = []
    for attempt in attempts:
        if attempt.id not in anchors:
            continue
        anchor = anchors[attempt.id]
        settles = attempt.id not in taken and attempt.id not in card_only
        messages = (anchor,) if anchor is not None and settles else ()
        plan.append(
            RecoveredTurn(
                attempt,
                anchor,
                messages,
                _ended(attempt),
                continues=attempt.id in continuing,
                continued=attempt.id in taken,
            )
        )
    return plan


def _ended(attempt: TurnAttempt) -> TurnCompleted | None:
    if attempt.status in ACTIVE_TURN_STATUSES:
        return None
    status: Outcome
    if attempt.status == "completed":
        status = "completed"
    elif attempt.status == "interrupted":
        status = "interrupted"
    else:
        status = "failed"
    error = None
    if status == "failed":
        error = TurnError(attempt.error or "failed", "unknown", retryable=False)
    return TurnCompleted(
        attempt.remote_turn_id or "",
        status,
        error,
        final_text=attempt.final_text if status == "completed" else None,
    )
