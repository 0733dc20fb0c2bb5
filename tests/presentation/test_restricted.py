"""A Restricted turn (its workspace untrusted) says so on every renderer's progress card, and
the card model takes the mark from ``CardTurn.restricted``."""

from __future__ import annotations

import json

import pytest

from robota.core.cards import CardTurn, TerminalPlatform, TurnCard
from robota.core.events import TextDelta, TurnStarted
from robota.core.presentation import RESTRICTED, TurnView, render_terminal
from robota.transports.feishu import FeishuPlatform, render_feishu_card
from robota.transports.slack import SlackPlatform, render_slack_progress


def view(*, restricted: bool) -> TurnView:
    turn = TurnView()
    turn.restricted = restricted
    turn.apply(TurnStarted("t1"))
    turn.apply(TextDelta("m1", "hello"))
    return turn


RENDERERS = {
    "feishu": lambda v: json.dumps(render_feishu_card(v, agent="codex", elapsed=3).card),
    "slack": lambda v: json.dumps(render_slack_progress(v, agent="codex", elapsed=3).blocks),
    "terminal": lambda v: "\n".join(render_terminal(v, agent="codex", elapsed=3)),
}


@pytest.mark.parametrize("name", sorted(RENDERERS))
def test_every_renderer_marks_a_restricted_turn_and_only_that(name: str) -> None:
    assert RESTRICTED == "Restricted"
    assert RESTRICTED in RENDERERS[name](view(restricted=True))
    assert RESTRICTED not in RENDERERS[name](view(restricted=False))


def test_the_mark_survives_a_snapshot() -> None:
    restored = TurnView.from_json(view(restricted=True).to_json())
    assert restored.restricted
    assert not TurnView.from_json(view(restricted=False).to_json()).restricted


@pytest.mark.parametrize(
    "platform",
    [FeishuPlatform, SlackPlatform, TerminalPlatform],
)
@pytest.mark.parametrize("restricted", [True, False])
def test_the_card_model_takes_the_mark_from_its_turn(
    platform: type[FeishuPlatform | SlackPlatform | TerminalPlatform], restricted: bool
) -> None:
    made = platform(agent="codex")
    card = TurnCard(
        CardTurn("t1", "task", "route", started_at=0.0, restricted=restricted),
        made,
        clock=lambda: 0.0,
        wall=lambda: 1.0,
    )
    assert card.view.restricted is restricted
    drawn = made.render(card.view, elapsed=1.0, approval_tokens={})
    assert (RESTRICTED in json.dumps(drawn)) is restricted
