"""JSON as the protocol reads and writes it, and its one decoding error (stdlib only).

Every decode in the protocol raises ``ProtocolError`` naming the field's path (``notice.kind``,
``resume.lastSeq``), what it expected and what it found, through ``expected``; what was found
is described by kind (``describe_json``) or shown cut short (``shown``): the input is the
peer's, maybe huge, maybe secret-bearing. Text is strict JSON both ways (no NaN, no Infinity)
and written compact, UTF-8, non-ASCII kept.
"""

from __future__ import annotations

import json

from .._errors import RobotaError

__all__ = [
    "MAX_SEQ",
    "ProtocolError",
    "check_seq",
    "describe_json",
    "dumps",
    "expected",
    "loads_strict",
    "shown",
]

MAX_SEQ = 2**53 - 1
"""JSON numbers beyond this are not exact in every peer (JavaScript's safe integer)."""


class ProtocolError(RobotaError, ValueError):
    """Input that is not the protocol's: the message says where (``path``, when one field is to
    blame), what was expected and what was found. A carrier answers it and reads on, where it
    can (a bad line never costs a connection whose framing is intact)."""

    def __init__(self, message: str, path: str | None = None) -> None:
        super().__init__(message)
        self.path = path
        self.field = path
        """The same as ``path``: the name the control replies and the surfaces' frames use."""


def expected(path: str, what: str, value: object, *, by_kind: bool = False) -> ProtocolError:
    """``path: expected WHAT, found VALUE`` (the value shown cut short, or only its kind)."""
    found = describe_json(value) if by_kind else shown(value)
    return ProtocolError(f"{path}: expected {what}, found {found}", path)


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


def shown(value: object) -> str:
    """A found value for a message, cut short (``nothing`` for a missing one)."""
    text = json.dumps(value, ensure_ascii=False, default=repr) if value is not None else "nothing"
    return text if len(text) <= 40 else text[:37] + "..."


def check_seq(value: object, path: str) -> int:
    """A sequence number: an integer from 0 to ``MAX_SEQ`` (a boolean is none)."""
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= MAX_SEQ:
        raise expected(path, f"an integer from 0 to {MAX_SEQ}", value)
    return value


def _no_constants(name: str) -> object:
    raise ValueError(f"{name} is not JSON")


def loads_strict(line: bytes | str) -> object:
    """Strict JSON: NaN and Infinity, which Python would accept, are refused (``ValueError``,
    as for text that is no JSON or no UTF-8)."""
    text = line.decode("utf-8") if isinstance(line, bytes | bytearray) else line
    return json.loads(text, parse_constant=_no_constants)


def dumps(obj: object) -> bytes:
    """Compact UTF-8 JSON; ``ValueError``/``TypeError`` for what JSON cannot say."""
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()
