"""The mesh's actions on real files with the file store: init, join, adopt, revoke, recover,
reissue; each one's lists verify against the pinned root and number past the marks."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

from robota.mesh import (
    AlreadyInitialized,
    CredentialStoreError,
    Marks,
    MeshError,
    MeshFiles,
    Refused,
    adopt_list,
    adopt_pairing,
    current_lists,
    device_id,
    enrol,
    init_first,
    init_join,
    key_bytes,
    key_from_bytes,
    new_phrase,
    open_secrets,
    public_bytes,
    recover,
    reissue,
    revoke,
    root_key,
    verify_roster,
)
from robota.mesh._keyfile import KeyFile

from ._devices import device_files

NOW = 1_800_000_000
LIFE = 3600


def _pair(signer: tuple[MeshFiles, KeyFile], joiner: tuple[MeshFiles, KeyFile], name: str) -> None:
    """What pairing does once the PAKE holds (the links' branch runs this over the wire)."""
    raw = joiner[1].get("device-key")
    assert raw is not None
    subject = public_bytes(key_from_bytes(raw, name="device-key"))
    device_cert, lists = enrol(*signer, subject, name=name, now=NOW, lifetime=LIFE, marks=Marks())
    identity = signer[0].identity()
    assert identity is not None and identity.root is not None
    adopt_pairing(
        *joiner,
        root=identity.root,
        device_cert=device_cert.blob,
        roster=lists.roster.blob,
        revocations=lists.revocations.blob,
        now=NOW,
        marks=Marks(),
    )


def test_init_on_the_first_device_makes_root_signing_and_device_keys(tmp_path: Path) -> None:
    files, store = device_files(tmp_path, "a")
    phrase = new_phrase()
    identity, lists = init_first(files, store, phrase=phrase, name="laptop", now=NOW, lifetime=LIFE)
    assert identity.signing and identity.root is not None
    assert files.identity() == identity
    assert [cert.device for cert in lists.roster.devices] == [identity.device]
    assert (lists.roster.seq, lists.revocations.seq) == (1, 1)
    assert lists.roster.expires_at == NOW + LIFE
    stored = (tmp_path / "a" / "mesh").rglob("*")
    text = b"".join(p.read_bytes() for p in stored if p.is_file())
    root = key_bytes(root_key(phrase))
    for secret in (phrase.encode(), " ".join(phrase.split()[:3]).encode(), root):
        assert secret not in text and base64.b64encode(secret) not in text, "never stored"
    with pytest.raises(AlreadyInitialized):
        init_first(files, store, phrase=phrase, name="laptop", now=NOW, lifetime=LIFE)


def test_a_joining_device_adopts_what_pairing_hands_it(tmp_path: Path) -> None:
    a, b = device_files(tmp_path, "a"), device_files(tmp_path, "b")
    init_first(*a, phrase=new_phrase(), name="laptop", now=NOW, lifetime=LIFE)
    joined = init_join(*b, name="desktop")
    assert joined.root is None and not joined.signing
    _pair(a, b, "desktop")
    identity = b[0].identity()
    assert identity is not None and identity.root == a[0].identity().root  # type: ignore[union-attr]
    lists = current_lists(b[0], identity, Marks())
    assert lists is not None
    assert {cert.name for cert in lists.roster.devices} == {"laptop", "desktop"}


def test_adopting_refuses_another_root_once_one_is_pinned(tmp_path: Path) -> None:
    a, b = device_files(tmp_path, "a"), device_files(tmp_path, "b")
    other = device_files(tmp_path, "o")
    init_first(*a, phrase=new_phrase(), name="a", now=NOW, lifetime=LIFE)
    init_first(*other, phrase=new_phrase(), name="o", now=NOW, lifetime=LIFE)
    init_join(*b, name="b")
    _pair(a, b, "b")
    with pytest.raises(Refused) as caught:
        _pair(other, b, "b")
    assert caught.value.reason == "signature-invalid"


def test_revoke_takes_the_device_off_the_roster_onto_the_revocation_list(tmp_path: Path) -> None:
    a, b = device_files(tmp_path, "a"), device_files(tmp_path, "b")
    init_first(*a, phrase=new_phrase(), name="a", now=NOW, lifetime=LIFE)
    init_join(*b, name="b")
    _pair(a, b, "b")
    gone = b[0].identity().device  # type: ignore[union-attr]
    lists = revoke(*a, gone, now=NOW + 5, lifetime=LIFE, marks=Marks(roster=2, revocations=1))
    assert (lists.roster.seq, lists.revocations.seq) == (3, 3)
    assert gone in lists.revocations.devices and lists.roster.find(gone) is None
    assert a[0].names()[gone] == "b", "a revoked device keeps its name for the listing"
    with pytest.raises(MeshError, match="the device itself"):
        revoke(*a, a[0].identity().device, now=NOW, lifetime=LIFE, marks=Marks())  # type: ignore[union-attr]
    with pytest.raises(MeshError, match="signing key"):
        revoke(*b, a[0].identity().device, now=NOW, lifetime=LIFE, marks=Marks())  # type: ignore[union-attr]


def test_reissue_numbers_the_next_lists_with_the_same_content(tmp_path: Path) -> None:
    a = device_files(tmp_path, "a")
    _identity, first = init_first(*a, phrase=new_phrase(), name="a", now=NOW, lifetime=LIFE)
    lists = reissue(*a, now=NOW + LIFE // 2, lifetime=LIFE, marks=Marks(roster=1, revocations=1))
    assert (lists.roster.seq, lists.revocations.seq) == (2, 2)
    assert lists.roster.expires_at == NOW + LIFE // 2 + LIFE
    assert [c.device for c in lists.roster.devices] == [c.device for c in first.roster.devices]


def test_recover_certifies_a_new_signing_key_and_revokes_the_old(tmp_path: Path) -> None:
    a, b = device_files(tmp_path, "a"), device_files(tmp_path, "b")
    phrase = new_phrase()
    init_first(*a, phrase=phrase, name="a", now=NOW, lifetime=LIFE)
    init_join(*b, name="b")
    _pair(a, b, "b")
    old_roster = b[0].list_blob("roster")
    assert old_roster is not None
    old_signer = current_lists(b[0], b[0].identity(), Marks()).roster.signer  # type: ignore[arg-type, union-attr]
    # a is lost; b recovers with the phrase.
    with pytest.raises(MeshError, match="not the one"):
        recover(*b, phrase=new_phrase(), now=NOW + 10, lifetime=LIFE, marks=Marks())
    identity, lists = recover(*b, phrase=phrase, now=NOW + 10, lifetime=LIFE, marks=Marks(2, 1))
    assert identity.signing
    assert lists.roster.signer != old_signer
    assert old_signer in lists.revocations.revoked_signing_keys
    assert {c.name for c in lists.roster.devices} == {"a", "b"}
    # A list the old signing key signed is refused from now on.
    assert identity.root is not None
    with pytest.raises(Refused) as caught:
        verify_roster(
            old_roster,
            root=identity.root,
            now=NOW + 20,
            revoked_signing=lists.revocations.revoked_signing_keys,
        )
    assert caught.value.reason == "signing-key-revoked"
    assert device_id(lists.roster.find(identity.device).subject) == identity.device  # type: ignore[union-attr]


def test_a_device_key_that_is_missing_or_not_this_devices_fails_closed(tmp_path: Path) -> None:
    a = device_files(tmp_path, "a")
    init_first(*a, phrase=new_phrase(), name="a", now=NOW, lifetime=LIFE)
    a[1].put("signing-key", b"\x00" * 32)
    with pytest.raises(CredentialStoreError) as caught:
        reissue(*a, now=NOW, lifetime=LIFE, marks=Marks())
    assert caught.value.key == "signing-key"
    a[1].delete("signing-key")
    with pytest.raises(CredentialStoreError, match="not in the credential store"):
        reissue(*a, now=NOW, lifetime=LIFE, marks=Marks())


def test_current_lists_refuse_a_rolled_back_file(tmp_path: Path) -> None:
    a = device_files(tmp_path, "a")
    identity, _lists = init_first(*a, phrase=new_phrase(), name="a", now=NOW, lifetime=LIFE)
    with pytest.raises(Refused) as caught:
        current_lists(a[0], identity, Marks(roster=2, revocations=1))
    assert caught.value.reason == "rolled-back"
    # Expired lists are read back all the same (status reports them lapsed).
    assert current_lists(a[0], identity, Marks(1, 1)) is not None


def test_keys_that_sat_in_the_file_are_replaced_when_the_keychain_arrives(
    tmp_path: Path,
) -> None:
    from ._keychain import MemoryKeychain

    files = MeshFiles(tmp_path / "a" / "mesh")
    opened = open_secrets(files, keychain=lambda: None)
    assert opened.store.kind == "file"
    phrase = new_phrase()
    before, _lists = init_first(
        files, opened.store, phrase=phrase, name="a", now=NOW, lifetime=LIFE
    )
    backend = MemoryKeychain()
    switched = open_secrets(files, keychain=lambda: backend)
    assert switched.store.kind == "keychain" and switched.replaced
    assert any("pair this device" in notice for notice in switched.notices)
    after = files.identity()
    assert after is not None
    assert after.device != before.device, "a new key, a new id: the devices pair again"
    assert not after.signing and after.device_cert is None and after.root == before.root
    assert not (tmp_path / "a" / "mesh" / "credentials").exists()
    again = open_secrets(files, keychain=lambda: backend)
    assert (again.replaced, again.notices) == (False, ()), "told once"
    # The phrase certifies a new signing key here, and puts this device back on the roster.
    identity, lists = recover(
        files, again.store, phrase=phrase, now=NOW, lifetime=LIFE, marks=Marks(1, 1)
    )
    assert identity.signing and lists.roster.find(after.device) is not None


@pytest.mark.parametrize(
    ("case", "outcome"),
    [
        ("newer revocations", "adopted"),
        ("newer roster", "adopted"),
        ("the same list again", None),
        ("an older list", "rolled-back"),
        ("another mesh's list", "signature-invalid"),
        ("expired", "expired"),
    ],
)
def test_a_list_from_a_peer_is_adopted_only_when_newer_and_valid(
    tmp_path: Path, case: str, outcome: str | None
) -> None:
    a, b, c = device_files(tmp_path, "a"), device_files(tmp_path, "b"), device_files(tmp_path, "c")
    init_first(*a, phrase=new_phrase(), name="a", now=NOW, lifetime=LIFE)
    init_join(*b, name="b")
    init_join(*c, name="c")
    _pair(a, b, "b")
    _pair(a, c, "c")  # a's lists are now at 3; b holds 2
    c_id = c[0].identity().device  # type: ignore[union-attr]
    kind = "roster" if case == "newer roster" else "revocations"
    now = NOW
    if case == "newer revocations":
        blob = revoke(*a, c_id, now=NOW, lifetime=LIFE, marks=Marks(3, 3)).revocations.blob
    elif case == "newer roster":
        blob = a[0].list_blob("roster")
    elif case == "the same list again":
        blob = b[0].list_blob("revocations")
    elif case == "an older list":
        blob = b[0].list_blob("revocations")  # number 2, then b takes number 4 and marks it
        newer = revoke(*a, c_id, now=NOW, lifetime=LIFE, marks=Marks(3, 3)).revocations
        assert adopt_list(b[0], "revocations", newer.blob, now=NOW, marks=Marks(2, 2))
    elif case == "another mesh's list":
        other = device_files(tmp_path, "o")
        init_first(*other, phrase=new_phrase(), name="o", now=NOW, lifetime=LIFE)
        blob = other[0].list_blob("revocations")
    else:
        blob = a[0].list_blob("revocations")
        now = NOW + LIFE
    assert blob is not None
    marks = Marks(2, 4) if case == "an older list" else Marks(2, 2)
    before = b[0].list_blob(kind)
    if outcome in (None, "adopted"):
        adopted = adopt_list(b[0], kind, blob, now=now, marks=marks)
        if outcome is None:
            assert adopted is None and b[0].list_blob(kind) == before
            return
        assert adopted is not None and adopted.kind == kind and adopted.seq > 2
        assert b[0].list_blob(kind) == blob
        expected = {c_id} if case == "newer revocations" else set()
        assert adopted.newly_revoked == expected
        return
    with pytest.raises(Refused) as caught:
        adopt_list(b[0], kind, blob, now=now, marks=marks)
    assert caught.value.reason == outcome
    assert b[0].list_blob(kind) == before, "a refused list changes nothing"
