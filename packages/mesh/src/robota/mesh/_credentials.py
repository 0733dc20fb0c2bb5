"""Where the mesh's secrets live: the OS keychain when it is a real one, else an owner-only file.

The secrets are this device's private key (``device-key``) and, on a device that signs, the
signing key (``signing-key``); the recovery phrase never is one (it is never stored).

The choice (``choose_store``, pure, a table in the tests) is made at first use and recorded in
the profile's ``mesh/store.json``:

* the keychain when a *real* backend is there (macOS Keychain, Windows Credential Locker, the
  Linux Secret Service; never ``keyring``'s fail, null or chainer backends, ``keyrings.alt``
  or a kernel keyring, ``is_real_backend``) and a probe value round-trips through it (set, get,
  delete, in a worker thread under a timeout: a locked collection's unlock prompt can hang);
* else the owner-only file, and the operator is told so.

A recorded keychain that stops working fails closed: the mesh does not open and the message
names the key, never a value; it never falls back to the file, where the secrets are not. A
recorded file is replaced by the keychain once the keychain works: the keys that sat in the
file are not carried over but replaced by new ones (a key that was ever in a plain file stays
suspect), the file is removed, and the operator is told once that the devices must pair again.
Keychain items are named ``robota-mesh`` / ``<store id>/<key>``: the store id is random per
profile, so two profiles on one keychain never collide.
"""

from __future__ import annotations

import base64
import json
import secrets
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal, Protocol, TypeVar

from ._errors import CredentialStoreError
from ._keyfile import KeyFile, ensure_mesh_dir

if TYPE_CHECKING:
    from keyring.backend import KeyringBackend

__all__ = [
    "PROBE_TIMEOUT",
    "REAL_BACKENDS",
    "SECRET_NAMES",
    "FailClosed",
    "Keychain",
    "OpenedStore",
    "Probe",
    "SecretStore",
    "StoreDecision",
    "StoreKind",
    "SwitchToKeychain",
    "UseKeychain",
    "UseFile",
    "check_store",
    "choose_store",
    "discover_keychain",
    "is_real_backend",
    "open_store",
    "probe_keychain",
    "read_store_record",
]

StoreKind = Literal["keychain", "file"]
Probe = Literal["ok", "none", "failed"]
"""What the keychain did: round-tripped the probe; no real backend; a real one that failed."""

SECRET_NAMES = ("device-key", "signing-key")
PROBE_TIMEOUT = 5.0
SERVICE = "robota-mesh"

REAL_BACKENDS = frozenset(
    {
        "keyring.backends.macOS.Keyring",
        "keyring.backends.Windows.WinVaultKeyring",
        "keyring.backends.SecretService.Keyring",
        "keyring.backends.libsecret.Keyring",
    }
)
"""The ``keyring`` backends that are an OS keychain (libsecret speaks to the Secret Service)."""


def is_real_backend(backend: object) -> bool:
    """Whether ``backend`` is one of the real keychains (by its class, not its claims)."""
    cls = type(backend)
    return f"{cls.__module__}.{cls.__qualname__}" in REAL_BACKENDS


@dataclass(frozen=True, slots=True)
class UseKeychain:
    record: bool
    """Write the choice down (first use)."""


@dataclass(frozen=True, slots=True)
class UseFile:
    record: bool
    announce: bool
    """Tell the operator the secrets are in a file (when the choice is made)."""


@dataclass(frozen=True, slots=True)
class SwitchToKeychain:
    """The file's keys are replaced by new ones in the keychain; tell: pair again."""


@dataclass(frozen=True, slots=True)
class FailClosed:
    why: str


StoreDecision = UseKeychain | UseFile | SwitchToKeychain | FailClosed


def choose_store(recorded: StoreKind | None, probe: Probe, file_holds_keys: bool) -> StoreDecision:
    """Which store to use, from what was recorded and what the keychain did just now."""
    if recorded is None:
        return UseKeychain(record=True) if probe == "ok" else UseFile(record=True, announce=True)
    if recorded == "keychain":
        if probe == "ok":
            return UseKeychain(record=False)
        why = "did not answer the probe" if probe == "failed" else "is no longer available"
        return FailClosed(f"the keychain recorded for the mesh's secrets {why}")
    if probe != "ok":
        return UseFile(record=False, announce=False)
    return SwitchToKeychain() if file_holds_keys else UseKeychain(record=True)


