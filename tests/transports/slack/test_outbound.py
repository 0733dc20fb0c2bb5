"""``restart_blocks``: a note updated in place gets new ``block_id`` values whenever its
content changes (Slack clients may keep a block's old state under an unchanged id)."""

from __future__ import annotations

from typing import Any

import pytest

from robota.transports.slack._outbound import restart_blocks


def ids(blocks: Any) -> list[str]:
    return [b["block_id"] for b in blocks]


BASE = ("The host restarted while this turn ran.", "Cancel", "tok-1")


@pytest.mark.parametrize(
    ("changed", "same_section", "same_action"),
    [
        (BASE, True, True),  # the same content: the same ids (no needless churn)
        (("The turn was cancelled.", "Cancel", "tok-1"), False, True),  # the settled text
        ((BASE[0], "Cancel", "tok-2"), True, False),  # a new token behind the button
        ((BASE[0], "Annuler", "tok-1"), True, False),  # another label
    ],
)
def test_block_ids_follow_the_content(
    changed: tuple[str, str, str], same_section: bool, same_action: bool
) -> None:
    before, after = ids(restart_blocks(*BASE)), ids(restart_blocks(*changed))
    assert len(before) == len(after) == 2
    assert (before[0] == after[0]) is same_section
    assert (before[1] == after[1]) is same_action
    assert all(len(i) <= 255 for i in before + after)


def test_a_settled_note_without_a_button_has_a_new_section_id() -> None:
    live = restart_blocks(BASE[0], "Cancel", "tok-1")
    settled = restart_blocks("Continued after the restart.", "", None)
    assert [b["type"] for b in settled] == ["section"]
    assert settled[0]["block_id"] != live[0]["block_id"]
    assert len(set(ids(live))) == 2, "the section and the button row differ in one message"


def test_another_action_id_is_another_block() -> None:
    a = restart_blocks(*BASE)
    b = restart_blocks(*BASE, action_id="queue_cancel")
    assert a[1]["block_id"] != b[1]["block_id"] and a[0]["block_id"] == b[0]["block_id"]
