"""Fixtures for the CLI tests: a sandboxed ``robota`` (see ``_robota``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ._robota import Robota


@pytest.fixture
def robota(tmp_path: Path) -> Robota:
    (tmp_path / "bin").mkdir()
    (tmp_path / "user").mkdir()
    return Robota(
        tmp_path,
        {
            "HOME": str(tmp_path / "user"),
            "PATH": str(tmp_path / "bin"),
            "ROBOTA_HOME": str(tmp_path / "home"),
            "LC_ALL": "C.UTF-8",
        },
    )
