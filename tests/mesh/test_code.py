"""The one-time pairing code: its entropy, its grouped form, what a person may type, the check
character catching typos (exhaustively for one wrong character and neighbours swapped)."""

from __future__ import annotations

import itertools
import math

import pytest

from robota.mesh._code import ALPHABET, CODE_BITS, BadCode, new_code, pake_password, parse_code


def fixed(value: int) -> bytes:
    return value.to_bytes(7, "big")


def test_entropy_and_form() -> None:
    assert CODE_BITS >= 50
    assert math.log2(len(ALPHABET)) * 10 == CODE_BITS
    code = new_code(lambda n: fixed(0))
    assert code == "00000-00000-0"
    every_bit = new_code(lambda n: b"\xff" * n)
    assert every_bit == "ZZZZZ-ZZZZZ-" + every_bit[-1]
    codes = {new_code() for _ in range(200)}
    assert len(codes) == 200
    assert all(parse_code(c) == c for c in codes)


@pytest.mark.parametrize(
    ("typed", "parsed"),
    [
        ("7KQ4M-2XRPA-{c}", "7KQ4M-2XRPA-{c}"),
        ("7kq4m2xrpa{c}", "7KQ4M-2XRPA-{c}"),
        ("  7KQ4M 2XRPA {c} ", "7KQ4M-2XRPA-{c}"),
        ("7KQ4M-2XRPA-{c}\n", "7KQ4M-2XRPA-{c}"),
    ],
)
def test_what_a_person_may_type(typed: str, parsed: str) -> None:
    check = parse_code_check("7KQ4M2XRPA")
    assert parse_code(typed.format(c=check)) == parsed.format(c=check)


def parse_code_check(data: str) -> str:
    for char in ALPHABET:
        try:
            return parse_code(data + char)[-1]
        except BadCode:
            continue
    raise AssertionError("no check character fits")


def test_crockford_reading() -> None:
    data = "1O1L0I1O10"  # I and L read as 1, O as 0
    check = parse_code_check("1011011010")
    assert parse_code(data + check) == "10110-11010-" + check


@pytest.mark.parametrize(
    ("typed", "why"),
    [
        ("", "has 11 characters, this has 0"),
        ("7KQ4M-2XRPA", "has 11 characters, this has 10"),
        ("7KQ4M-2XRPA-JJ", "has 11 characters, this has 12"),
        ("7KQ4M-2XRPA-U", "has no 'U'"),
        ("7KQ4M-2XR!A-J", "has no '!'"),
    ],
)
def test_refused_text(typed: str, why: str) -> None:
    with pytest.raises(BadCode, match=why):
        parse_code(typed)


def test_every_single_wrong_character_is_caught() -> None:
    code = new_code(lambda n: fixed(0x1234_5678_9ABC_DE))
    plain = code.replace("-", "")
    for index, char in itertools.product(range(11), ALPHABET):
        if plain[index] == char:
            continue
        typo = plain[:index] + char + plain[index + 1 :]
        with pytest.raises(BadCode, match="typo"):
            parse_code(typo)


def test_neighbours_swapped_are_caught_but_zero_and_z() -> None:
    missed = set()
    for a, b in itertools.permutations(ALPHABET, 2):
        for at in range(9):
            data = ["0"] * 10
            data[at], data[at + 1] = a, b
            good = parse_code_check("".join(data))
            data[at], data[at + 1] = b, a
            try:
                parse_code("".join(data) + good)
            except BadCode:
                continue
            missed.add(frozenset((a, b)))
    assert missed == {frozenset("0Z")}


def test_the_pake_password_is_the_data() -> None:
    code = new_code(lambda n: fixed(99))
    assert pake_password(code) == code.replace("-", "")[:10].encode()
    assert pake_password(code.lower()) == pake_password(code)
