"""Feishu's card platform (``robota.core.cards.CardPlatform``): the renderer of ``_card`` as
the strategy a turn's card actor draws with.

The card is Card JSON 2.0 (a ``dict``); the final answer is Card 2.0 messages within 30 KB.
The running transport decorates it with its buttons (``_outbound.FeishuCards``); ``robota cards
preview`` draws with it as it is (``FeishuTransport.card_platform``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._card import FeishuBudget, FeishuRenderer, Layout, feishu_final_answer

if TYPE_CHECKING:
    # Types only: the card actor's package (pykka, trio) is not needed to draw a card.
    from robota.core.cards import ApprovalTokens
    from robota.core.presentation import TurnView

__all__ = ["FeishuPlatform"]


class FeishuPlatform:
    name = "feishu"

    def __init__(
        self, *, agent: str, layout: Layout = "grouped", budget: FeishuBudget | None = None
    ) -> None:
        self._renderer = FeishuRenderer(agent=agent, layout=layout, budget=budget)
        self._card_bytes = self._renderer.budget.card_bytes

    def render(
        self, view: TurnView, *, elapsed: float | None, approval_tokens: ApprovalTokens
    ) -> Any:
        return self._renderer.render(view, elapsed=elapsed, approval_tokens=approval_tokens).card

    def final_chunks(self, text: str) -> list[Any]:
        return list(feishu_final_answer(text, card_bytes=self._card_bytes))
