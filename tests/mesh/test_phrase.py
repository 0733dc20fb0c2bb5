"""The recovery phrase: BIP39 words and checksum (the mnemonic package), SLIP-0010 root key."""

from __future__ import annotations

import pytest
from mnemonic import Mnemonic

from robota.mesh import (
    PHRASE_WORDS,
    Malformed,
    canonical_phrase,
    new_phrase,
    public_bytes,
    root_key,
)
from robota.mesh._phrase import ROOT_PATH, slip10_ed25519

ZERO_PHRASE = " ".join(["abandon"] * 23 + ["art"])


def test_the_word_list_is_bip39_english() -> None:
    words = Mnemonic("english").wordlist
    assert len(words) == 2048
    assert words[0] == "abandon" and words[-1] == "zoo"
    assert len({word[:4] for word in words}) == 2048, "unique in their first four letters"


def test_bip39_vector_entropy_to_words_and_seed() -> None:
    # The reference vector (Trezor's vectors.json): 32 zero bytes, passphrase TREZOR.
    lister = Mnemonic("english")
    assert lister.to_mnemonic(bytes(32)) == ZERO_PHRASE
    assert lister.to_seed(ZERO_PHRASE, passphrase="TREZOR").hex() == (
        "bda85446c68413707090a52022edd26a1c9462295029f2e60cd7c4f2bbd30971"
        "70af7a4d73245cafa9c3cca8d561a7c3de6f5d4a10be8ed2a5e608d68f92fcc8"
    )


@pytest.mark.parametrize(
    ("path", "key", "chain"),
    [
        (
            (),
            "2b4be7f19ee27bbf30c667b642d5f4aa69fd169872f8fc3059c08ebae2eb19e7",
            "90046a93de5380a72b5e45010748567d5ea02bbf6522f979e05c0d8d8ca9fffb",
        ),
        (
            (0,),
            "68e0fe46dfb67e368c75379acec591dad19df3cde26e63b93a8e704f1dade7a3",
            "8b59aa11380b624e81507a27fedda59fea6d0b779a778918a2fd3590e16e9c69",
        ),
    ],
)
def test_slip10_ed25519_vector_1(path: tuple[int, ...], key: str, chain: str) -> None:
    seed = bytes.fromhex("000102030405060708090a0b0c0d0e0f")
    got_key, got_chain = slip10_ed25519(seed, path)
    assert (got_key.hex(), got_chain.hex()) == (key, chain)


def test_a_new_phrase_is_24_valid_words_and_gives_the_same_root_key_each_time() -> None:
    phrase = new_phrase()
    assert len(phrase.split()) == PHRASE_WORDS
    assert canonical_phrase(phrase) == phrase
    assert public_bytes(root_key(phrase)) == public_bytes(root_key(phrase))
    assert public_bytes(root_key(phrase)) != public_bytes(root_key(new_phrase()))
    assert ROOT_PATH == (7240, 0)


@pytest.mark.parametrize(
    ("typed", "problem"),
    [
        ("  " + ZERO_PHRASE.upper().replace(" ", "\n  ") + " ", None),
        (" ".join(word[:4] for word in ZERO_PHRASE.split()), None),
        (" ".join(["abandon"] * 23), "23 words"),
        (" ".join(["abandon"] * 24), "do not add up"),
        (ZERO_PHRASE.replace("art", "artx"), "word 24 is not"),
        (ZERO_PHRASE.replace("abandon", "abandonn", 1), "word 1 is not"),
        ("", "0 words"),
    ],
)
def test_a_typed_phrase_is_read_in_any_case_and_by_four_letters_or_refused(
    typed: str, problem: str | None
) -> None:
    if problem is None:
        assert canonical_phrase(typed) == ZERO_PHRASE
        return
    with pytest.raises(Malformed) as caught:
        canonical_phrase(typed)
    assert problem in str(caught.value)
    assert "abandon" not in str(caught.value), "a typed word is a secret: never quoted"
