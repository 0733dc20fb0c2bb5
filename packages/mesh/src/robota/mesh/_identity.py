"""Device keys and device ids: who a device is, in the one form every listing prints.

A device's key is Ed25519 (``cryptography``). Its id is the base32 (RFC 4648, no padding) of
the SHA-256 of its raw 32-byte public key: 52 characters, printed in 13 groups of 4 joined by
``-`` so it can be read aloud (``ABCD-EFGH-...``). That grouped form is the device id
everywhere (status, devices, links, offers, folder names); ``parse_device_id`` takes any case,
with or without the dashes and spaces a person types, and gives it back in that form. A
prefix of an id (``DEVICE`` on a command line) is compared without dashes
(``id_matches_prefix``).

Keys travel between the credential store and memory as their 32 raw bytes (``key_bytes``,
``key_from_bytes``); a stored value that is not 32 bytes is damaged, and damage fails closed
(``CredentialStoreError`` naming the key, never replaced here).

The printed form, its parsing and prefixes live in ``_device_id`` (no ``cryptography``); they
are named here too, where the rest of the package has always found them.
"""

from __future__ import annotations

import hashlib

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from ._device_id import DEVICE_ID_LENGTH, DeviceId, grouped_id, id_matches_prefix, parse_device_id
from ._errors import CredentialStoreError, Malformed

__all__ = [
    "DEVICE_ID_LENGTH",
    "DeviceId",
    "device_id",
    "id_matches_prefix",
    "key_bytes",
    "key_from_bytes",
    "new_key",
    "parse_device_id",
    "public_bytes",
    "public_from_bytes",
]


def new_key() -> Ed25519PrivateKey:
    """A fresh Ed25519 key from the operating system's randomness."""
    return Ed25519PrivateKey.generate()


def key_bytes(key: Ed25519PrivateKey) -> bytes:
    """The key's 32 raw private bytes, as the credential store keeps them."""
    return key.private_bytes(
        serialization.Encoding.Raw, serialization.PrivateFormat.Raw, serialization.NoEncryption()
    )


def key_from_bytes(data: bytes, *, name: str) -> Ed25519PrivateKey:
    """The key stored under ``name``; ``CredentialStoreError`` (naming it) when damaged."""
    if len(data) != 32:
        raise CredentialStoreError(name, "the stored key is damaged (not a 32-byte key)")
    return Ed25519PrivateKey.from_private_bytes(data)


def public_bytes(key: Ed25519PrivateKey | Ed25519PublicKey) -> bytes:
    """The raw 32-byte public key (of a private key: its public half)."""
    public = key.public_key() if isinstance(key, Ed25519PrivateKey) else key
    return public.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)


def public_from_bytes(data: bytes) -> Ed25519PublicKey:
    """A public key from its 32 raw bytes; ``Malformed`` otherwise."""
    if len(data) != 32:
        raise Malformed("a public key that is not 32 bytes")
    try:
        return Ed25519PublicKey.from_public_bytes(data)
    except ValueError:
        raise Malformed("not an Ed25519 public key") from None


def device_id(key: Ed25519PrivateKey | Ed25519PublicKey | bytes) -> DeviceId:
    """The id of the device whose (public) key this is, in its printed form."""
    raw = key if isinstance(key, bytes) else public_bytes(key)
    if len(raw) != 32:
        raise Malformed("a public key that is not 32 bytes")
    return grouped_id(hashlib.sha256(raw).digest())
