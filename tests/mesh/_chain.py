"""A user's keys for the mesh tests: root, signing key and devices, with their certificates."""

from __future__ import annotations

from dataclasses import dataclass, field

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from robota.mesh import (
    Certificate,
    DeviceId,
    Revocations,
    Roster,
    SigningRevocation,
    issue_certificate,
    issue_revocations,
    issue_roster,
    new_key,
    public_bytes,
)

NOW = 1_800_000_000
LIFETIME = 86_400


@dataclass
class Chain:
    root: Ed25519PrivateKey = field(default_factory=new_key)
    signing: Ed25519PrivateKey = field(default_factory=new_key)
    devices: list[Ed25519PrivateKey] = field(default_factory=lambda: [new_key() for _ in range(3)])

    @property
    def root_public(self) -> bytes:
        return public_bytes(self.root)

    @property
    def signing_cert(self) -> Certificate:
        return issue_certificate(
            self.root, "signing", public_bytes(self.signing), issued_at=NOW - 10
        )

    def device_cert(self, index: int, name: str = "") -> Certificate:
        return issue_certificate(
            self.signing,
            "device",
            public_bytes(self.devices[index]),
            name=name or f"device-{index}",
            issued_at=NOW - 5,
        )

    def roster(self, seq: int = 1, *, issued_at: int = NOW, lifetime: int = LIFETIME) -> Roster:
        certs = [self.device_cert(i) for i in range(len(self.devices))]
        return issue_roster(
            self.signing, self.signing_cert, certs, seq=seq, issued_at=issued_at, lifetime=lifetime
        )

    def revocations(
        self,
        revoked: tuple[DeviceId, ...] = (),
        signing_keys: tuple[SigningRevocation, ...] = (),
        *,
        seq: int = 1,
        issued_at: int = NOW,
        lifetime: int = LIFETIME,
    ) -> Revocations:
        return issue_revocations(
            self.signing,
            self.signing_cert,
            revoked,
            signing_keys,
            seq=seq,
            issued_at=issued_at,
            lifetime=lifetime,
        )
