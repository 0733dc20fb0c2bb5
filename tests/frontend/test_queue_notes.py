"""``QueueNotes``: a queued prompt's note from queued to started or cancelled, pure."""

from __future__ import annotations

import pytest

from robota.core.frontend import QueueNotes
from robota.core.frontend._queue import KEPT

R = "feishu:chat_id:oc_1"


def test_a_click_while_queued_cancels_once_then_says_so() -> None:
    notes = QueueNotes()
    notes.queued(R, 7, "second", "om_2")
    assert notes.click(R, 7) == "cancel"
    assert notes.click(R, 7) == "cancelled"
    assert notes.began(R, "second") is None, "a cancelled prompt never starts its note"


def test_once_its_turn_began_a_click_is_too_late() -> None:
    notes = QueueNotes()
    notes.queued(R, 7, "second", "om_2")
    posted = notes.posted(R, 7, "om_note")
    assert posted is not None and posted.message_id == "om_note"
    started = notes.began(R, "second")
    assert started is not None and started.state == "started" and started.message_id == "om_note"
    assert notes.click(R, 7) == "started"


@pytest.mark.parametrize(
    ("route", "prompt", "expected"),
    [
        (R, "other text", None),
        ("feishu:chat_id:oc_2", "second", None),
        (R, "second", 7),
    ],
)
def test_began_matches_only_its_route_and_text(
    route: str, prompt: str, expected: int | None
) -> None:
    notes = QueueNotes()
    notes.queued(R, 7, "second", None)
    notes.queued(R, 8, "third", None)
    started = notes.began(route, prompt)
    assert (started.prompt_id if started else None) == expected


def test_the_oldest_of_two_equal_texts_starts_first_and_unknown_ids_are_unknown() -> None:
    notes = QueueNotes()
    notes.queued(R, 7, "again", None)
    notes.queued(R, 8, "again", None)
    first = notes.began(R, "again")
    assert first is not None and first.prompt_id == 7
    assert notes.click(R, 8) == "cancel"
    assert notes.click(R, 99) == "unknown" and notes.click("slack:x", 7) == "unknown"
    assert notes.posted(R, 99, "m") is None


def test_settled_notes_beyond_the_bound_are_forgotten_queued_ones_kept() -> None:
    notes = QueueNotes()
    notes.queued(R, 0, "still waiting", None)
    for n in range(1, KEPT + 5):
        notes.queued(R, n, f"p{n}", None)
        notes.began(R, f"p{n}")
    assert len(notes) <= KEPT + 1
    assert notes.click(R, 0) == "cancel", "a queued note is never dropped"
    assert notes.click(R, 1) == "unknown" and notes.click(R, KEPT + 4) == "started"
