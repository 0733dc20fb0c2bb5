"""What a device's links trust right now: its key, the pinned root, the current lists and the
link certificates it knows; newer lists adopted only once verified.

The links' shell reads it (``trusted`` for a TLS context's anchors, ``admits`` after a
handshake) and feeds it what gossip brings (``adopt``, ``learn``). Persisting what it adopts is
the identity's store (the high-water marks, ``robota.core.store``); here ``marks`` only rise, so
a list older than one seen is refused as ``rolled-back`` even before it is stored.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from ._errors import Refused
from ._identity import DeviceId, device_id
from ._linkcert import KnownCertificates, link_certificate
from ._lists import Marks, Revocations, Roster, admit, verify_revocations, verify_roster

__all__ = ["Adopted", "LinkTrust"]

Adopted = Literal["adopted", "not-newer"]


@dataclass
class LinkTrust:
    key: Ed25519PrivateKey = field(repr=False)
    name: str
    root: bytes
    """The pinned root public key."""
    roster: Roster
    revocations: Revocations
    known: KnownCertificates = field(default_factory=KnownCertificates)
    marks: Marks = field(default_factory=Marks)

    def __post_init__(self) -> None:
        self.known.add(self.certificate)
        self.marks = Marks(
            max(self.marks.roster, self.roster.seq),
            max(self.marks.revocations, self.revocations.seq),
        )

    @property
    def device(self) -> DeviceId:
        return device_id(self.key)

    @property
    def certificate(self) -> bytes:
        return link_certificate(self.key)

    def trusted(self) -> list[bytes]:
        """The link certificates a TLS context trusts now."""
        return self.known.trusted(self.roster, self.revocations)

    def admits(self, device: DeviceId) -> bool:
        try:
            admit(device, self.roster, self.revocations)
        except Refused:
            return False
        return True

    def adopt(self, kind: Literal["roster", "revocations"], blob: bytes, now: int) -> Adopted:
        """Verify ``blob`` (signature first, then rollback and expiry) and take it when newer;
        ``Refused`` with its reason otherwise."""
        revoked_signing = self.revocations.revoked_signing_keys
        if kind == "roster":
            roster = verify_roster(
                blob,
                root=self.root,
                now=now,
                high_water=self.marks.roster,
                revoked_signing=revoked_signing,
            )
            if roster.seq <= self.roster.seq:
                return "not-newer"
            self.roster, self.marks = roster, Marks(roster.seq, self.marks.revocations)
            return "adopted"
        revocations = verify_revocations(
            blob,
            root=self.root,
            now=now,
            high_water=self.marks.revocations,
            revoked_signing=revoked_signing,
        )
        if revocations.seq <= self.revocations.seq:
            return "not-newer"
        self.revocations, self.marks = revocations, Marks(self.marks.roster, revocations.seq)
        return "adopted"

    def learn(self, certs: tuple[bytes, ...]) -> list[DeviceId]:
        """Keep what are link certificates; the devices learned (what is none is skipped)."""
        learned = []
        for der in certs:
            try:
                learned.append(self.known.add(der))
            except Refused:
                continue
        return learned
