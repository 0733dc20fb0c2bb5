"""Keeping credentials out of log lines.

Two nets, because each misses what the other catches: the exact values robota knows are secret
(the profile's .env values and secret-named config fields), and the shapes of well-known tokens
(Slack ``xoxb-``/``xapp-``, ``Bearer ...``, OpenAI-style ``sk-...``, GitHub and Google keys) that
may arrive from anywhere, such as an agent's error message quoting its own environment.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["MASK", "Redactor"]

MASK = "***"

_TOKEN_SHAPES = (
    r"(?<![A-Za-z0-9])xox[abposre]-[A-Za-z0-9-]{6,}",
    r"(?<![A-Za-z0-9])xapp-[A-Za-z0-9-]{6,}",
    r"(?<![A-Za-z0-9])sk-[A-Za-z0-9_-]{16,}",
    r"(?<![A-Za-z0-9])gh[pousr]_[A-Za-z0-9]{20,}",
    r"(?<![A-Za-z0-9])github_pat_[A-Za-z0-9_]{20,}",
    r"(?<![A-Za-z0-9])AIza[A-Za-z0-9_-]{30,}",
)
_BEARER = r"(?P<scheme>(?i:bearer))\s+[A-Za-z0-9._~+/=-]{6,}"


def _spellings(secret: str) -> set[str]:
    """The secret as written, and as it appears inside a JSON string (escaped)."""
    return {
        secret,
        json.dumps(secret, ensure_ascii=False)[1:-1],
        json.dumps(secret, ensure_ascii=True)[1:-1],
    }


class Redactor:
    """Replaces secrets in text, and in every string of a JSON-like value, with ``***``."""

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        spellings: set[str] = set()
        for secret in secrets:
            if secret:
                spellings |= _spellings(secret)
        # Longest first, so a secret that contains another is masked whole.
        exact = [re.escape(s) for s in sorted(spellings, key=len, reverse=True)]
        self._pattern = re.compile("|".join([*exact, _BEARER, *_TOKEN_SHAPES]))

    @staticmethod
    def _replace(match: re.Match[str]) -> str:
        scheme = match.group("scheme")
        return f"{scheme} {MASK}" if scheme else MASK

    def redact(self, text: str) -> str:
        return self._pattern.sub(self._replace, text)

    def leaks(self, text: str) -> bool:
        """Whether ``text`` holds something ``redact`` would mask."""
        return self._pattern.search(text) is not None

    def redact_value(self, value: Any) -> Any:
        """A copy of a JSON-like ``value`` with every string (keys included) redacted.

        Numbers are checked through their text, so a numeric secret is masked too.
        """
        if isinstance(value, str):
            return self.redact(value)
        if isinstance(value, Mapping):
            return {self.redact(str(k)): self.redact_value(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self.redact_value(item) for item in value]
        if value is None or isinstance(value, bool):
            return value
        if isinstance(value, int | float):
            text = str(value)
            return value if self.redact(text) == text else self.redact(text)
        return self.redact(repr(value))
