"""A platform with the turn's own buttons: Stop while the turn runs, more once it completed.

``StopButtonCards`` decorates a ``CardPlatform``: it renders what the platform renders and
adds the transport's elements by the view's state, ``stop`` while the turn starts or works
(it goes with the running words), ``completed`` on a completed card (a Reset action). How an
element is added is the platform's (``append``: a Block Kit message's blocks, a Card 2.0
body's elements); the elements themselves carry opaque tokens the transport binds in the
store once the card exists. The renderer's dicts are shared with its cache: ``append`` builds
around them, never into them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..presentation import TurnView
from ._platforms import CardPlatform

__all__ = ["RUNNING_STATES", "StopButtonCards"]

RUNNING_STATES = frozenset({"starting", "working"})
"""The display states a Stop button shows in."""


class StopButtonCards:
    """See the module docstring; ``name`` and the final answer are the platform's."""

    def __init__(
        self,
        platform: CardPlatform,
        *,
        append: Callable[[Any, list[Any]], Any],
        stop: Any | None = None,
        completed: Sequence[Any] = (),
    ) -> None:
        self.name = platform.name
        self._platform = platform
        self._append = append
        self._stop = stop
        self._completed = list(completed)

    def render(
        self,
        view: TurnView,
        *,
        elapsed: float | None,
        approval_tokens: Mapping[str, Mapping[Any, str]],
    ) -> Any:
        card = self._platform.render(view, elapsed=elapsed, approval_tokens=approval_tokens)
        added: list[Any] = []
        if self._stop is not None and view.display_state in RUNNING_STATES:
            added.append(self._stop)
        if view.display_state == "completed":
            added.extend(self._completed)
        return self._append(card, added) if added else card

    def final_chunks(self, text: str) -> list[Any]:
        return self._platform.final_chunks(text)
