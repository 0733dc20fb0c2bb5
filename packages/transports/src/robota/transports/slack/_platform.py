"""Slack's card platform (``robota.core.cards.CardPlatform``): the renderer of ``_card`` as the
strategy a turn's card actor draws with.

The card is a ``chat.postMessage``/``chat.update`` body without channel and ts; the final
answer is messages of one ``markdown`` block each. The running transport decorates it with its
Stop button (``_outbound.SlackCards``); ``robota cards preview`` draws with it as it is
(``SlackTransport.card_platform``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._card import SLACK_LIMITS, SlackLimits, SlackRenderer, slack_final_answer

if TYPE_CHECKING:
    # Types only: the card actor's package (pykka, trio) is not needed to draw a card.
    from robota.core.cards import ApprovalTokens
    from robota.core.presentation import TurnView

__all__ = ["SlackPlatform"]


class SlackPlatform:
    name = "slack"

    def __init__(self, *, agent: str, limits: SlackLimits = SLACK_LIMITS) -> None:
        self.limits = limits
        self._renderer = SlackRenderer(agent=agent, limits=limits)

    def render(
        self, view: TurnView, *, elapsed: float | None, approval_tokens: ApprovalTokens
    ) -> Any:
        message = self._renderer.render(view, elapsed=elapsed, approval_tokens=approval_tokens)
        return message.payload()

    def final_chunks(self, text: str) -> list[Any]:
        return [message.payload() for message in slack_final_answer(text, limits=self.limits)]
