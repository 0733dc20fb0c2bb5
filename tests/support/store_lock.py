"""SQLite's write lock on a host's store, held by the test's process: a long write
transaction elsewhere, or a disk that stalls the host's commits. The host's writer waits for
it up to its busy timeout (5 s), then fails its batch."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import closing, contextmanager
from pathlib import Path

__all__ = ["write_lock"]


@contextmanager
def write_lock(db: Path, *, timeout: float = 30.0) -> Iterator[sqlite3.Connection]:
    """SQLite's write lock on ``db``, held until exit (then rolled back); ``timeout``: how
    long taking it may wait."""
    with closing(sqlite3.connect(db, isolation_level=None, timeout=timeout)) as held:
        held.execute("BEGIN IMMEDIATE")
        try:
            yield held
        finally:
            held.execute("ROLLBACK")
