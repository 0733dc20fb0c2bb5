"""The roster and the revocation list: signed, numbered, short-lived, and checked in order.

Both lists are issued by the signing key and carry a sequence number, ``issuedAt`` and
``expiresAt`` (``mesh.listLifetimeSeconds``, at least 60). The roster holds the device
certificates of the user's devices (at most ``MAX_DEVICES``); the revocation list holds the
ids of revoked devices and the root's statements that revoke signing keys (recovery issues
one, ``_certs.revoke_signing_key``), so those travel wherever the list goes.

On the wire a list is ``pack(LIST, signing certificate, signed body)``. Verification
(``verify_roster``, ``verify_revocations``) goes in this order, and reads a field of the body
only after the signature over it holds:

1. the outer framing (``malformed``);
2. the signing key's certificate, against the pinned root (``signature-invalid``);
3. the signing key is not revoked by the root (``signing-key-revoked``);
4. the body's signature by that signing key (``signature-invalid``);
5. the body's fields, each device certificate signed by the same key (``malformed``,
   ``signature-invalid``);
6. the sequence is not below the highest one this device has seen (``rolled-back``);
7. the list has not expired (``expired``).

``admit`` then decides a device by the current lists (``revoked``, ``not-in-roster``).
The high-water marks are the caller's to keep (the store; see ``Marks``). A refusal is a
``Refused`` whose ``reason`` is one of the closed set in ``_errors.REASONS``.

When to reissue (``reissue_due``: half the lifetime has passed) and whether a device's lists
have lapsed (``lapsed``) are pure too. Nothing here reads a clock: ``now`` is passed in.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from ._certs import (
    Certificate,
    SigningRevocation,
    sign,
    verify_certificate,
    verify_signed,
    verify_signing_revocation,
)
from ._codec import as_int, as_text, pack, unpack
from ._errors import Malformed, Refused
from ._identity import DeviceId, parse_device_id, public_bytes

__all__ = [
    "MAX_DEVICES",
    "MIN_LIFETIME",
    "ListKind",
    "Marks",
    "Revocations",
    "Roster",
    "admit",
    "issue_revocations",
    "issue_roster",
    "lapsed",
    "reissue_due",
    "verify_revocations",
    "verify_roster",
]

MAX_DEVICES = 64
MIN_LIFETIME = 60
"""Seconds: the shortest lifetime a list may be issued with (``mesh.listLifetimeSeconds``)."""

ListKind = Literal["roster", "revocations"]

LIST = b"robota-mesh/1 list"
_BODY: dict[ListKind, bytes] = {
    "roster": b"robota-mesh/1 roster",
    "revocations": b"robota-mesh/1 revocations",
}
_REVOKED_DEVICES = b"revoked-devices"
_REVOKED_SIGNING = b"revoked-signing-keys"


@dataclass(frozen=True, slots=True)
class Roster:
    """A verified (or just issued) roster."""

    seq: int
    issued_at: int
    expires_at: int
    signer: bytes
    """The signing key that signed it (raw public)."""
    devices: tuple[Certificate, ...]
    blob: bytes

    def find(self, device: DeviceId) -> Certificate | None:
        return next((cert for cert in self.devices if cert.device == device), None)


@dataclass(frozen=True, slots=True)
class Revocations:
    """A verified (or just issued) revocation list."""

    seq: int
    issued_at: int
    expires_at: int
    signer: bytes
    devices: frozenset[DeviceId]
    signing_keys: tuple[SigningRevocation, ...]
    blob: bytes

    @property
    def revoked_signing_keys(self) -> frozenset[bytes]:
        return frozenset(statement.key for statement in self.signing_keys)


@dataclass(frozen=True, slots=True)
class Marks:
    """The highest sequence of each list this device has accepted (kept in its store)."""

    roster: int = 0
    revocations: int = 0

    def of(self, kind: ListKind) -> int:
        return self.roster if kind == "roster" else self.revocations


def _check_lifetime(issued_at: int, lifetime: int) -> int:
    if lifetime < MIN_LIFETIME:
        raise ValueError(f"a list lives at least {MIN_LIFETIME} seconds")
    return issued_at + lifetime


def _envelope(key: Ed25519PrivateKey, signing_cert: Certificate, body: bytes) -> bytes:
    if signing_cert.subject != public_bytes(key):
        raise ValueError("the signing certificate is not the signing key's")
    return pack(LIST, signing_cert.blob, sign(key, body))


def issue_roster(
    key: Ed25519PrivateKey,
    signing_cert: Certificate,
    devices: Sequence[Certificate],
    *,
    seq: int,
    issued_at: int,
    lifetime: int,
) -> Roster:
    """The roster of ``devices`` (device certificates ``key`` issued), signed by ``key``."""
    if len(devices) > MAX_DEVICES:
        raise ValueError(f"a roster holds at most {MAX_DEVICES} devices")
    signer = public_bytes(key)
    if any(cert.role != "device" or cert.issuer != signer for cert in devices):
        raise ValueError("every roster entry is a device certificate of this signing key")
    expires_at = _check_lifetime(issued_at, lifetime)
    body = pack(_BODY["roster"], seq, issued_at, expires_at, *(cert.blob for cert in devices))
    blob = _envelope(key, signing_cert, body)
    return Roster(seq, issued_at, expires_at, signer, tuple(devices), blob)


def issue_revocations(
    key: Ed25519PrivateKey,
    signing_cert: Certificate,
    devices: Iterable[DeviceId],
    signing_keys: Sequence[SigningRevocation] = (),
    *,
    seq: int,
    issued_at: int,
    lifetime: int,
) -> Revocations:
    """The revocation list of ``devices`` and the root's ``signing_keys`` statements."""
    revoked = sorted(set(devices))
    expires_at = _check_lifetime(issued_at, lifetime)
    body = pack(
        _BODY["revocations"],
        seq,
        issued_at,
        expires_at,
        pack(_REVOKED_DEVICES, *revoked),
        pack(_REVOKED_SIGNING, *(statement.blob for statement in signing_keys)),
    )
    blob = _envelope(key, signing_cert, body)
    return Revocations(
        seq,
        issued_at,
        expires_at,
        public_bytes(key),
        frozenset(revoked),
        tuple(signing_keys),
        blob,
    )


