"""A third-party transport plugin's source (``MATRIX_PLUGIN``) and a scratch directory on
``sys.path`` to install distributions in (``site``, a fixture)."""

from __future__ import annotations

import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

MATRIX_PLUGIN = """
from dataclasses import dataclass

@dataclass(frozen=True)
class MatrixSettings:
    room: str
    token: str

class MatrixTransport:
    name = "matrix"

    def validate(self, reader, section):
        values = reader.section(section, "transports.matrix", ("room", "token"), nullable=False)
        room = reader.text(values.get("room"), "transports.matrix.room", required=True)
        if not room.startswith("!"):
            raise reader.error("transports.matrix.room", repr(room), "a room id like !abc")
        token = reader.secret(values, "token", "transports.matrix", required=True)
        return MatrixSettings(room, token)

plugin = MatrixTransport()
"""


@dataclass
class Site:
    """A directory on ``sys.path`` where a test installs distributions."""

    path: Path

    def install(self, dist: str, group: str, entries: dict[str, str]) -> None:
        info = self.path / f"{dist.replace('-', '_')}-1.0.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 1.0\n")
        lines = "".join(f"{name} = {value}\n" for name, value in entries.items())
        (info / "entry_points.txt").write_text(f"[{group}]\n{lines}")

    def module(self, name: str, source: str) -> None:
        (self.path / f"{name}.py").write_text(textwrap.dedent(source))


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Site:
    path = tmp_path / "site"
    path.mkdir()
    monkeypatch.syspath_prepend(str(path))
    for name in ("robota_test_matrix", "robota_test_broken"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    return Site(path)
