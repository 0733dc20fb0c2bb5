"""Two profiles put in one mesh the way pairing leaves them, without the terminals: ``enrol``
on the signing device, ``adopt_pairing`` on the joiner, each one's link certificate known to
the other (pairing through the terminals is ``robota mesh pair``/``join``'s own test)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from robota.host._mesh_files import save_link_certs
from robota.mesh import (
    Marks,
    MeshFiles,
    adopt_pairing,
    enrol,
    key_from_bytes,
    link_certificate,
    public_bytes,
)
from robota.mesh._keyfile import KeyFile

__all__ = ["_paired"]


def _key(home: Path) -> Any:
    raw = KeyFile(home / "data" / "mesh" / "credentials").get("device-key")
    assert raw is not None
    return key_from_bytes(raw, name="device-key")


def _paired(laptop: Path, desk: Path) -> tuple[str, str]:
    """``desk`` enrolled into ``laptop``'s mesh as pairing leaves both; their device ids."""
    signer, joiner = MeshFiles(laptop / "data" / "mesh"), MeshFiles(desk / "data" / "mesh")
    now = int(time.time())
    cert, lists = enrol(
        signer,
        KeyFile(laptop / "data" / "mesh" / "credentials"),
        public_bytes(_key(desk)),
        name="desk",
        now=now,
        lifetime=3600,
        marks=Marks(1, 1),
    )
    root = signer.identity()
    assert root is not None and root.root is not None
    adopt_pairing(
        joiner,
        KeyFile(desk / "data" / "mesh" / "credentials"),
        root=root.root,
        device_cert=cert.blob,
        roster=lists.roster.blob,
        revocations=lists.revocations.blob,
        now=now,
        marks=Marks(),
    )
    certs = [link_certificate(_key(laptop)), link_certificate(_key(desk))]
    for home in (laptop, desk):
        save_link_certs(home / "data" / "mesh" / "link-certs", certs)
    desk_identity = joiner.identity()
    assert desk_identity is not None
    return root.device, desk_identity.device
