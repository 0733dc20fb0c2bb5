"""Folding chat text for the detectors: case folded, ASCII and CJK punctuation as one space."""

from __future__ import annotations

import re

__all__ = ["fold"]

# Fullwidth comma, ideographic full stop, fullwidth ! ? ; :, ideographic comma, fullwidth
# tilde, ellipsis, middle dot (escaped: they look like their ASCII twins in an editor).
_SEPARATORS = re.compile(
    "[\\s,.!?;:~'\"`\uff0c\u3002\uff01\uff1f\uff1b\uff1a\u3001\uff5e\u2026\u00b7]+"
)


def fold(text: str) -> str:
    return _SEPARATORS.sub(" ", text.strip().casefold()).strip()
