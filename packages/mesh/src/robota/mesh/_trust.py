"""What a device's links trust right now: its key, the pinned root, the current lists and the
link certificates it knows; newer lists adopted only once verified.

The links' shell reads it (``trusted`` for a TLS context's anchors, ``admits`` after a
handshake) and feeds it what gossip brings (``adopt``, ``learn``). Persisting what it adopts is
the identity's store (the high-water marks, ``robota.core.store``); here ``marks`` only rise, so
a list older than one seen is refused as ``rolled-back`` even before it is stored. A host's
links give it their ``files``: an adopted list is then ``adopt_list``'s (verified and written
in one place) and the raised marks go to ``adopted``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from ._actions import Lists, adopt_list, newer_list
from ._errors import Refused
from ._identity import DeviceId, device_id
from ._linkcert import KnownCertificates, link_certificate
from ._lists import Marks, Revocations, Roster, admit
from ._state import MeshFiles

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
    files: MeshFiles | None = field(default=None, repr=False)
    """Where an adopted list is written (``adopt_list``); ``None``: kept in memory only."""
    adopted: Callable[[Marks], None] | None = field(default=None, repr=False)
    """Told the raised marks once a list was adopted (the host keeps them in its store)."""

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
        ``Refused`` with its reason otherwise. With ``files`` (a host's links) it is
        ``adopt_list``'s to verify and write; ``adopted`` is told the marks it raised to."""
        taken: Roster | Revocations | None
        if self.files is not None:
            result = adopt_list(self.files, kind, blob, now=now, marks=self.marks)
            taken = result.accepted if result is not None else None
        else:
            lists = Lists(self.roster, self.revocations)
            taken = newer_list(kind, blob, root=self.root, lists=lists, now=now, marks=self.marks)
        if taken is None:
            return "not-newer"
        if isinstance(taken, Roster):
            self.roster, self.marks = taken, Marks(taken.seq, self.marks.revocations)
        else:
            self.revocations, self.marks = taken, Marks(self.marks.roster, taken.seq)
        if self.adopted is not None:
            self.adopted(self.marks)
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
