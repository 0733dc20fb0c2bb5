"""The host tests' sandboxes: the fake model, and a root short enough for a Unix socket."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest

from robota.core.logs import PrivateRotatingFileHandler

from ..support.host import short_root
from ..support.model_server import FakeModel

__all__ = ["short_root"]  # the fixture, from tests/support/host.py (the MCP tests use it too)


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
