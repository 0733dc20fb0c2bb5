"""Resource tags and when two conflict (the scheduler runs conflicting requests one at a time).

* ``read:PATH`` / ``write:PATH`` conflict when their paths overlap by directory-segment prefix
  (``/p`` and ``/p/src`` overlap, ``/p`` and ``/proj`` do not), unless both are ``read``;
* ``mcp:NAME``, ``port:N``, ``net:push``, ``exclusive:NAME`` conflict with an equal tag;
* tags of different kinds never conflict (a read of ``/p`` and ``port:80``), except the two path
  kinds with each other.

Paths are compared as written, after normalising (``config`` makes intent paths absolute
against the project, and a request's default tag is the project itself).
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable

__all__ = ["conflict", "conflict_reason", "tags_conflict"]

_PATH_KINDS = ("read", "write")


def _segments(path: str) -> tuple[str, ...]:
    return tuple(part for part in posixpath.normpath(path).split("/") if part not in ("", "."))


def tags_conflict(a: str, b: str) -> bool:
    kind_a, _, value_a = a.partition(":")
    kind_b, _, value_b = b.partition(":")
    if kind_a in _PATH_KINDS and kind_b in _PATH_KINDS:
        if kind_a == kind_b == "read":
            return False
        left, right = _segments(value_a), _segments(value_b)
        shorter = min(len(left), len(right))
        return left[:shorter] == right[:shorter]
    return a == b and kind_a not in _PATH_KINDS


def conflict(tags: Iterable[str], others: Iterable[str]) -> tuple[str, str] | None:
    """The first pair (one of ``tags``, one of ``others``) that conflicts, if any."""
    held = tuple(others)
    for tag in tags:
        for other in held:
            if tags_conflict(tag, other):
                return tag, other
    return None


def conflict_reason(pair: tuple[str, str]) -> str:
    """``conflict:path-overlap:A~B`` or ``conflict:exclusive-tag:T`` (content-free)."""
    tag, other = pair
    if tag.partition(":")[0] in _PATH_KINDS:
        return f"conflict:path-overlap:{tag}~{other}"
    return f"conflict:exclusive-tag:{tag}"
