"""Fixtures for the store tests: real files in ``tmp_path``, real writer threads.

Test modules cannot import this file (pytest runs with ``--import-mode=importlib``), so the
helpers reach them as fixtures: ``store``, ``start_store``, ``acks`` and ``make_gate``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from robota.core.store import Database, StoreClient, StoreWriter


@dataclass(eq=False)
class Gate:
    """A write op that holds the writer inside its batch transaction until released.

    It is how a test makes the writer busy on purpose, instead of hoping a burst is fast enough.
    """

    entered: threading.Event = field(default_factory=threading.Event)
    release: threading.Event = field(default_factory=threading.Event)

    def apply(self, db: Database, /) -> str:
        self.entered.set()
        if not self.release.wait(10):
            raise TimeoutError("the test never released the gate")
        return "gate"

    def wait_entered(self) -> None:
        assert self.entered.wait(10), "the writer never reached the gate"


class Acks:
    """Collects acks from the writer thread; ``wait_for`` blocks with a deadline."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self.received: list[tuple[object, object]] = []

    def for_(self, tag: object) -> Callable[[object], None]:
        def ack(outcome: object) -> None:
            with self._cond:
                self.received.append((tag, outcome))
                self._cond.notify_all()

        return ack

    def wait_for(self, count: int, timeout: float = 10.0) -> dict[object, object]:
        with self._cond:
            if not self._cond.wait_for(lambda: len(self.received) >= count, timeout):
                raise TimeoutError(f"{len(self.received)} of {count} acks in {timeout:g} s")
            return dict(self.received)


@dataclass
class RunningStore:
    path: Path
    client: StoreClient
    commits: list[int]


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "robota.db"


@pytest.fixture
def start_store(db_path: Path) -> Iterator[Callable[..., RunningStore]]:
    """Start writers outside any supervisor; every one started is stopped at teardown."""
    refs: list[Any] = []

    def start(**options: Any) -> RunningStore:
        commits: list[int] = []
        ref = StoreWriter.start(db_path, on_commit=commits.append, **options)
        refs.append(ref)
        return RunningStore(db_path, StoreClient(ref), commits)

    yield start
    for ref in refs:
        if ref.is_alive():
            ref.stop(timeout=10)


@pytest.fixture
def store(start_store: Callable[..., RunningStore]) -> RunningStore:
    running = start_store()
    # The writer has opened and migrated the file before the test reads it.
    running.client.ready_sync(timeout=10)
    return running


@pytest.fixture
def acks() -> Acks:
    return Acks()


@pytest.fixture
def make_gate() -> Callable[[], Gate]:
    return Gate
