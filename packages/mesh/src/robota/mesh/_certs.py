"""Certificates: the root certifies the signing key, the signing key certifies device keys.

A certificate is a signed statement "this public key is the user's ``signing`` key" or "this
public key is the user's device called NAME": ``pack(CERT, role, subject, name, issuedAt,
issuer)`` (see ``_codec``) signed with Ed25519 by the issuer, and carried as ``pack(SIGNED,
body, signature)``. The chain is two links long: root -> signing key -> device key. A device
pins the root public key when it pairs; everything else it learns is checked against that.

Certificates do not expire (a dormant device must not need pairing again); what expires is
the roster that lists them (``_lists``), and a signing key that is lost is revoked by a
statement of the root's (``revoke_signing_key``), which recovery issues.

``verify_certificate`` checks the signature with the issuer the caller expects *before*
reading any field of the body; it raises ``Refused`` with a reason of the closed set
(``signature-invalid``, ``malformed``). Pure apart from Ed25519 itself.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from ._codec import as_int, as_text, pack, unpack
from ._errors import Malformed, Refused
from ._identity import DeviceId, device_id, public_bytes, public_from_bytes

__all__ = [
    "MAX_NAME_BYTES",
    "Certificate",
    "Role",
    "SigningRevocation",
    "issue_certificate",
    "revoke_signing_key",
    "sign",
    "verify_certificate",
    "verify_signed",
    "verify_signing_revocation",
]

Role = Literal["signing", "device"]

MAX_NAME_BYTES = 64
"""A device name's longest UTF-8 form."""

SIGNED = b"robota-mesh/1 signed"
CERT = b"robota-mesh/1 cert"
SIGNING_REVOCATION = b"robota-mesh/1 signing-key-revoked"


def sign(key: Ed25519PrivateKey, body: bytes) -> bytes:
    """``body`` and its signature by ``key``, as one signed object."""
    return pack(SIGNED, body, key.sign(body))


def verify_signed(blob: bytes, issuer: bytes) -> bytes:
    """The body of ``blob`` once its signature by ``issuer`` (raw public key) holds; only the
    outer framing is read before that. ``Refused`` otherwise."""
    body, signature = unpack(SIGNED, blob, 2)
    try:
        public_from_bytes(issuer).verify(signature, body)
    except InvalidSignature:
        raise Refused("signature-invalid", "not signed by the expected key") from None
    return body


@dataclass(frozen=True, slots=True)
class Certificate:
    """A verified certificate (only ``verify_certificate`` and ``issue_certificate`` make one)."""

    role: Role
    subject: bytes
    """The certified raw public key."""
    name: str
    """The device's name (empty for a signing key)."""
    issued_at: int
    """Seconds since the epoch."""
    issuer: bytes
    """The raw public key that signed it."""
    blob: bytes
    """The signed bytes, as stored and sent."""

    @property
    def device(self) -> DeviceId:
        """The subject's id (for a device certificate: the device id)."""
        return device_id(self.subject)


def issue_certificate(
    issuer: Ed25519PrivateKey, role: Role, subject: bytes, *, name: str = "", issued_at: int
) -> Certificate:
    """``issuer``'s certificate for ``subject`` (a raw public key) in ``role``."""
    public_from_bytes(subject)
    if len(name.encode("utf-8")) > MAX_NAME_BYTES or any(ord(ch) < 32 for ch in name):
        raise ValueError("a device name is at most 64 bytes of text without control characters")
    issuer_public = public_bytes(issuer)
    body = pack(CERT, role, subject, name, issued_at, issuer_public)
    return Certificate(role, subject, name, issued_at, issuer_public, sign(issuer, body))


def verify_certificate(blob: bytes, issuer: bytes, role: Role) -> Certificate:
    """The certificate in ``blob`` if ``issuer`` signed it for ``role``; ``Refused`` otherwise."""
    body = verify_signed(blob, issuer)
    raw_role, subject, raw_name, raw_issued, raw_issuer = unpack(CERT, body, 5)
    if raw_role.decode("ascii", "replace") != role:
        raise Malformed(f"a certificate that is not for a {role} key")
    if raw_issuer != issuer:
        raise Malformed("a certificate that names another issuer than the one that signed it")
    public_from_bytes(subject)
    name = as_text(raw_name, limit=MAX_NAME_BYTES)
    return Certificate(role, subject, name, as_int(raw_issued), issuer, blob)


@dataclass(frozen=True, slots=True)
class SigningRevocation:
    """The root's statement that a signing key is revoked (recovery issues it; no expiry)."""

    key: bytes
    """The revoked signing key (raw public)."""
    issued_at: int
    blob: bytes


def revoke_signing_key(root: Ed25519PrivateKey, key: bytes, *, issued_at: int) -> SigningRevocation:
    """The root's signed statement that ``key`` signs nothing any more."""
    public_from_bytes(key)
    body = pack(SIGNING_REVOCATION, key, issued_at)
    return SigningRevocation(key, issued_at, sign(root, body))


def verify_signing_revocation(blob: bytes, root: bytes) -> SigningRevocation:
    """The statement in ``blob`` if the root signed it; ``Refused`` otherwise."""
    body = verify_signed(blob, root)
    key, raw_issued = unpack(SIGNING_REVOCATION, body, 2)
    public_from_bytes(key)
    return SigningRevocation(key, as_int(raw_issued), blob)
