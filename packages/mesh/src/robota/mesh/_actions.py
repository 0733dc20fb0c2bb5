"""What the mesh commands do to a device's identity: init, join, adopt, recover, revoke, reissue.

Each action reads and writes ``MeshFiles`` (public parts) and a ``SecretStore`` (keys), takes
the time and the lists' lifetime from its caller and returns the lists it issued or accepted;
raising the store's high-water marks to them is the caller's (a command's ``write_once``, the
host's writer), as is anything shown to the operator. Secrets are written before the public
files and ``identity.json`` last, so a crash midway leaves a device that has not yet done the
action, never one that half did.

* ``init_first``: the first device: root key from the phrase, a new signing key certified by
  it, a new device key certified by the signing key; roster and revocation list number 1.
* ``init_join``: a device that will join: only its device key (pairing certifies it).
* ``enrol``: the signing device's side of pairing: the joiner's key certified under its name,
  the roster issued again with it.
* ``adopt_pairing``: what pairing hands a joining device (the root key it pins from then on,
  its device certificate, the lists), verified before anything is written.
* ``recover``: the phrase again: a new signing key certified by the root, the old one revoked
  by the root, every device of the roster certified again by the new key.
* ``revoke``: a device off the roster and onto the revocation list.
* ``reissue``: both lists again with the next numbers, on a signing device (the host calls it
  when ``reissue_due``).
* ``open_secrets``: the credential store as ``_credentials.open_store`` chooses it; when it
  dropped the keys of the file for the keychain, this device gets a new key (a new id, so it
  must pair again) and gives up the signing key (``recover`` certifies a new one).
* ``adopt_list``: a list a peer sent over a link: verified, and written when it is newer than
  this device's, with the devices it newly revokes (their links close at once).
* ``current_lists``: this device's lists as accepted, verified again (signature first; their
  expiry reported, not refused).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from ._certs import (
    Certificate,
    SigningRevocation,
    issue_certificate,
    revoke_signing_key,
    verify_certificate,
)
from ._credentials import (
    PROBE_TIMEOUT,
    OpenedStore,
    SecretStore,
    discover_keychain,
    open_store,
)
from ._errors import CredentialStoreError, MeshError, Refused
from ._identity import DeviceId, device_id, key_bytes, key_from_bytes, new_key, public_bytes
from ._lists import (
    ListKind,
    Marks,
    Revocations,
    Roster,
    issue_revocations,
    issue_roster,
    verify_revocations,
    verify_roster,
)
from ._phrase import root_key
from ._state import Identity, MeshFiles

if TYPE_CHECKING:
    from keyring.backend import KeyringBackend

__all__ = [
    "Adopted",
    "AlreadyInitialized",
    "Lists",
    "adopt_list",
    "adopt_pairing",
    "current_lists",
    "device_key",
    "enrol",
    "init_first",
    "init_join",
    "open_secrets",
    "recover",
    "reissue",
    "revoke",
    "signing_key",
]

DEVICE_KEY = "device-key"
SIGNING_KEY = "signing-key"


class AlreadyInitialized(MeshError):
    """``robota mesh init`` on a device that already has its identity."""


@dataclass(frozen=True, slots=True)
class Lists:
    roster: Roster
    revocations: Revocations


def _key(store: SecretStore, name: str) -> Ed25519PrivateKey:
    raw = store.get(name)
    if raw is None:
        raise CredentialStoreError(name, "it is not in the credential store")
    return key_from_bytes(raw, name=name)


def device_key(store: SecretStore, identity: Identity) -> Ed25519PrivateKey:
    """This device's key; fails closed when missing, damaged or not this device's."""
    key = _key(store, DEVICE_KEY)
    if device_id(key) != identity.device:
        raise CredentialStoreError(DEVICE_KEY, "the stored key is not this device's")
    return key


def signing_key(store: SecretStore, identity: Identity) -> tuple[Ed25519PrivateKey, Certificate]:
    """The signing key and its certificate, on a device that holds it."""
    if not identity.signing or identity.signing_cert is None or identity.root is None:
        raise MeshError("this device does not hold the signing key (run it on a signing device)")
    key = _key(store, SIGNING_KEY)
    cert = verify_certificate(identity.signing_cert, identity.root, "signing")
    if cert.subject != public_bytes(key):
        raise CredentialStoreError(SIGNING_KEY, "the stored key is not the certified one")
    return key, cert


def _fresh(files: MeshFiles) -> None:
    if files.identity() is not None:
        raise AlreadyInitialized("this device already has its mesh identity (robota mesh status)")


def _publish(files: MeshFiles, lists: Lists, identity: Identity) -> None:
    files.save_list("roster", lists.roster.blob)
    files.save_list("revocations", lists.revocations.blob)
    files.remember_names({cert.device: cert.name for cert in lists.roster.devices})
    files.save_identity(identity)


def init_first(
    files: MeshFiles, store: SecretStore, *, phrase: str, name: str, now: int, lifetime: int
) -> tuple[Identity, Lists]:
    """The first device of a new mesh (see the module docstring)."""
    _fresh(files)
    root = root_key(phrase)
    signing, device = new_key(), new_key()
    signing_cert = issue_certificate(root, "signing", public_bytes(signing), issued_at=now)
    device_cert = issue_certificate(
        signing, "device", public_bytes(device), name=name, issued_at=now
    )
    lists = Lists(
        issue_roster(signing, signing_cert, [device_cert], seq=1, issued_at=now, lifetime=lifetime),
        issue_revocations(signing, signing_cert, (), seq=1, issued_at=now, lifetime=lifetime),
    )
    store.put(SIGNING_KEY, key_bytes(signing))
    store.put(DEVICE_KEY, key_bytes(device))
    identity = Identity(
        device=device_id(device),
        name=name,
        root=public_bytes(root),
        device_cert=device_cert.blob,
        signing_cert=signing_cert.blob,
        signing=True,
    )
    _publish(files, lists, identity)
    return identity, lists


def open_secrets(
    files: MeshFiles,
    *,
    keychain: Callable[[], KeyringBackend | None] = discover_keychain,
    timeout: float = PROBE_TIMEOUT,
    first_use: bool = True,
) -> OpenedStore:
    """The profile's secret store (``open_store``; the host passes ``first_use=False``: it
    never makes the first choice), with new keys made at once when the keys that sat in the
    file were dropped for the keychain."""
    opened = open_store(files.dir, keychain=keychain, timeout=timeout, first_use=first_use)
    identity = files.identity()
    if opened.replaced and identity is not None:
        device = new_key()
        opened.store.put(DEVICE_KEY, key_bytes(device))
        files.save_identity(
            identity.with_(device=device_id(device), device_cert=None, signing=False)
        )
    return opened


def init_join(files: MeshFiles, store: SecretStore, *, name: str) -> Identity:
    """A device that will join a mesh: its device key only."""
    _fresh(files)
    device = new_key()
    store.put(DEVICE_KEY, key_bytes(device))
    identity = Identity(device=device_id(device), name=name)
    files.save_identity(identity)
    return identity


def _verified(
    roster_blob: bytes, revocations_blob: bytes, root: bytes, *, now: int | None, marks: Marks
) -> Lists:
    revocations = verify_revocations(
        revocations_blob, root=root, now=now, high_water=marks.revocations
    )
    roster = verify_roster(
        roster_blob,
        root=root,
        now=now,
        high_water=marks.roster,
        revoked_signing=revocations.revoked_signing_keys,
    )
    return Lists(roster, revocations)


def current_lists(files: MeshFiles, identity: Identity, marks: Marks) -> Lists | None:
    """This device's accepted lists, verified again; ``None`` before it has any."""
    roster, revocations = files.list_blob("roster"), files.list_blob("revocations")
    if identity.root is None or roster is None or revocations is None:
        return None
    return _verified(roster, revocations, identity.root, now=None, marks=marks)


