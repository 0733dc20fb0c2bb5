"""The platform as a strategy: how a view becomes a card payload, and an answer becomes chunks.

One card renderer actor serves every front end; what differs is only this object. A platform
is pure and owned by one turn's actor (its incremental renderer keeps a per-card cache), so
make one per turn (``CardHost`` makes one per incarnation of the turn's actor).
Payloads are the platform's JSON values, exactly what its sink sends:

* ``FeishuPlatform``: Card JSON 2.0 (``dict``); the answer as Card 2.0 messages within 30 KB.
* ``SlackPlatform``: a ``chat.postMessage``/``chat.update`` body without channel and ts; the
  answer as messages of one ``markdown`` block each.
* ``TerminalPlatform``: the card as a list of lines; the answer as one chunk (a terminal has
  no size limit to split for).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol, runtime_checkable

from ..events import ApprovalDecision
from ..presentation import (
    SLACK_LIMITS,
    FeishuBudget,
    FeishuRenderer,
    Layout,
    SlackLimits,
    SlackRenderer,
    TerminalRenderer,
    TurnView,
    feishu_final_answer,
    slack_final_answer,
)

__all__ = ["CardPlatform", "FeishuPlatform", "SlackPlatform", "TerminalPlatform"]

Tokens = Mapping[str, Mapping[ApprovalDecision, str]]


@runtime_checkable
class CardPlatform(Protocol):
    """Renders for one platform. Called on the card actor's thread only."""

    name: str

    def render(self, view: TurnView, *, elapsed: float | None, approval_tokens: Tokens) -> Any:
        """The progress card for ``view``: a JSON value (dicts, lists, str, numbers).

        ``approval_tokens[approval_id][decision]`` are the opaque tokens for the buttons; a
        decision without a token gets no button."""
        ...

    def final_chunks(self, text: str) -> list[Any]:
        """The final answer as the messages to send, in order (none for blank text)."""
        ...


class FeishuPlatform:
    name = "feishu"

    def __init__(
        self, *, agent: str, layout: Layout = "grouped", budget: FeishuBudget | None = None
    ) -> None:
        self._renderer = FeishuRenderer(agent=agent, layout=layout, budget=budget)
        self._card_bytes = self._renderer.budget.card_bytes

    def render(self, view: TurnView, *, elapsed: float | None, approval_tokens: Tokens) -> Any:
        return self._renderer.render(view, elapsed=elapsed, approval_tokens=approval_tokens).card

    def final_chunks(self, text: str) -> list[Any]:
        return list(feishu_final_answer(text, card_bytes=self._card_bytes))


class SlackPlatform:
    name = "slack"

    def __init__(self, *, agent: str, limits: SlackLimits = SLACK_LIMITS) -> None:
        self.limits = limits
        self._renderer = SlackRenderer(agent=agent, limits=limits)

    def render(self, view: TurnView, *, elapsed: float | None, approval_tokens: Tokens) -> Any:
        message = self._renderer.render(view, elapsed=elapsed, approval_tokens=approval_tokens)
        return message.payload()

    def final_chunks(self, text: str) -> list[Any]:
        return [message.payload() for message in slack_final_answer(text, limits=self.limits)]


class TerminalPlatform:
    name = "terminal"

    def __init__(
        self, *, agent: str, width: int | None = None, color: bool = False, last: int | None = None
    ) -> None:
        self.width = width
        self.color = color
        self.last = last
        self._renderer = TerminalRenderer(agent=agent)

    def render(self, view: TurnView, *, elapsed: float | None, approval_tokens: Tokens) -> Any:
        # The terminal answers approvals by key, not by button: it needs no tokens.
        del approval_tokens
        return self._renderer.render(
            view, elapsed=elapsed, width=self.width, color=self.color, last=self.last
        )

    def final_chunks(self, text: str) -> list[Any]:
        return [text] if text.strip() else []
