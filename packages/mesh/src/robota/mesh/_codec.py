"""The bytes that get signed: a context label and length-prefixed fields, nothing else.

Every signed object of the mesh (certificates, lists, statements) is ``pack(context, *fields)``:
the context (``robota-mesh/1 cert`` ...) and then each field as a 4-byte big-endian length and
its bytes; whole numbers are 8 bytes big-endian, text is UTF-8. No JSON canonicalisation: two
encoders cannot disagree about the bytes, and a signature made for one kind of object can never
be read as another (the context is signed too). ``unpack`` is strict: the context must match,
the field count must be what the caller expects, nothing may follow the last field; anything
else is ``Malformed``. Pure, standard library only.
"""

from __future__ import annotations

import struct

from ._errors import Malformed

__all__ = ["MAX_BLOB", "as_int", "as_text", "pack", "unpack"]

MAX_BLOB = 1 << 20
"""No signed object is larger than this (a full roster is ~64 certificates of ~200 bytes)."""

_LEN = struct.Struct(">I")
_U64 = struct.Struct(">Q")


def _field(value: bytes | int | str) -> bytes:
    if isinstance(value, bool):
        raise TypeError("a boolean is not a field")
    if isinstance(value, int):
        if not 0 <= value < 1 << 64:
            raise ValueError("a whole number field must fit 64 bits unsigned")
        value = _U64.pack(value)
    elif isinstance(value, str):
        value = value.encode("utf-8")
    return _LEN.pack(len(value)) + value


def pack(context: bytes, *fields: bytes | int | str) -> bytes:
    """``context`` then each field, length-prefixed (the context is a field too)."""
    return _field(context) + b"".join(_field(value) for value in fields)


def unpack(context: bytes, data: bytes, count: int | None = None) -> list[bytes]:
    """The fields after ``context``; ``Malformed`` unless ``data`` is exactly such a packing
    (and, when given, of ``count`` fields)."""
    if len(data) > MAX_BLOB:
        raise Malformed("larger than a signed object may be")
    fields: list[bytes] = []
    offset = 0
    while offset < len(data):
        if offset + 4 > len(data):
            raise Malformed("a truncated length")
        (length,) = _LEN.unpack_from(data, offset)
        offset += 4
        if offset + length > len(data):
            raise Malformed("a truncated field")
        fields.append(data[offset : offset + length])
        offset += length
    if not fields or fields[0] != context:
        raise Malformed("not the expected kind of object")
    if count is not None and len(fields) - 1 != count:
        raise Malformed(f"{len(fields) - 1} fields, expected {count}")
    return fields[1:]


def as_int(field: bytes) -> int:
    """A whole number field (8 bytes big-endian)."""
    if len(field) != 8:
        raise Malformed("a whole number field that is not 8 bytes")
    value: int = _U64.unpack(field)[0]
    return value


def as_text(field: bytes, *, limit: int = 256) -> str:
    """A text field of at most ``limit`` bytes, UTF-8 without control characters."""
    if len(field) > limit:
        raise Malformed("a text field that is too long")
    try:
        text = field.decode("utf-8")
    except UnicodeDecodeError:
        raise Malformed("a text field that is not UTF-8") from None
    if any(ord(ch) < 32 or ord(ch) == 127 for ch in text):
        raise Malformed("a text field with control characters")
    return text
