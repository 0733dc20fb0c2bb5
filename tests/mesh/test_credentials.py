"""The credential store: the keychain only when real and answering, else an owner-only file;
recorded, fail closed, never degraded, replaced once when the keychain arrives."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest
from keyring.backends import chainer, fail, null

from robota.mesh import CredentialStoreError
from robota.mesh._credentials import (
    FailClosed,
    SwitchToKeychain,
    UseFile,
    UseKeychain,
    check_store,
    choose_store,
    is_real_backend,
    open_store,
    read_store_record,
)
from robota.mesh._keyfile import KeyFile

from ._keychain import SECRET, MemoryKeychain


@pytest.mark.parametrize(
    ("recorded", "probe", "file_holds_keys", "decision"),
    [
        (None, "ok", False, UseKeychain(record=True)),
        (None, "none", False, UseFile(record=True, announce=True)),
        (None, "failed", False, UseFile(record=True, announce=True)),
        ("keychain", "ok", False, UseKeychain(record=False)),
        ("keychain", "none", False, FailClosed("x")),
        ("keychain", "failed", True, FailClosed("x")),
        ("file", "none", True, UseFile(record=False, announce=False)),
        ("file", "failed", True, UseFile(record=False, announce=False)),
        ("file", "ok", True, SwitchToKeychain()),
        ("file", "ok", False, UseKeychain(record=True)),
    ],
)
def test_the_choice_of_store(
    recorded: str | None, probe: str, file_holds_keys: bool, decision: object
) -> None:
    got = choose_store(recorded, probe, file_holds_keys)  # type: ignore[arg-type]
    if isinstance(decision, FailClosed):
        assert isinstance(got, FailClosed) and "keychain" in got.why
    else:
        assert got == decision


def _as(module: str, name: str) -> object:
    return type(name, (), {"__module__": module, "__qualname__": name})()


@pytest.mark.parametrize(
    ("backend", "real"),
    [
        (fail.Keyring(), False),
        (null.Keyring(), False),
        (chainer.ChainerBackend(), False),
        (_as("keyrings.alt.file", "PlaintextKeyring"), False),
        (_as("keyrings.alt.file", "EncryptedKeyring"), False),
        (_as("keyring.backends.kwallet", "DBusKeyring"), False),
        (_as("keyring_kernel", "KernelKeyring"), False),
        (_as("keyring.backends.SecretService", "Keyring"), True),
        (_as("keyring.backends.libsecret", "Keyring"), True),
        (_as("keyring.backends.macOS", "Keyring"), True),
        (_as("keyring.backends.Windows", "WinVaultKeyring"), True),
    ],
)
def test_only_real_keychains_count(backend: object, real: bool) -> None:
    assert is_real_backend(backend) is real


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_no_real_keychain_is_the_file_recorded_and_announced_once(tmp_path: Path) -> None:
    mesh = tmp_path / "data" / "mesh"
    opened = open_store(mesh, keychain=lambda: None)
    assert opened.store.kind == "file"
    assert len(opened.notices) == 1 and "owner-only file" in opened.notices[0]
    opened.store.put("device-key", SECRET)
    assert _mode(mesh) == 0o700 and _mode(mesh / "credentials") == 0o600
    assert SECRET not in (mesh / "store.json").read_bytes()
    assert read_store_record(mesh)[0] == "file"
    again = open_store(mesh, keychain=lambda: None)
    assert again.notices == () and again.store.get("device-key") == SECRET


def test_a_keychain_that_answers_is_chosen_and_holds_the_secrets(tmp_path: Path) -> None:
    backend = MemoryKeychain()
    opened = open_store(tmp_path / "mesh", keychain=lambda: backend)
    assert (opened.store.kind, opened.notices) == ("keychain", ())
    opened.store.put("device-key", SECRET)
    assert opened.store.get("device-key") == SECRET
    assert not (tmp_path / "mesh" / "credentials").exists()
    ((service, user),) = backend.items  # the probe value was deleted again
    assert service == "robota-mesh" and user.endswith("/device-key")
    assert read_store_record(tmp_path / "mesh")[0] == "keychain"


@pytest.mark.parametrize("failure", ["broken", "gone", "hangs"])
def test_a_recorded_keychain_that_stops_working_fails_closed_never_the_file(
    tmp_path: Path, failure: str
) -> None:
    backend = MemoryKeychain()
    mesh = tmp_path / "mesh"
    open_store(mesh, keychain=lambda: backend).store.put("device-key", SECRET)
    if failure == "broken":
        backend.broken = True
    elif failure == "hangs":
        backend.hang = True
    with pytest.raises(CredentialStoreError) as caught:
        open_store(
            mesh, keychain=(lambda: None) if failure == "gone" else (lambda: backend), timeout=0.2
        )
    backend.release.set()
    assert caught.value.key == "device-key"
    assert "keychain" in str(caught.value)
    assert repr(SECRET) not in str(caught.value) and caught.value.__cause__ is None
    assert not (mesh / "credentials").exists(), "never degraded to the file"
    assert read_store_record(mesh)[0] == "keychain"


def test_a_keychain_that_arrives_replaces_the_files_keys_and_says_pair_again(
    tmp_path: Path,
) -> None:
    mesh = tmp_path / "mesh"
    open_store(mesh, keychain=lambda: None).store.put("device-key", SECRET)
    backend = MemoryKeychain()
    opened = open_store(mesh, keychain=lambda: backend)
    assert opened.store.kind == "keychain"
    assert len(opened.notices) == 1 and "pair this device" in opened.notices[0]
    assert not (mesh / "credentials").exists()
    assert opened.store.get("device-key") is None, "not carried over: replaced by new keys"
    assert open_store(mesh, keychain=lambda: backend).notices == (), "told once"


def test_status_never_makes_the_first_choice(tmp_path: Path) -> None:
    with pytest.raises(CredentialStoreError):
        open_store(tmp_path / "mesh", keychain=lambda: None, first_use=False)
    assert not (tmp_path / "mesh" / "store.json").exists()


@pytest.mark.parametrize("tamper", ["group-readable", "a link", "damaged", "dir open to others"])
def test_the_file_is_checked_on_read_and_fails_closed_without_being_replaced(
    tmp_path: Path, tamper: str
) -> None:
    mesh = tmp_path / "mesh"
    store = KeyFile(mesh / "credentials")
    store.put("device-key", SECRET)
    path = mesh / "credentials"
    if tamper == "group-readable":
        path.chmod(0o640)
    elif tamper == "a link":
        real = tmp_path / "elsewhere"
        path.rename(real)
        path.symlink_to(real)
    elif tamper == "damaged":
        path.write_text("{not json")
    elif tamper == "dir open to others":
        mesh.chmod(0o755)
    before = os.lstat(path)
    with pytest.raises(CredentialStoreError) as caught:
        store.get("device-key")
    assert repr(SECRET) not in str(caught.value)
    with pytest.raises(CredentialStoreError):
        store.put("device-key", b"new")
    after = os.lstat(path)
    assert (before.st_ino, before.st_mtime_ns) == (after.st_ino, after.st_mtime_ns), "not replaced"


def test_a_damaged_value_fails_closed_naming_the_key(tmp_path: Path) -> None:
    mesh = tmp_path / "mesh"
    store = KeyFile(mesh / "credentials")
    store.put("device-key", SECRET)
    data = json.loads((mesh / "credentials").read_text())
    data["device-key"] = "!!not base64!!"
    (mesh / "credentials").write_text(json.dumps(data))
    with pytest.raises(CredentialStoreError) as caught:
        store.get("device-key")
    assert caught.value.key == "device-key"


def test_status_checks_the_store_without_switching_or_choosing(tmp_path: Path) -> None:
    mesh = tmp_path / "mesh"
    assert check_store(mesh, keychain=lambda: None) is None  # nothing recorded: nothing wrong
    open_store(mesh, keychain=lambda: None).store.put("device-key", SECRET)
    backend = MemoryKeychain()
    assert check_store(mesh, keychain=lambda: backend) is None
    assert read_store_record(mesh)[0] == "file", "a working keychain does not switch here"
    assert (mesh / "credentials").exists()
    keychain_mesh = tmp_path / "k"
    open_store(keychain_mesh, keychain=lambda: backend)
    backend.broken = True
    problem = check_store(keychain_mesh, keychain=lambda: backend, timeout=0.5)
    assert problem is not None and "device-key" in problem and "does not open" in problem