@dataclass(frozen=True, slots=True)
class Adopted:
    """A newer list this device took from a peer (raise its mark to ``seq``)."""

    kind: ListKind
    seq: int
    newly_revoked: frozenset[DeviceId]
    """Devices the list revokes that this device's list did not: close their links now."""


def adopt_list(
    files: MeshFiles,
    kind: ListKind,
    blob: bytes,
    *,
    now: int,
    marks: Marks,
) -> Adopted | None:
    """A list a peer sent: ``Refused`` (with its reason) when it does not verify against the
    pinned root, is below the marks or has expired; ``None`` when it is not newer than this
    device's; else it is written and described."""
    identity = _identity(files)
    if identity.root is None:
        raise MeshError("this device has not paired yet: it has no root to check lists with")
    lists = _need_lists(files, identity, marks)
    if kind == "roster":
        roster = verify_roster(
            blob,
            root=identity.root,
            now=now,
            high_water=marks.roster,
            revoked_signing=lists.revocations.revoked_signing_keys,
        )
        if roster.seq <= lists.roster.seq:
            return None
        files.save_list("roster", blob)
        files.remember_names({cert.device: cert.name for cert in roster.devices})
        return Adopted("roster", roster.seq, frozenset())
    revocations = verify_revocations(
        blob,
        root=identity.root,
        now=now,
        high_water=marks.revocations,
        revoked_signing=lists.revocations.revoked_signing_keys,
    )
    if revocations.seq <= lists.revocations.seq:
        return None
    files.save_list("revocations", blob)
    return Adopted("revocations", revocations.seq, revocations.devices - lists.revocations.devices)


