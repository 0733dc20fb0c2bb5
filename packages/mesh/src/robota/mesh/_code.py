"""The one-time pairing code: 50 random bits a person reads off one terminal and types on another.

Ten characters of Crockford's base32 (digits and capitals without I, L, O, U: nothing reads as
another) carry the 50 bits; an eleventh is a check character (Luhn mod 32 over the same
alphabet), so a typo (any one character wrong, most neighbours swapped) is caught on the
joining device before the PAKE runs: a typo costs nothing, a wrong code burns the window
(``_pairing``). Shown grouped, ``7KQ4M-2XRPA-J``; typed in any case, with or without the
dashes and spaces, ``I``/``L`` read as ``1`` and ``O`` as ``0`` as Crockford's decoding does.

The code is a secret while its window is open: it appears only on the controlling terminal,
never in argv, an environment, a log or a listing (the CLI and the host's handlers hold to
that). The PAKE's password is the ten data characters (``pake_password``).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable

from ._errors import MeshError

__all__ = ["ALPHABET", "CODE_BITS", "BadCode", "new_code", "pake_password", "parse_code"]

ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
"""Crockford's base32: 32 symbols, 5 bits each."""
_DATA = 10
CODE_BITS = _DATA * 5
"""The code's entropy: 50 bits (an online attacker gets one guess per code)."""
_GROUP = 5
_TYPED_NOISE = re.compile(r"[\s\-]+")
_READ_AS = str.maketrans({"I": "1", "L": "1", "O": "0"})


class BadCode(MeshError, ValueError):
    """Text that is not a pairing code (a typo): said to the person typing, never burning the
    window."""


def _check(data: str) -> str:
    """Luhn mod 32: doubling every second symbol from the right catches any single wrong symbol
    and every swap of two neighbours but (0, Z)."""
    n = len(ALPHABET)
    total = 0
    for index, char in enumerate(reversed(data)):
        value = ALPHABET.index(char)
        if index % 2 == 0:
            value *= 2
            value = value // n + value % n
        total += value
    return ALPHABET[(n - total % n) % n]


def _grouped(data: str) -> str:
    parts = [data[i : i + _GROUP] for i in range(0, len(data), _GROUP)]
    return "-".join([*parts, _check(data)])


def new_code(entropy: Callable[[int], bytes] = os.urandom) -> str:
    """A fresh code in its grouped form (``entropy`` is injected for tests)."""
    value = int.from_bytes(entropy(7), "big") >> (56 - CODE_BITS)
    data = "".join(ALPHABET[(value >> (5 * i)) & 31] for i in reversed(range(_DATA)))
    return _grouped(data)


def parse_code(text: str) -> str:
    """The code a person typed, in its grouped form; ``BadCode`` saying what is wrong."""
    plain = _TYPED_NOISE.sub("", text).upper().translate(_READ_AS)
    if len(plain) != _DATA + 1:
        raise BadCode(f"a pairing code has {_DATA + 1} characters, this has {len(plain)}")
    strangers = sorted({c for c in plain if c not in ALPHABET})
    if strangers:
        raise BadCode(f"a pairing code has no {', '.join(map(repr, strangers))}")
    data, check = plain[:_DATA], plain[_DATA]
    if _check(data) != check:
        raise BadCode("the code has a typo (its check character does not match)")
    return _grouped(data)


def pake_password(code: str) -> bytes:
    """The PAKE's password for a parsed code: its ten data characters."""
    return parse_code(code).replace("-", "")[:_DATA].encode("ascii")
