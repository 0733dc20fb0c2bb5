"""The TUI on a real terminal: a slowly streaming fake model and a tmux terminal as fixtures,
the screen flattened for matching, and the wait for a command's exit status file."""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from .model_server import FakeModel
from .terminal import Tmux


@pytest.fixture
def model() -> Iterator[FakeModel]:
    with FakeModel(slow_deltas=200, slow_delay=0.05) as fake:
        yield fake


@pytest.fixture
def terminal() -> Iterator[Tmux]:
    session = Tmux(f"robota-tui-{os.getpid()}-{uuid.uuid4().hex[:8]}")
    try:
        yield session
    finally:
        session.close()


def flat(screen: str) -> str:
    """The screen's words with single spaces: text the UI wrapped reads as one line again."""
    return " ".join(screen.split())


def wait_for_exit(status: Path, timeout: float = 60) -> int:
    deadline = time.monotonic() + timeout
    while not status.exists() or not status.read_text().strip():
        assert time.monotonic() < deadline, "robota did not exit"
        time.sleep(0.1)
    return int(status.read_text())
