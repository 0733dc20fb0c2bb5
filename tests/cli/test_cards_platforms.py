"""``robota cards preview`` draws the terminal and every installed transport plugin's cards.

The platforms and their layouts are the plugins' (``robota.core.cards.CardRenderers``), so the
command's choices are decided from what is installed: a table over the installed plugins here,
the real script in test_cards_cmd.
"""

from __future__ import annotations

import click
import pytest

from robota.cli._cards_cmd import _check_choice
from robota.cli._cards_preview import TERMINAL, Final, Timed, Update, preview, renderers
from robota.core.cards import CardPlatform, CardRenderers
from robota.core.events import TextDelta, TurnCompleted, TurnStarted
from robota.core.presentation import TurnView
from robota.transports.feishu import FeishuPlatform
from robota.transports.slack import SlackPlatform


def test_the_installed_plugins_declare_their_cards() -> None:
    plugins = renderers()
    assert list(plugins) == ["feishu", "slack"]
    assert all(isinstance(plugin, CardRenderers) for plugin in plugins.values())
    assert plugins["feishu"].card_layouts == ("grouped", "timeline")
    assert plugins["slack"].card_layouts == ()
    feishu = plugins["feishu"].card_platform(agent="a", layout="timeline")
    slack = plugins["slack"].card_platform(agent="a")
    assert isinstance(feishu, FeishuPlatform) and isinstance(slack, SlackPlatform)
    assert isinstance(feishu, CardPlatform) and isinstance(slack, CardPlatform)


@pytest.mark.parametrize(
    ("platform", "layout", "refused"),
    [
        (TERMINAL, None, None),
        ("feishu", None, None),
        ("feishu", "grouped", None),
        ("feishu", "timeline", None),
        ("slack", None, None),
        ("feishu", "fancy", "'fancy' is not one of grouped, timeline"),
        ("slack", "timeline", "--layout applies to --platform feishu only"),
        (TERMINAL, "grouped", "--layout applies to --platform feishu only"),
        ("teams", None, "'teams' is not one of terminal, feishu, slack"),
        ("teams", "grouped", "'teams' is not one of terminal, feishu, slack"),
    ],
)
def test_a_platform_and_a_layout_are_chosen_from_the_installed_plugins(
    platform: str, layout: str | None, refused: str | None
) -> None:
    if refused is None:
        _check_choice(platform, layout, renderers(), terminal=TERMINAL)
        return
    with pytest.raises(click.UsageError) as caught:
        _check_choice(platform, layout, renderers(), terminal=TERMINAL)
    assert refused in caught.value.format_message()


def test_a_plugin_platform_draws_the_turn_and_splits_the_answer() -> None:
    events = [
        TurnStarted("t"),
        TextDelta("m1", "hello"),
        TurnCompleted("t", "completed", final_item_id="m1", final_text="hello"),
    ]
    timed = [Timed(0.1 * n, event, "codex") for n, event in enumerate(events)]
    for name, plugin in renderers().items():
        out = list(preview(timed, platform=name))
        updates = [item for item in out if isinstance(item, Update)]
        (final,) = [item for item in out if isinstance(item, Final)]
        view = TurnView()
        for event in events:
            view.apply(event)
        drawn = plugin.card_platform(agent="codex")
        assert updates[-1].payload == drawn.render(view, elapsed=0.2, approval_tokens={})
        assert final.messages == drawn.final_chunks("hello")
