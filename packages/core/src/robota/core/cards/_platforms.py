"""The platform as a strategy: how a view becomes a card payload, and an answer becomes chunks.

One card renderer actor serves every front end; what differs is only this object. A platform
is pure and owned by one turn's actor (its incremental renderer keeps a per-card cache), so
make one per turn (``CardHost`` makes one per incarnation of the turn's actor).
Payloads are the platform's JSON values, exactly what its sink sends. Core has one platform of
its own, ``TerminalPlatform`` (the card as a list of lines; the answer as one chunk: a terminal
has no size limit to split for); a chat platform's is its transport plugin's, which declares it
as ``CardRenderers`` (Feishu's Card JSON 2.0, Slack's Block Kit messages), so that ``robota
cards preview`` draws every installed one by its name.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol, runtime_checkable

from ..events import ApprovalDecision
from ..presentation import TerminalRenderer, TurnView

__all__ = ["ApprovalTokens", "CardPlatform", "CardRenderers", "TerminalPlatform"]

ApprovalTokens = Mapping[str, Mapping[ApprovalDecision, str]]
"""``tokens[approval_id][decision]``: the opaque token of each approval button."""


@runtime_checkable
class CardPlatform(Protocol):
    """Renders for one platform. Called on the card actor's thread only."""

    name: str

    def render(
        self, view: TurnView, *, elapsed: float | None, approval_tokens: ApprovalTokens
    ) -> Any:
        """The progress card for ``view``: a JSON value (dicts, lists, str, numbers).

        ``approval_tokens[approval_id][decision]`` are the opaque tokens for the buttons; a
        decision without a token gets no button."""
        ...

    def final_chunks(self, text: str) -> list[Any]:
        """The final answer as the messages to send, in order (none for blank text)."""
        ...


@runtime_checkable
class CardRenderers(Protocol):
    """What a transport plugin (``robota.core.TransportPlugin``) declares of its cards, on its
    entry point object: a plugin without cards simply is not one.

    ``robota cards preview --platform NAME`` draws with ``card_platform`` of the installed
    plugin ``NAME``; the plugin's running transport may decorate the same platform with its
    own buttons (``StopButtonCards``)."""

    name: str
    card_layouts: tuple[str, ...]
    """The layouts its cards can take, the default first; empty when there is only one."""

    def card_platform(self, *, agent: str, layout: str | None = None) -> CardPlatform:
        """A fresh platform for one turn of ``agent`` (the card's header names it), in
        ``layout`` (one of ``card_layouts``; ``None``: the default). Importing the renderer is
        this call's cost, never the plugin's import's."""
        ...


class TerminalPlatform:
    name = "terminal"

    def __init__(
        self, *, agent: str, width: int | None = None, color: bool = False, last: int | None = None
    ) -> None:
        self.width = width
        self.color = color
        self.last = last
        self._renderer = TerminalRenderer(agent=agent)

    def render(
        self, view: TurnView, *, elapsed: float | None, approval_tokens: ApprovalTokens
    ) -> Any:
        # The terminal answers approvals by key, not by button: it needs no tokens.
        del approval_tokens
        return self._renderer.render(
            view, elapsed=elapsed, width=self.width, color=self.color, last=self.last
        )

    def final_chunks(self, text: str) -> list[Any]:
        return [text] if text.strip() else []