def adopt_pairing(
    files: MeshFiles,
    store: SecretStore,
    *,
    root: bytes,
    device_cert: bytes,
    roster: bytes,
    revocations: bytes,
    now: int,
    marks: Marks,
) -> tuple[Identity, Lists]:
    """A joining device takes what pairing handed it: every piece verified first, against the
    root it pins from now on, and its own key must be the certified one."""
    identity = files.identity()
    if identity is None:
        raise MeshError("this device has no mesh identity yet (robota mesh init --join)")
    if identity.root is not None and identity.root != root:
        raise Refused("signature-invalid", "another root than the one this device pinned")
    key = device_key(store, identity)
    lists = _verified(roster, revocations, root, now=now, marks=marks)
    cert = verify_certificate(device_cert, lists.roster.signer, "device")
    if cert.subject != public_bytes(key):
        raise Refused("malformed", "a device certificate for another key than this device's")
    if cert.device in lists.revocations.devices:
        raise Refused("revoked", "this device is revoked")
    if lists.roster.find(cert.device) is None:
        raise Refused("not-in-roster", "the roster handed over does not list this device")
    identity = identity.with_(root=root, device_cert=device_cert, name=cert.name or identity.name)
    _publish(files, lists, identity)
    return identity, lists


def _issue(
    key: Ed25519PrivateKey,
    cert: Certificate,
    devices: list[Certificate],
    revoked: frozenset[DeviceId],
    lists: Lists,
    *,
    now: int,
    lifetime: int,
    marks: Marks,
    signing_revocations: tuple[SigningRevocation, ...] = (),
) -> Lists:
    roster_seq = max(lists.roster.seq, marks.roster) + 1
    revocations_seq = max(lists.revocations.seq, marks.revocations) + 1
    statements = (*lists.revocations.signing_keys, *signing_revocations)
    return Lists(
        issue_roster(key, cert, devices, seq=roster_seq, issued_at=now, lifetime=lifetime),
        issue_revocations(
            key,
            cert,
            revoked,
            statements,
            seq=revocations_seq,
            issued_at=now,
            lifetime=lifetime,
        ),
    )


def _identity(files: MeshFiles) -> Identity:
    identity = files.identity()
    if identity is None:
        raise MeshError("this device has no mesh identity (robota mesh init)")
    return identity


def _need_lists(files: MeshFiles, identity: Identity, marks: Marks) -> Lists:
    lists = current_lists(files, identity, marks)
    if lists is None:
        raise MeshError("this device has no roster yet (pair it first)")
    return lists


@dataclass(frozen=True, slots=True)
class _Signer:
    """A signing device's identity, key and current lists: what a reissue builds on."""

    identity: Identity
    key: Ed25519PrivateKey
    cert: Certificate
    lists: Lists

    @classmethod
    def open(cls, files: MeshFiles, store: SecretStore, marks: Marks) -> _Signer:
        identity = _identity(files)
        key, cert = signing_key(store, identity)
        return cls(identity, key, cert, _need_lists(files, identity, marks))

    def publish(
        self,
        files: MeshFiles,
        devices: list[Certificate],
        revoked: frozenset[DeviceId],
        *,
        now: int,
        lifetime: int,
        marks: Marks,
    ) -> Lists:
        """Both lists issued again with ``devices`` and ``revoked``, and written."""
        issued = _issue(
            self.key,
            self.cert,
            devices,
            revoked,
            self.lists,
            now=now,
            lifetime=lifetime,
            marks=marks,
        )
        _publish(files, issued, self.identity)
        return issued


