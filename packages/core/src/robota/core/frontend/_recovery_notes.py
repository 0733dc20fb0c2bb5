"""What a restarted host tells a chat about a turn the last run left unsettled.

After a crash or a restart the engine continues recent turns (their prompt warns the agent
that effects may repeat) and marks older ones interrupted; the transport closes the old cards
(``ChatTurns.recover``). The person should not have to guess what happened: a continued
turn gets a note, as a reply to the message it answers, that robota restarted and is carrying
on; an interrupted turn that nothing continues gets one saying it was cut short and can be
sent again. Pure: each transport sends the text beside the message the turn answers.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from ._recovery_plan import RecoveredTurn

__all__ = ["RecoveryNote", "recovery_note", "recovery_notes", "recovery_texts"]

RecoveryNote = Literal["continued", "interrupted"]


def recovery_note(status: str, *, continues: bool, continued: bool) -> RecoveryNote | None:
    """The note for an unsettled attempt: ``continues`` it goes on from an interrupted one
    (robota started it), ``continued`` a later attempt goes on from it (that one says so)."""
    if continues:
        return "continued"
    if status == "interrupted" and not continued:
        return "interrupted"
    return None


def recovery_texts(locale: str) -> Mapping[RecoveryNote, str]:
    if locale.startswith("zh"):
        return {
            "continued": "robota 重启时这条消息还在处理中, 现在继续处理 (已执行的操作可能会重复)。",
            "interrupted": "robota 重启打断了这条消息的处理。如需继续, 请重新发送。",
        }
    return {
        "continued": (
            "robota restarted while this was running and is carrying on with it "
            "(steps already taken may be repeated)."
        ),
        "interrupted": "A restart of robota cut this turn short: send it again to retry.",
    }


def recovery_notes(plan: Sequence[RecoveredTurn], locale: str) -> list[tuple[RecoveredTurn, str]]:
    """The restart's plan (``TurnHooks.recovered``): each turn that gets a note, and its text."""
    texts = recovery_texts(locale)
    notes = []
    for item in plan:
        note = recovery_note(
            item.attempt.status, continues=item.continues, continued=item.continued
        )
        if note is not None:
            notes.append((item, texts[note]))
    return notes
