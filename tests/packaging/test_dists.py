"""robota's own reader of installed distributions agrees with ``importlib.metadata``."""

from __future__ import annotations

from importlib import metadata
from pathlib import Path

import pytest

from robota.core import robota_version
from robota.core._dists import _parse_entry_points, distribution_version, entry_points


def test_entry_points_of_every_group_match_importlib_metadata() -> None:
    groups = {e.group for d in metadata.distributions() for e in d.entry_points}
    assert "robota.runtimes" in groups and len(groups) > 3
    for group in groups:
        ours = sorted((e.name, e.value) for e in entry_points(group))
        theirs = sorted((e.name, e.value) for e in metadata.entry_points(group=group))
        assert ours == theirs, group


def test_versions_of_every_distribution_match_importlib_metadata() -> None:
    names = {d.metadata["Name"] for d in metadata.distributions()}
    assert "robota" in names
    for name in names:
        assert distribution_version(name) == metadata.version(name), name
    assert distribution_version("surely-not-installed-anywhere") is None
    assert robota_version() == metadata.version("robota")


def test_runtime_plugins_load_from_their_entry_points() -> None:
    from robota.runtimes import acp, app_server

    loaded = {e.name: e.load() for e in entry_points("robota.runtimes")}
    assert loaded == {"acp": acp, "app-server": app_server}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("[g]\na = m:f\n", [("a", "m:f")]),
        ("# note\n[other]\nx = y\n\n[g]\n; c\n  b=m.n:o.p  \n", [("b", "m.n:o.p")]),
        ("[g]\nno equals sign\n", []),
    ],
)
def test_entry_points_text_is_read_as_ini(text: str, expected: list[tuple[str, str]]) -> None:
    assert [(e.name, e.value) for e in _parse_entry_points(text, "g")] == expected


def test_a_zipped_path_entry_falls_back_to_importlib_metadata(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    archive = tmp_path / "plugins.zip"
    archive.write_bytes(b"PK\x05\x06" + b"\0" * 18)  # an empty zip file
    monkeypatch.syspath_prepend(str(archive))
    assert sorted(e.name for e in entry_points("robota.runtimes")) == ["acp", "app-server"]