def reissue(
    files: MeshFiles, store: SecretStore, *, now: int, lifetime: int, marks: Marks
) -> Lists:
    """Both lists again, unchanged but for their numbers and times (a signing device)."""
    signer = _Signer.open(files, store, marks)
    lists = signer.lists
    return signer.publish(
        files,
        list(lists.roster.devices),
        lists.revocations.devices,
        now=now,
        lifetime=lifetime,
        marks=marks,
    )


def enrol(
    files: MeshFiles,
    store: SecretStore,
    subject: bytes,
    *,
    name: str,
    now: int,
    lifetime: int,
    marks: Marks,
) -> tuple[Certificate, Lists]:
    """Certify the joining device's key ``subject`` as ``name`` and issue both lists again
    with it on the roster (a signing device; a revoked key is refused, a re-paired one is
    certified anew)."""
    signer = _Signer.open(files, store, marks)
    joining = device_id(subject)
    if joining in signer.lists.revocations.devices:
        raise Refused("revoked", f"device {joining} is revoked")
    others = [entry for entry in signer.lists.roster.devices if entry.device != joining]
    device_cert = issue_certificate(signer.key, "device", subject, name=name, issued_at=now)
    issued = signer.publish(
        files,
        [*others, device_cert],
        signer.lists.revocations.devices,
        now=now,
        lifetime=lifetime,
        marks=marks,
    )
    return device_cert, issued


def revoke(
    files: MeshFiles,
    store: SecretStore,
    device: DeviceId,
    *,
    now: int,
    lifetime: int,
    marks: Marks,
) -> Lists:
    """``device`` off the roster and onto the revocation list (a signing device)."""
    if device == _identity(files).device:
        raise MeshError("this is the device itself: revoke it from another signing device")
    signer = _Signer.open(files, store, marks)
    return signer.publish(
        files,
        [entry for entry in signer.lists.roster.devices if entry.device != device],
        signer.lists.revocations.devices | {device},
        now=now,
        lifetime=lifetime,
        marks=marks,
    )


def recover(
    files: MeshFiles,
    store: SecretStore,
    *,
    phrase: str,
    now: int,
    lifetime: int,
    marks: Marks,
) -> tuple[Identity, Lists]:
    """A new signing key from the phrase's root; the old one revoked (see the docstring)."""
    identity = files.identity()
    if identity is None or identity.root is None:
        raise MeshError(
            "this device is not in a mesh yet: recover on a paired device (or robota mesh init)"
        )
    root = root_key(phrase)
    if public_bytes(root) != identity.root:
        raise MeshError("that phrase is not the one of this device's mesh")
    lists = _need_lists(files, identity, marks)
    signing = new_key()
    cert = issue_certificate(root, "signing", public_bytes(signing), issued_at=now)
    statement = revoke_signing_key(root, lists.roster.signer, issued_at=now)
    own = device_key(store, identity)
    subjects = {entry.subject: entry.name for entry in lists.roster.devices}
    # This device too, when it is not on the roster (its key was replaced, say).
    subjects.setdefault(public_bytes(own), identity.name)
    devices = [
        issue_certificate(signing, "device", subject, name=name, issued_at=now)
        for subject, name in subjects.items()
    ]
    issued = _issue(
        signing,
        cert,
        devices,
        lists.revocations.devices,
        lists,
        now=now,
        lifetime=lifetime,
        marks=marks,
        signing_revocations=(statement,),
    )
    store.put(SIGNING_KEY, key_bytes(signing))
    own_cert = issued.roster.find(identity.device)
    identity = identity.with_(
        signing=True,
        signing_cert=cert.blob,
        device_cert=own_cert.blob if own_cert is not None else identity.device_cert,
    )
    _publish(files, issued, identity)
    return identity, issued
