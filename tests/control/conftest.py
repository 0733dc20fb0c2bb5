"""Fixtures of the control tests."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest


@pytest.fixture
def short_dir() -> Iterator[Path]:
    """A fresh directory with a short path: a Unix socket address holds about 100 bytes, and
    the raw test connections (trio's ``open_unix_socket``) take the path as it is."""
    path = Path(tempfile.mkdtemp(prefix="robota-ctl-", dir="/tmp"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def socket_path(short_dir: Path) -> Path:
    return short_dir / "run" / "control.sock"
