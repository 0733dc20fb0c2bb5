"""What a device keeps of the mesh on disk, apart from its secrets: public parts only.

Under the profile's data directory, in the owner-only ``mesh`` directory (``_keyfile``'s
``ensure_mesh_dir``):

* ``identity.json``: this device's id and name, the pinned root public key (none until a
  joining device has paired), its device certificate and the signing key's certificate (both
  as the signed bytes, base64), and whether this device holds the signing key. Written last
  by every action, so its presence means the action completed.
* ``roster``, ``revocations``: the current lists as accepted (the signed bytes as received).
* ``names.json``: every device name seen in a roster, by id, so a revoked device that the
  current roster no longer lists still has a name in ``mesh devices``.

Every file is replaced whole (``atomic_write``, 0600). A file that does not parse fails
closed with ``MeshError`` naming it, never replaced. The high-water marks of the lists are in
the SQLite store (``robota.core.store``'s ``mesh_marks``), not here.
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from ._device_id import DeviceId, parse_device_id
from ._errors import MeshError
from ._keyfile import ensure_mesh_dir

if TYPE_CHECKING:
    from ._lists import ListKind

__all__ = ["Identity", "MeshFiles"]

_VERSION = 1


def _b64(data: bytes | None) -> str | None:
    return None if data is None else base64.b64encode(data).decode("ascii")


def _unb64(text: object, what: str) -> bytes | None:
    if text is None:
        return None
    if not isinstance(text, str):
        raise MeshError(f"the mesh's {what} is damaged")
    try:
        return base64.b64decode(text, validate=True)
    except ValueError:
        raise MeshError(f"the mesh's {what} is damaged") from None


@dataclass(frozen=True, slots=True)
class Identity:
    """This device in the mesh (``identity.json``)."""

    device: DeviceId
    name: str
    root: bytes | None = None
    """The pinned root public key; ``None`` on a device that has not paired yet."""
    device_cert: bytes | None = None
    signing_cert: bytes | None = None
    signing: bool = False
    """Whether this device holds the signing key (in its credential store)."""

    def with_(self, **changes: object) -> Identity:
        return replace(self, **changes)  # type: ignore[arg-type]

    def to_json(self) -> dict[str, object]:
        return {
            "version": _VERSION,
            "device": self.device,
            "name": self.name,
            "root": _b64(self.root),
            "deviceCert": _b64(self.device_cert),
            "signingCert": _b64(self.signing_cert),
            "signing": self.signing,
        }

    @classmethod
    def from_json(cls, data: object) -> Identity:
        if not isinstance(data, dict) or data.get("version") != _VERSION:
            raise MeshError("the mesh's identity.json is damaged")
        device = parse_device_id(str(data.get("device", "")))
        name = data.get("name")
        signing = data.get("signing")
        if device is None or not isinstance(name, str) or not isinstance(signing, bool):
            raise MeshError("the mesh's identity.json is damaged")
        return cls(
            device=device,
            name=name,
            root=_unb64(data.get("root"), "identity.json"),
            device_cert=_unb64(data.get("deviceCert"), "identity.json"),
            signing_cert=_unb64(data.get("signingCert"), "identity.json"),
            signing=signing,
        )


class MeshFiles:
    """The files of one profile's mesh directory."""

    def __init__(self, directory: Path) -> None:
        self.dir = directory

    def _write(self, name: str, data: bytes) -> None:
        from robota.core.config import atomic_write  # noqa: PLC0415

        ensure_mesh_dir(self.dir)
        atomic_write(self.dir / name, data)

    def _read(self, name: str) -> bytes | None:
        try:
            return (self.dir / name).read_bytes()
        except FileNotFoundError:
            return None

    def identity(self) -> Identity | None:
        """This device's identity; ``None`` before ``robota mesh init``."""
        raw = self._read("identity.json")
        if raw is None:
            return None
        try:
            data = json.loads(raw)
        except ValueError:
            raise MeshError("the mesh's identity.json is damaged") from None
        return Identity.from_json(data)

    def save_identity(self, identity: Identity) -> None:
        self._write("identity.json", (json.dumps(identity.to_json(), indent=2) + "\n").encode())

    def list_blob(self, kind: ListKind) -> bytes | None:
        return self._read(kind)

    def save_list(self, kind: ListKind, blob: bytes) -> None:
        self._write(kind, blob)

    def names(self) -> dict[DeviceId, str]:
        raw = self._read("names.json")
        if raw is None:
            return {}
        try:
            data = json.loads(raw)
        except ValueError:
            raise MeshError("the mesh's names.json is damaged") from None
        if not isinstance(data, dict):
            raise MeshError("the mesh's names.json is damaged")
        names: dict[DeviceId, str] = {}
        for key, value in data.items():
            device = parse_device_id(str(key))
            if device is not None and isinstance(value, str):
                names[device] = value
        return names

    def remember_names(self, names: dict[DeviceId, str]) -> None:
        known = self.names()
        if all(known.get(device) == name for device, name in names.items()):
            return
        known.update(names)
        self._write("names.json", (json.dumps(known, indent=2, sort_keys=True) + "\n").encode())
