"""How an error message names a decoded JSON value's kind: shared by the request registry
(host side) and reply decoding (client side), so a client need not load the registry."""

from __future__ import annotations

__all__ = ["describe_json"]


def describe_json(value: object) -> str:
    """What a decoded JSON value is, in the words an error message uses."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__
