"""What a restarted host says about an unsettled turn, by table (``_recovery_notes``)."""

from __future__ import annotations

import pytest

from robota.core.frontend import recovery_note, recovery_texts


@pytest.mark.parametrize(
    ("status", "continues", "continued", "note"),
    [
        ("running", True, False, "continued"),
        ("interrupted", False, False, "interrupted"),
        ("interrupted", False, True, None),  # the turn that continues it says so
        ("completed", False, False, None),  # its answer is delivered, nothing to explain
        ("failed", False, False, None),
        ("running", False, False, None),
    ],
)
def test_which_note_an_unsettled_turn_gets(
    status: str, continues: bool, continued: bool, note: str | None
) -> None:
    assert recovery_note(status, continues=continues, continued=continued) == note


def test_the_notes_are_in_the_profiles_locale() -> None:
    assert "restarted" in recovery_texts("en_US")["continued"]
    assert "重启" in recovery_texts("zh_CN")["interrupted"]
