"""``StopButtonCards``: the platform's card, with the transport's buttons by the turn's state."""

from __future__ import annotations

from typing import Any

import pytest

from robota.core.cards import StopButtonCards, TerminalPlatform
from robota.core.events import TextDelta, TurnCompleted, TurnStarted
from robota.core.presentation import TurnView


def appended(card: Any, added: list[Any]) -> Any:
    return [*card, *added]


def view_at(state: str) -> TurnView:
    view = TurnView()
    if state == "idle":
        return view
    view.apply(TurnStarted("t1"))
    view.apply(TextDelta("i1", "working on it"))
    if state != "working":
        view.apply(TurnCompleted("t1", state, final_text="done"))  # type: ignore[arg-type]
    return view


@pytest.mark.parametrize(
    ("state", "stop", "completed", "expected"),
    [
        ("working", "STOP", (), ["STOP"]),
        ("working", None, (), []),
        ("working", "STOP", ("RESET",), ["STOP"]),
        ("completed", "STOP", (), []),
        ("completed", "STOP", ("RESET", "NOTE"), ["RESET", "NOTE"]),
        ("failed", "STOP", ("RESET",), []),
        ("interrupted", "STOP", ("RESET",), []),
    ],
)
def test_buttons_show_by_the_turns_state(
    state: str, stop: str | None, completed: tuple[str, ...], expected: list[str]
) -> None:
    platform = TerminalPlatform(agent="codex")
    cards = StopButtonCards(platform, append=appended, stop=stop, completed=completed)
    view = view_at(state)
    plain = platform.render(view, elapsed=1.0, approval_tokens={})
    card = cards.render(view, elapsed=1.0, approval_tokens={})
    assert card[: len(plain)] == plain
    assert card[len(plain) :] == expected


def test_the_name_and_the_answer_are_the_platforms() -> None:
    platform = TerminalPlatform(agent="codex")
    cards = StopButtonCards(platform, append=appended, stop="STOP")
    assert cards.name == "terminal"
    assert cards.final_chunks("the answer") == ["the answer"]
