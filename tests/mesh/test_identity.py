"""Device ids: one printed form, read back from what a person types; keys as raw bytes."""

from __future__ import annotations

import base64
import hashlib
import re

import pytest

from robota.mesh import (
    CredentialStoreError,
    Malformed,
    device_id,
    id_matches_prefix,
    key_bytes,
    key_from_bytes,
    new_key,
    parse_device_id,
    public_bytes,
    public_from_bytes,
)

PRINTED = re.compile(r"[A-Z2-7]{4}(-[A-Z2-7]{4}){12}\Z")


def test_a_device_id_is_base32_of_the_sha256_of_the_public_key_grouped_by_four() -> None:
    key = new_key()
    raw = public_bytes(key)
    expected = base64.b32encode(hashlib.sha256(raw).digest()).decode().rstrip("=")
    printed = device_id(key)
    assert PRINTED.match(printed)
    assert printed.replace("-", "") == expected
    assert device_id(key.public_key()) == device_id(raw) == printed


def test_a_known_key_has_a_known_id() -> None:
    # RFC 8032 test 1's public key.
    raw = bytes.fromhex("d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a")
    digest = hashlib.sha256(raw).digest()
    plain = base64.b32encode(digest).decode().rstrip("=")
    assert device_id(raw) == "-".join(plain[i : i + 4] for i in range(0, 52, 4))


@pytest.mark.parametrize(
    ("typed", "ok"),
    [
        ("as printed", True),
        ("lower case", True),
        ("no dashes", True),
        ("spaces instead", True),
        ("one short", False),
        ("one long", False),
        ("not base32 (1)", False),
        ("empty", False),
    ],
)
def test_parse_device_id_takes_what_a_person_types(typed: str, ok: bool) -> None:
    printed = device_id(new_key())
    plain = printed.replace("-", "")
    text = {
        "as printed": printed,
        "lower case": printed.lower(),
        "no dashes": plain,
        "spaces instead": printed.replace("-", " "),
        "one short": plain[:-1],
        "one long": plain + "A",
        "not base32 (1)": "1" + plain[1:],
        "empty": "",
    }[typed]
    assert parse_device_id(text) == (printed if ok else None)


@pytest.mark.parametrize(
    ("prefix", "matches"),
    [("", False), ("first4", True), ("first6-nodash", True), ("lower", True), ("other", False)],
)
def test_id_prefixes_compare_without_dashes(prefix: str, matches: bool) -> None:
    printed = device_id(new_key())
    plain = printed.replace("-", "")
    other = "A" if plain[0] != "A" else "B"
    typed = {
        "": "",
        "first4": printed[:4],
        "first6-nodash": plain[:6],
        "lower": printed[:9].lower(),
        "other": other + plain[1:6],
    }[prefix]
    assert id_matches_prefix(printed, typed) is matches


def test_keys_round_trip_as_32_raw_bytes_and_damage_fails_closed_naming_the_key() -> None:
    key = new_key()
    raw = key_bytes(key)
    assert len(raw) == 32
    assert public_bytes(key_from_bytes(raw, name="device-key")) == public_bytes(key)
    with pytest.raises(CredentialStoreError) as caught:
        key_from_bytes(raw[:31], name="device-key")
    assert caught.value.key == "device-key"
    assert raw.hex() not in str(caught.value)


@pytest.mark.parametrize("raw", [b"", b"\x00" * 31, b"\x00" * 33])
def test_a_public_key_of_the_wrong_size_is_malformed(raw: bytes) -> None:
    with pytest.raises(Malformed):
        public_from_bytes(raw)
