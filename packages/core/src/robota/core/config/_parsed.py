"""Where ``parse_yaml`` may take a text's parse from instead of parsing it: a hook, empty by
default.

The ``robota`` script installs its parsed-text cache here (``robota.cli._parsed_text``: the
whole text is its key, so what it returns is what parsing would have), so a start on a
config.yaml it has seen before does not load ruamel.yaml at all. A library use of
``robota.core.config`` and a test's in-process load parse every time.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

__all__ = ["ParseCache", "parse_cache", "use_parse_cache"]


class ParseCache(Protocol):
    def parse(self, text: str, parse: Callable[[str], object]) -> object:
        """What ``text`` parses to: remembered, else ``parse(text)``; its errors unchanged."""
        ...


class _Hook:
    cache: ParseCache | None = None


def use_parse_cache(cache: ParseCache | None) -> None:
    """Serve ``parse_yaml`` through ``cache`` from now on (``None``: parse every time)."""
    _Hook.cache = cache


def parse_cache() -> ParseCache | None:
    """The cache ``parse_yaml`` asks, if one is installed."""
    return _Hook.cache
