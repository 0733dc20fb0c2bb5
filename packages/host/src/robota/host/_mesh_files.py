"""What the host's mesh service keeps beside the identity, and the addresses it reads.

``link-certs`` (in ``data/mesh``): the link certificates this device learned (from pairing and
the links' gossip), so the next start trusts them at once; public parts only (a link
certificate is a pure function of a device's public key), one ``robota.mesh`` packing, written
whole. ``split_address``: a ``mesh.listen`` or ``mesh.peers`` address as a host and a port.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["LINK_CERTS", "load_link_certs", "save_link_certs", "split_address"]

LINK_CERTS = "link-certs"
_LINK_CERTS_CONTEXT = b"robota-mesh/1 known link certificates"


def split_address(address: str) -> tuple[str, int]:
    """``HOST:PORT`` (``[v6]:PORT`` too) as a host and a port; ``ValueError`` otherwise."""
    host, sep, port = address.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ValueError(f"{address!r} is not HOST:PORT")
    return host.removeprefix("[").removesuffix("]"), int(port)


def load_link_certs(path: Path) -> list[bytes]:
    """The link certificates saved at ``path``; none when it is missing or not one packing."""
    from robota.mesh import MeshError, unpack  # noqa: PLC0415

    try:
        return unpack(_LINK_CERTS_CONTEXT, path.read_bytes())
    except (OSError, MeshError):
        return []


def save_link_certs(path: Path, certs: list[bytes]) -> None:
    """Write ``certs`` whole (a fresh owner-only file renamed over the old one)."""
    from robota.mesh import pack  # noqa: PLC0415

    fresh = path.with_name(f".{path.name}.{os.getpid()}")
    fd = os.open(fresh, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "wb") as out:
        out.write(pack(_LINK_CERTS_CONTEXT, *certs))
    fresh.replace(path)