class SecretStore(Protocol):
    """The secrets by name (``SECRET_NAMES``); values are raw bytes."""

    @property
    def kind(self) -> StoreKind: ...

    def get(self, name: str) -> bytes | None: ...

    def put(self, name: str, value: bytes) -> None: ...

    def delete(self, name: str) -> None: ...


_T = TypeVar("_T")


def _in_thread(work: Callable[[], _T], timeout: float, key: str) -> _T:
    """``work()`` in a worker thread; ``CredentialStoreError`` naming ``key`` if it fails or
    does not finish in time (a hung keychain call is left to its daemon thread)."""
    box: list[_T] = []
    failed: list[BaseException] = []

    def run() -> None:
        try:
            box.append(work())
        except BaseException as error:
            failed.append(error)

    worker = threading.Thread(target=run, name="robota-keychain", daemon=True)
    worker.start()
    worker.join(timeout)
    if worker.is_alive():
        raise CredentialStoreError(key, "the keychain did not answer in time")
    if failed:
        # The cause is not chained: a backend's error may quote what it was given.
        raise CredentialStoreError(key, f"the keychain failed ({type(failed[0]).__name__})")
    return box[0]


class Keychain:
    """The secrets in a real OS keychain, each call in a worker thread under a timeout."""

    kind: Literal["keychain"] = "keychain"

    def __init__(self, backend: KeyringBackend, store_id: str, timeout: float = PROBE_TIMEOUT):
        self._backend = backend
        self._prefix = store_id
        self._timeout = timeout

    def _user(self, name: str) -> str:
        return f"{self._prefix}/{name}"

    def get(self, name: str) -> bytes | None:
        text = _in_thread(
            lambda: self._backend.get_password(SERVICE, self._user(name)), self._timeout, name
        )
        if text is None:
            return None
        try:
            return base64.b64decode(text, validate=True)
        except ValueError:
            raise CredentialStoreError(name, "the stored value is damaged") from None

    def put(self, name: str, value: bytes) -> None:
        encoded = base64.b64encode(value).decode("ascii")
        _in_thread(
            lambda: self._backend.set_password(SERVICE, self._user(name), encoded),
            self._timeout,
            name,
        )

    def delete(self, name: str) -> None:
        def forget() -> None:
            from keyring.errors import PasswordDeleteError  # noqa: PLC0415

            try:
                self._backend.delete_password(SERVICE, self._user(name))
            except PasswordDeleteError:
                pass  # nothing stored under that name: already gone

        _in_thread(forget, self._timeout, name)


def discover_keychain() -> KeyringBackend | None:
    """The real keychain backend of this machine with the highest priority, if any."""
    from keyring.backend import get_all_keyring  # noqa: PLC0415 (only the mesh needs keyring)

    backends = get_all_keyring()
    # keyring keeps that list for the life of the process; a host asks again later (a keychain
    # gone, or come, since), so the next call makes it anew (a few ms).
    get_all_keyring.reset()
    ranked = [
        (priority, backend)
        for backend in backends
        if is_real_backend(backend) and (priority := _priority_now(backend)) is not None
    ]
    return max(ranked, key=lambda pair: pair[0])[1] if ranked else None


def _priority_now(backend: KeyringBackend) -> float | None:
    """``backend``'s priority, or ``None`` when it is not usable now.

    A backend's priority raises when its service is not there (no Secret Service daemon, and
    nothing on the bus to start one): keyring's own rule takes such a backend as not viable.
    """
    try:
        return float(backend.priority)
    except Exception:  # any error is the backend's way of saying "not here"
        return None


def probe_keychain(
    backend: KeyringBackend | None, store_id: str, timeout: float = PROBE_TIMEOUT
) -> Probe:
    """Whether a random value round-trips through ``backend`` (``none``: no real backend)."""
    if backend is None:
        return "none"
    keychain = Keychain(backend, store_id, timeout)
    value = secrets.token_bytes(16)
    try:
        keychain.put("probe", value)
        back = keychain.get("probe")
        keychain.delete("probe")
    except CredentialStoreError:
        return "failed"
    return "ok" if back == value else "failed"


