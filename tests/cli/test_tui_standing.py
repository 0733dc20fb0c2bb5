"""What the TUI says when a handoff moves the task it shows (``robota.cli._tui._standing``),
as tables: the note for each change of the task's mobility between two reads, the status
line's word, and the answer to a prompt once the task moved away."""

from __future__ import annotations

import pytest

from robota.cli._tui._standing import moved_note, read_only_refusal, standing_label
from robota.core.store import TaskMobility

MOVING = TaskMobility("moving", "D1", "h1")
MOVED = TaskMobility("moved", "D1", "h1")
HELD = TaskMobility("held", "D2", "h2")


@pytest.mark.parametrize(
    ("before", "now", "said"),
    [
        (None, None, None),
        (MOVING, MOVING, None),
        (MOVED, MOVED, None),
        (None, MOVING, "task t1 is moving to device D1 (handoff h1): it takes no input until"),
        (MOVING, MOVED, "task t1 has moved to device D1 (handoff h1): continue it there. This"),
        # A push noticed only once it had moved (two reads apart) says the same.
        (None, MOVED, "task t1 has moved to device D1 (handoff h1): continue it there. This"),
        (
            MOVING,
            None,
            "the handoff of task t1 to device D1 (handoff h1) ended without moving it: it takes",
        ),
        # Back from the other device later: still not this terminal's (its session missed it).
        (MOVED, None, None),
        (None, HELD, "task t1 is held here until device D2 (handoff h2) releases it"),
        (HELD, None, "task t1 was released by device D2 (handoff h2): it takes input here now"),
    ],
)
def test_what_the_terminal_says_when_its_task_moves(
    before: TaskMobility | None, now: TaskMobility | None, said: str | None
) -> None:
    note = moved_note("t1", before, now)
    if said is None:
        assert note is None
    else:
        assert note is not None and note.startswith(said)


def test_a_moved_task_is_said_read_only_with_the_ways_on() -> None:
    note = moved_note("t1", MOVING, MOVED)
    assert note is not None
    assert note.endswith(
        "This terminal no longer drives it and its view is read-only "
        "(/new starts a task here, /switch opens another, /exit leaves)"
    )
    assert read_only_refusal("t1", MOVED) == (
        "task t1 has moved to device D1; continue it there (this view is read-only: /new starts "
        "a task here, /switch opens another, /exit leaves)"
    )


@pytest.mark.parametrize(
    ("mobility", "label"),
    [
        (None, None),
        (MOVING, "moving to D1"),
        (MOVED, "read-only · moved to D1"),
        (HELD, "held for D2"),
    ],
)
def test_the_status_line_shows_where_the_task_stands(
    mobility: TaskMobility | None, label: str | None
) -> None:
    assert standing_label(mobility) == label


LONG = TaskMobility("moved", "G4I4-6GXH-ATVH-BRLK-54OO", "h3")


@pytest.mark.parametrize(
    ("mobility", "name", "label"),
    [
        (LONG, None, "read-only · moved to G4I4-6GXH…"),  # a whole id does not fit
        (LONG, "desk", "read-only · moved to desk"),
        (MOVING, "desk", "moving to desk"),
    ],
)
def test_the_status_line_names_the_device_or_the_start_of_its_id(
    mobility: TaskMobility, name: str | None, label: str
) -> None:
    assert standing_label(mobility, name) == label


def test_the_notes_name_the_device_by_its_name_and_id_when_the_roster_names_it() -> None:
    assert moved_note("t1", None, MOVING, "desk") == (
        "task t1 is moving to device desk (D1) (handoff h1): it takes no input until that ends"
    )
    assert read_only_refusal("t1", MOVED, "desk").startswith(
        "task t1 has moved to device desk (D1); continue it there"
    )
