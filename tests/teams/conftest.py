"""The team tests' store: a real SQLite file with its one writer."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from robota.core.store import StoreClient, StoreWriter


@pytest.fixture
def store(tmp_path: Path) -> Iterator[tuple[Path, StoreClient]]:
    path = tmp_path / "robota.sqlite"
    ref = StoreWriter.start(path)
    client = StoreClient(ref)
    client.ready_sync(timeout=10)
    yield path, client
    ref.stop(timeout=10)
