"""The served transports' sandboxes: the fake model, and a root short enough for a Unix socket
(the profile's control socket lives under it)."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from ..support.model_server import FakeModel


@pytest.fixture
def model() -> Iterator[FakeModel]:
    with FakeModel() as fake:
        yield fake


@pytest.fixture
def short_root() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="robota-chat-", dir="/tmp"))
    yield path
    shutil.rmtree(path, ignore_errors=True)
