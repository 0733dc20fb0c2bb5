"""The host tests' sandboxes: the fake model, and a root short enough for a Unix socket."""

from __future__ import annotations

import logging
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from robota.core.logs import PrivateRotatingFileHandler

from ..support.model_server import FakeModel


@pytest.fixture(autouse=True)
def root_logging() -> Iterator[None]:
    """An in-process host's engine sends the root logger to the profile's log file: undo it
    after."""
    root = logging.getLogger()
    level = root.level
    yield
    for handler in list(root.handlers):
        if isinstance(handler, PrivateRotatingFileHandler):
            root.removeHandler(handler)
            handler.close()
    root.setLevel(level)


@pytest.fixture
def model() -> Iterator[FakeModel]:
    with FakeModel() as fake:
        yield fake


@pytest.fixture
def short_root() -> Iterator[Path]:
    """A sandbox with a short path: the profile's control socket lives under it, and a Unix
    socket address holds about 100 bytes."""
    path = Path(tempfile.mkdtemp(prefix="robota-host-", dir="/tmp"))
    yield path
    shutil.rmtree(path, ignore_errors=True)
