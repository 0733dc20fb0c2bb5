"""The ``robota server`` tests' sandbox and commands, shared by the host tests that start one."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from robota.core.config import Profile

from ..support.host import BOUND, sandboxed
from ..support.model_server import FakeModel
from ..support.processes import kill_processes_with_home_under
from ..support.robota import ROBOTA, Robota

__all__ = ["sandbox", "server", "server_json"]


@pytest.fixture
def sandbox(short_root: Path, model: FakeModel) -> Iterator[tuple[Robota, Profile]]:
    """A sandbox whose hosts are all ended afterwards, however the test ended."""
    robota, profile = sandboxed(short_root, model, "codex-acp")
    yield robota, profile
    kill_processes_with_home_under(short_root)


def server(robota: Robota, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(ROBOTA), "server", *args],
        env=robota.environment(None, ()),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=BOUND,
        check=False,
    )


def server_json(robota: Robota, *args: str) -> tuple[int, Any]:
    done = server(robota, *args, "--json")
    assert done.stdout, done.stderr
    return done.returncode, json.loads(done.stdout)
