"""The busy placeholder: what a teammate is told when the operator's own turn holds them back.

A request that waits because it conflicts with a turn the operator runs on the project from the
terminal (a teammate's write behind the operator's slot) gets, as its one queued reply, the
placeholder that the developer is busy, rather than a bare queue position; the group gets at most
one such placeholder per ``PLACEHOLDER_SECONDS`` (the others that wait then get the ordinary
queued reply, so every wait still gets exactly one reply). Pure: times are the caller's.
"""

from __future__ import annotations

from collections.abc import Collection

from ._tags import conflict

__all__ = ["PLACEHOLDER_SECONDS", "placeholder_due", "waits_for_operator"]

PLACEHOLDER_SECONDS = 5 * 60.0


def waits_for_operator(
    reason: str, tags: Collection[str], operator_tags: Collection[Collection[str]]
) -> bool:
    """The request was queued for a tag conflict and conflicts with one of the operator's
    running turns (``operator_tags``: each turn's tags)."""
    if not reason.startswith("conflict:"):
        return False
    return any(conflict(tags, turn) is not None for turn in operator_tags)


def placeholder_due(last_at: float | None, now: float) -> bool:
    """The group may get a placeholder now (none yet, or the last one is old enough)."""
    return last_at is None or now - last_at >= PLACEHOLDER_SECONDS
