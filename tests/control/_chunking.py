"""Cutting a byte string into the chunks a socket might deliver."""

from __future__ import annotations

import itertools


def chunked(data: bytes, cuts: list[int]) -> list[bytes]:
    """``data`` cut at the positions ``cuts`` (taken modulo its length; empty chunks dropped)."""
    points = sorted({c % (len(data) + 1) for c in cuts} | {0, len(data)})
    return [data[a:b] for a, b in itertools.pairwise(points)]
