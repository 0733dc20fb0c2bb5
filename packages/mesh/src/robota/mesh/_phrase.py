"""The recovery phrase: 24 BIP39 words that are the user's root key, and never stored.

``new_phrase`` draws 256 bits from the operating system and spells them as 24 words of the
English BIP39 list (the ``mnemonic`` package: the list and its checksum word). ``root_key``
turns a phrase back into the root key: the BIP39 seed (PBKDF2-SHA512, empty passphrase), then
SLIP-0010's Ed25519 derivation along the hardened path ``m/7240'/0'`` (7240: robota's own
purpose number), so the same 24 words give the same root key on any device, and the key is
recomputed whenever it is needed, never kept.

``canonical_phrase`` reads what a person typed: any case and spacing, each word in full or by
its first four letters (BIP39 words are unique in their first four); it refuses a wrong count,
a word not on the list or a failed checksum, and its message names the word's position, never
the word (a typed phrase is a secret even when it is wrong).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import struct
from functools import cache
from typing import TYPE_CHECKING

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from ._errors import Malformed

if TYPE_CHECKING:
    from mnemonic import Mnemonic

__all__ = [
    "PHRASE_WORDS",
    "ROOT_PATH",
    "canonical_phrase",
    "new_phrase",
    "root_key",
    "slip10_ed25519",
]

PHRASE_WORDS = 24
ROOT_PATH: tuple[int, ...] = (7240, 0)
"""SLIP-0010 path of the root key (each step hardened): ``m/7240'/0'``."""

_HARDENED = 0x80000000


@cache
def _mnemonic() -> Mnemonic:
    from mnemonic import Mnemonic  # noqa: PLC0415 (only init and recover need the word list)

    return Mnemonic("english")


def _words() -> list[str]:
    return list(_mnemonic().wordlist)


def new_phrase() -> str:
    """24 fresh words (256 bits of the operating system's randomness plus the checksum)."""
    return str(_mnemonic().to_mnemonic(secrets.token_bytes(32)))


def canonical_phrase(typed: str) -> str:
    """The phrase as 24 lower-case full words separated by one space; ``Malformed`` (naming
    a position, never a word) when it is not a valid phrase."""
    typed_words = typed.lower().split()
    if len(typed_words) != PHRASE_WORDS:
        raise Malformed(f"{len(typed_words)} words, expected {PHRASE_WORDS}")
    words = _words()
    by_prefix = {word[:4]: word for word in words}
    known = set(words)
    full: list[str] = []
    for position, word in enumerate(typed_words, start=1):
        if word in known:
            full.append(word)
        elif len(word) == 4 and word in by_prefix:
            full.append(by_prefix[word])
        else:
            raise Malformed(f"word {position} is not a recovery-phrase word")
    phrase = " ".join(full)
    if not _mnemonic().check(phrase):
        raise Malformed("the words do not add up (a word is wrong or out of order)")
    return phrase


def slip10_ed25519(seed: bytes, path: tuple[int, ...]) -> tuple[bytes, bytes]:
    """SLIP-0010 for Ed25519: the (private key, chain code) at ``path`` (every step hardened)."""
    digest = hmac.new(b"ed25519 seed", seed, hashlib.sha512).digest()
    key, chain = digest[:32], digest[32:]
    for index in path:
        data = b"\x00" + key + struct.pack(">I", index | _HARDENED)
        digest = hmac.new(chain, data, hashlib.sha512).digest()
        key, chain = digest[:32], digest[32:]
    return key, chain


def root_key(phrase: str) -> Ed25519PrivateKey:
    """The root key the (canonical) phrase stands for."""
    seed = _mnemonic().to_seed(canonical_phrase(phrase), passphrase="")
    key, _chain = slip10_ed25519(seed, ROOT_PATH)
    return Ed25519PrivateKey.from_private_bytes(key)
