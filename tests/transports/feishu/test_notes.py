"""The service's own notes (restart, start-up): every language has every note, and a note card
carries a button only when it has a token bound server side."""

from __future__ import annotations

import pytest

from robota.transports.feishu._texts import _note_card, _notes


@pytest.mark.parametrize("locale", ["zh_CN.UTF-8", "en", "C"])
def test_every_restart_note_reads_in_both_locales(locale: str) -> None:
    notes = _notes(locale)
    assert set(notes) == set(_notes("en")), "the same notes in every language"
    for phase in ("scheduled", "forced", "cancel", "cancelled", "restarting", "restarted"):
        text = notes[f"restart_{phase}"]
        assert text and (("重启" in text) == locale.startswith("zh")), (phase, text)


def test_a_note_card_has_a_button_only_with_a_token() -> None:
    plain = _note_card("robota", "Restart cancelled.", button=("Cancel the restart", None))
    assert [e["element_id"] for e in plain["body"]["elements"]] == ["note"]
    card = _note_card("robota", "Restart scheduled", button=("Cancel the restart", "tok-1"))
    (_, button) = card["body"]["elements"]
    assert button["behaviors"] == [{"type": "callback", "value": {"token": "tok-1"}}]