def read_store_record(mesh_dir: Path) -> tuple[StoreKind | None, str | None]:
    """The recorded store and store id (``None``s before the first use)."""
    try:
        data = json.loads((mesh_dir / "store.json").read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None, None
    except (OSError, ValueError):
        raise CredentialStoreError("store.json", "the record of the store is damaged") from None
    kind, store_id = data.get("store"), data.get("id")
    if kind not in ("keychain", "file") or not isinstance(store_id, str):
        raise CredentialStoreError("store.json", "the record of the store is damaged")
    return kind, store_id


def _record(mesh_dir: Path, kind: StoreKind, store_id: str) -> None:
    from robota.core.config import atomic_write  # noqa: PLC0415

    text = json.dumps({"store": kind, "id": store_id}, indent=2) + "\n"
    ensure_mesh_dir(mesh_dir)
    atomic_write(mesh_dir / "store.json", text.encode("utf-8"))


@dataclass(frozen=True, slots=True)
class OpenedStore:
    store: SecretStore
    notices: tuple[str, ...]
    """What to tell the operator now (the file chosen; keys replaced, pair again)."""
    replaced: bool = False
    """The file's keys were dropped for the keychain: new keys are to be made now
    (``_actions.open_secrets`` does)."""


def open_store(
    mesh_dir: Path,
    *,
    keychain: Callable[[], KeyringBackend | None] = discover_keychain,
    timeout: float = PROBE_TIMEOUT,
    first_use: bool = True,
) -> OpenedStore:
    """The profile's secret store, choosing (and recording) it at first use.

    ``first_use=False`` (status, the host opening the mesh) never makes or records a first
    choice: with nothing recorded it raises ``CredentialStoreError`` (``mesh init`` first).
    A recorded keychain that fails raises it as well (fail closed, naming the store).
    """
    recorded, store_id = read_store_record(mesh_dir)
    if recorded is None and not first_use:
        raise CredentialStoreError("store.json", "no store chosen yet (robota mesh init)")
    store_id = store_id or secrets.token_hex(8)
    key_file = KeyFile(mesh_dir / "credentials")
    backend = keychain()
    probe = probe_keychain(backend, store_id, timeout)
    decision = choose_store(recorded, probe, recorded == "file" and key_file.holds_keys())
    if isinstance(decision, FailClosed):
        raise CredentialStoreError("device-key", decision.why)
    if isinstance(decision, UseFile):
        if decision.record:
            _record(mesh_dir, "file", store_id)
        told = (
            (
                "the OS keychain is not available: the mesh's keys are kept in an owner-only"
                f" file, {key_file.path}",
            )
            if decision.announce
            else ()
        )
        return OpenedStore(key_file, told)
    assert backend is not None
    store = Keychain(backend, store_id, timeout)
    notices: tuple[str, ...] = ()
    if isinstance(decision, SwitchToKeychain):
        # The keys that sat in the file are dropped, not carried over; the caller makes new
        # ones (this device's id changes, so the other devices must pair with it again).
        key_file.remove()
        notices = (
            "the OS keychain works now: the mesh's keys that were kept in a file are replaced"
            " by new ones in the keychain; pair this device with your other devices again",
        )
    if not isinstance(decision, UseKeychain) or decision.record:
        _record(mesh_dir, "keychain", store_id)
    return OpenedStore(store, notices, replaced=isinstance(decision, SwitchToKeychain))


def check_store(
    mesh_dir: Path,
    *,
    keychain: Callable[[], KeyringBackend | None] = discover_keychain,
    timeout: float = PROBE_TIMEOUT,
) -> str | None:
    """What is wrong with the recorded store, for ``mesh status``; ``None`` when nothing is.

    Reads and probes only: never makes a choice, switches a store or replaces a key (status
    must not rewrite identity state)."""
    try:
        recorded, store_id = read_store_record(mesh_dir)
        if recorded == "file":
            KeyFile(mesh_dir / "credentials").holds_keys()
    except CredentialStoreError as error:
        return f"{error}: the mesh does not open"
    keychain_fails = (
        recorded == "keychain"
        and store_id is not None
        and probe_keychain(keychain(), store_id, timeout) != "ok"
    )
    if keychain_fails:
        failed = CredentialStoreError(
            "device-key", "the keychain recorded for the mesh's secrets fails"
        )
        return f"{failed}: the mesh does not open"
    return None
