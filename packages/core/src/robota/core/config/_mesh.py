"""The ``mesh`` section of a profile's config.yaml: whether and how the device mesh opens.

    mesh:
      enabled: true
      name: laptop                      # default: the host name
      listen: ["192.168.1.10:47390"]    # empty: dial only
      listLifetimeSeconds: 86400
      pairingTtlSeconds: 300
      limits:                           # a peer conversation's bounds (robota mesh send)
        maxHops: 8
        maxReplies: 4
      peers:                            # written by pairing; editable
        ABCD-EFGH-...:
          name: desktop
          address: 192.168.1.11:47390

Only the profile's own file can turn the mesh on: a project's ``.robota/config.yaml`` with a
``mesh`` key is a configuration error (``_project``), since a repository must never expose
this machine to the user's other devices. A device id here is in its one printed form (13
groups of 4 base32 characters, ``robota.mesh``'s), checked by shape: core does not import the
mesh. Validation only; the mesh itself reads these settings in the host.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from types import MappingProxyType

from ._keys import MESH_KEYS, MESH_LIMITS_KEYS, MESH_PEER_KEYS, key_names
from ._model import MeshPeer, MeshSettings
from ._reader import Reader, describe

__all__ = ["DEVICE_ID_FORM", "host_name", "parse_address", "validate_mesh"]

DEVICE_ID_FORM = re.compile(r"[A-Z2-7]{4}(?:-[A-Z2-7]{4}){12}\Z")
"""A device id as printed (``robota.mesh.device_id``)."""

_HOST_PORT = re.compile(
    r"(?:\[(?P<v6>[0-9A-Fa-f:.]+)\]|(?P<host>[^\s:\[\]/]+)):(?P<port>\d{1,5})\Z"
)
_MAX_NAME_BYTES = 64


def host_name() -> str:
    """The machine's host name: this device's name when ``mesh.name`` is not given."""
    uname = getattr(os, "uname", None)
    name = uname().nodename if uname is not None else os.environ.get("COMPUTERNAME", "")
    return name[:_MAX_NAME_BYTES] or "robota"


def parse_address(text: str) -> tuple[str, int] | None:
    """``HOST:PORT`` (``[V6]:PORT``) as ``(host, port)``; ``None`` when it is not one."""
    match = _HOST_PORT.match(text.strip())
    if match is None:
        return None
    port = int(match["port"])
    if not 1 <= port <= 65535:
        return None
    return (match["v6"] or match["host"], port)


def _name(reader: Reader, raw: object, path: str) -> str | None:
    name = reader.text(raw, path, required=False)
    if name is None:
        return None
    if len(name.encode("utf-8")) > _MAX_NAME_BYTES or any(ord(ch) < 32 for ch in name):
        raise reader.error(path, describe(name), "text of at most 64 bytes, one line")
    return name


def _address(reader: Reader, raw: object, path: str) -> str:
    text = reader.text(raw, path, required=True, expected="HOST:PORT")
    assert text is not None
    if parse_address(text) is None:
        raise reader.error(path, describe(raw), "HOST:PORT, the port from 1 to 65535")
    return text.strip()


def _peers(reader: Reader, raw: object) -> dict[str, MeshPeer]:
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        raise reader.error(
            "mesh.peers", describe(raw), "a mapping of device ids to {name, address}"
        )
    peers: dict[str, MeshPeer] = {}
    for device, spec in raw.items():
        if not isinstance(device, str) or not DEVICE_ID_FORM.match(device):
            raise reader.error(
                "mesh.peers",
                f"the key {describe(device)}",
                "a device id as `robota mesh devices` prints it",
            )
        path = f"mesh.peers.{device}"
        section = reader.section(spec, path, key_names(MESH_PEER_KEYS))
        name = _name(reader, section.get("name"), f"{path}.name") or device
        address = (
            _address(reader, section["address"], f"{path}.address")
            if section.get("address") is not None
            else None
        )
        peers[device] = MeshPeer(name=name, address=address)
    return peers


def _limits(reader: Reader, raw: object) -> tuple[int, int]:
    """``mesh.limits``: ``(maxHops, maxReplies)``."""
    section = reader.section(raw, "mesh.limits", key_names(MESH_LIMITS_KEYS))
    hops, replies = section.get("maxHops"), section.get("maxReplies")
    return (
        8 if hops is None else reader.integer(hops, "mesh.limits.maxHops", 1, 1000),
        4 if replies is None else reader.integer(replies, "mesh.limits.maxReplies", 0, 1000),
    )


def validate_mesh(reader: Reader, raw: object) -> MeshSettings:
    """The ``mesh`` section (absent: the mesh off, every default)."""
    section = reader.section(raw, "mesh", key_names(MESH_KEYS))
    raw_listen = section.get("listen")
    listen: list[str] = []
    if raw_listen is not None:
        if not isinstance(raw_listen, list):
            raise reader.error("mesh.listen", describe(raw_listen), "a list of HOST:PORT")
        listen = [_address(reader, item, f"mesh.listen[{i}]") for i, item in enumerate(raw_listen)]
    lifetime = section.get("listLifetimeSeconds")
    ttl = section.get("pairingTtlSeconds")
    max_hops, max_replies = _limits(reader, section.get("limits"))
    return MeshSettings(
        enabled=reader.boolean(section.get("enabled"), "mesh.enabled", False),
        name=_name(reader, section.get("name"), "mesh.name") or host_name(),
        listen=tuple(listen),
        peers=MappingProxyType(_peers(reader, section.get("peers"))),
        list_lifetime_seconds=(
            86400
            if lifetime is None
            else reader.integer(lifetime, "mesh.listLifetimeSeconds", 60, 2592000)
        ),
        pairing_ttl_seconds=(
            300 if ttl is None else reader.integer(ttl, "mesh.pairingTtlSeconds", 30, 3600)
        ),
        max_hops=max_hops,
        max_replies=max_replies,
    )
