"""Device ids as printed and typed, without the keys they are made from.

A device id is the base32 (RFC 4648, no padding) of the SHA-256 of a device's raw public key:
52 characters, printed in 13 groups of 4 joined by ``-`` (``ABCD-EFGH-...``), the one form
every listing, folder name and status line uses. Reading and comparing ids needs no key, so
this module stands apart from ``_identity`` (which makes ids from Ed25519 keys): a host whose
profile has no mesh reads its mesh folder through ``_state`` without loading ``cryptography``
(about 8 MB of every such host).
"""

from __future__ import annotations

import base64
import re
from typing import NewType

__all__ = [
    "DEVICE_ID_LENGTH",
    "DeviceId",
    "grouped_id",
    "id_matches_prefix",
    "parse_device_id",
]

DeviceId = NewType("DeviceId", str)
"""A device id in its one printed form: 13 groups of 4 base32 characters joined by ``-``."""

DEVICE_ID_LENGTH = 52
"""Characters of a device id without its dashes (base32 of 32 bytes, unpadded)."""

_GROUP = 4
_BASE32 = re.compile(r"[A-Z2-7]+\Z")
_TYPED_NOISE = re.compile(r"[\s-]+")


def _grouped(plain: str) -> DeviceId:
    return DeviceId("-".join(plain[i : i + _GROUP] for i in range(0, len(plain), _GROUP)))


def grouped_id(digest: bytes) -> DeviceId:
    """The printed id of a public key's SHA-256 ``digest``."""
    return _grouped(base64.b32encode(digest).decode("ascii").rstrip("="))


def _plain(text: str) -> str:
    return _TYPED_NOISE.sub("", text).upper()


def parse_device_id(text: str) -> DeviceId | None:
    """``text`` as a device id in its printed form, ``None`` when it is not a whole id."""
    plain = _plain(text)
    if len(plain) != DEVICE_ID_LENGTH or not _BASE32.match(plain):
        return None
    return _grouped(plain)


def id_matches_prefix(device: DeviceId, prefix: str) -> bool:
    """Whether ``prefix`` (as typed: any case, dashes or not) begins ``device``'s id."""
    typed = _plain(prefix)
    return bool(typed) and _plain(device).startswith(typed)