def _open(
    blob: bytes, kind: ListKind, root: bytes, revoked_signing: Collection[bytes]
) -> tuple[bytes, list[bytes]]:
    """Steps 1-4: the signing key and the body's fields, once both signatures hold."""
    cert_blob, signed_body = unpack(LIST, blob, 2)
    signing_cert = verify_certificate(cert_blob, root, "signing")
    if signing_cert.subject in revoked_signing:
        raise Refused("signing-key-revoked", f"the {kind} is signed by a revoked signing key")
    body = verify_signed(signed_body, signing_cert.subject)
    fields = unpack(_BODY[kind], body)
    if len(fields) < 3:
        raise Malformed(f"a {kind} without its sequence and times")
    return signing_cert.subject, fields


def _current(
    kind: ListKind, seq: int, expires_at: int, *, now: int | None, high_water: int
) -> None:
    """Steps 6-7 (``now=None``: a list this device already accepted, read back to show or to
    build on, whose expiry is reported rather than refused)."""
    if seq < high_water:
        raise Refused("rolled-back", f"{kind} {seq} is older than {high_water}, already seen")
    if now is not None and now >= expires_at:
        raise Refused("expired", f"{kind} {seq} expired")


def verify_roster(
    blob: bytes,
    *,
    root: bytes,
    now: int | None,
    high_water: int = 0,
    revoked_signing: Collection[bytes] = (),
) -> Roster:
    """The roster in ``blob``, verified in the module's order; ``Refused`` otherwise."""
    signer, fields = _open(blob, "roster", root, revoked_signing)
    seq, issued_at, expires_at = (as_int(field) for field in fields[:3])
    entries = fields[3:]
    if len(entries) > MAX_DEVICES:
        raise Malformed(f"a roster of more than {MAX_DEVICES} devices")
    devices = tuple(verify_certificate(entry, signer, "device") for entry in entries)
    if len({cert.device for cert in devices}) != len(devices):
        raise Malformed("a roster that lists a device twice")
    _current("roster", seq, expires_at, now=now, high_water=high_water)
    return Roster(seq, issued_at, expires_at, signer, devices, blob)


def verify_revocations(
    blob: bytes,
    *,
    root: bytes,
    now: int | None,
    high_water: int = 0,
    revoked_signing: Collection[bytes] = (),
) -> Revocations:
    """The revocation list in ``blob``, verified in the module's order; ``Refused`` otherwise."""
    signer, fields = _open(blob, "revocations", root, revoked_signing)
    if len(fields) != 5:
        raise Malformed("a revocation list with the wrong number of fields")
    seq, issued_at, expires_at = (as_int(field) for field in fields[:3])
    devices: set[DeviceId] = set()
    for raw in unpack(_REVOKED_DEVICES, fields[3]):
        device = parse_device_id(as_text(raw, limit=80))
        if device is None or device != as_text(raw, limit=80):
            raise Malformed("a revoked device that is not a device id")
        devices.add(device)
    statements = tuple(
        verify_signing_revocation(raw, root) for raw in unpack(_REVOKED_SIGNING, fields[4])
    )
    if signer in {statement.key for statement in statements}:
        raise Refused("signing-key-revoked", "the revocation list revokes its own signing key")
    _current("revocations", seq, expires_at, now=now, high_water=high_water)
    return Revocations(seq, issued_at, expires_at, signer, frozenset(devices), statements, blob)


def admit(device: DeviceId, roster: Roster, revocations: Revocations) -> Certificate:
    """``device``'s certificate if the current lists admit it; ``Refused`` otherwise."""
    if device in revocations.devices:
        raise Refused("revoked", f"device {device} is revoked")
    cert = roster.find(device)
    if cert is None:
        raise Refused("not-in-roster", f"device {device} is not in the roster")
    return cert


def reissue_due(issued_at: int, expires_at: int, now: int) -> bool:
    """Whether a list issued at ``issued_at`` and expiring at ``expires_at`` is to be reissued
    now: half its lifetime has passed (so a lost reissue has the other half to be retried)."""
    return now >= issued_at + (expires_at - issued_at) // 2


def lapsed(expires_at: int, now: int) -> bool:
    """Whether a list has lapsed (nothing newer reached this device in time)."""
    return now >= expires_at
