"""``${NAME}`` references in config.yaml values.

Only the braced form is recognised, so a literal ``$`` (common in passwords and shell snippets)
needs no escaping; ``$${`` writes a literal ``${``. A ``${`` that is not a well-formed reference
is reported instead of being kept literally: ``${OPENAI_API_KEY`` is a typo, not a value.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

__all__ = ["Expansion", "expand"]

_TOKEN = re.compile(r"\$\$\{|\$\{(?P<name>[A-Za-z_][A-Za-z0-9_]*)\}|\$\{")


@dataclass(frozen=True, slots=True)
class Expansion:
    """The outcome of expanding one string."""

    value: str
    """The expanded text; unset variables expand to an empty string."""
    names: tuple[str, ...]
    """Every variable referenced, in order."""
    missing: tuple[str, ...]
    """The referenced variables that are not set."""
    malformed: bool
    """A ``${`` that does not start a ``${NAME}`` reference."""

    @property
    def referenced(self) -> bool:
        return bool(self.names)


def expand(raw: str, environ: Mapping[str, str]) -> Expansion:
    """Expand every ``${NAME}`` in ``raw`` from ``environ``."""
    parts: list[str] = []
    names: list[str] = []
    missing: list[str] = []
    malformed = False
    last = 0
    for match in _TOKEN.finditer(raw):
        parts.append(raw[last : match.start()])
        last = match.end()
        token = match.group()
        name = match["name"]
        if token == "$${":
            parts.append("${")
        elif name is not None:
            names.append(name)
            if name in environ:
                parts.append(environ[name])
            else:
                missing.append(name)
        else:
            malformed = True
            parts.append(token)
    parts.append(raw[last:])
    return Expansion("".join(parts), tuple(names), tuple(missing), malformed)
