"""A device's mesh files and key file under a test's folder, by the device's name."""

from __future__ import annotations

from pathlib import Path

from robota.mesh import MeshFiles
from robota.mesh._keyfile import KeyFile

__all__ = ["device_files"]


def device_files(tmp_path: Path, name: str) -> tuple[MeshFiles, KeyFile]:
    return MeshFiles(tmp_path / name / "mesh"), KeyFile(tmp_path / name / "mesh" / "credentials")
