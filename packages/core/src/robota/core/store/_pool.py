"""A few read-only connections lent out per read, for the many actors that read now and then.

A reader connection costs about 146 KiB before its page cache (schema, lookaside, statement
cache, all outside Python's heap) and up to 2 MiB of cache after, so one per route actor made a
host with 100 active routes 14 MB heavier. Route actors read a handful of rows per message, and
each read takes well under a millisecond, so ``size`` connections (4) serve them all: a borrower
waits only while every connection is lent, and at most ``timeout`` seconds.

Each connection is a plain ``open_reader`` (autocommit, ``query_only``, any thread, used by one
borrower at a time) with a small page cache: the store's hot rows fit, and the pool's memory
stays bounded whatever the number of readers. A connection whose read raised, or that comes
back inside a transaction (a pinned snapshot would hide later commits), is closed instead of
lent again; the next borrower opens a fresh one.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from .._errors import StoreError
from ._connection import open_reader
from ._database import Database

__all__ = ["ReaderPool"]

POOL_SIZE = 4
CACHE_KIB = 256
"""Each connection's page cache (``PRAGMA cache_size``; SQLite's default is 2 000 KiB)."""
BORROW_TIMEOUT = 5.0


class ReaderPool:
    """At most ``size`` reader connections to the store at ``path``, opened on first need and
    lent by ``reading()``. Thread-safe."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        size: int = POOL_SIZE,
        cache_kib: int = CACHE_KIB,
        timeout: float = BORROW_TIMEOUT,
    ) -> None:
        if size < 1:
            raise ValueError(f"size must be >= 1, got {size}")
        self.path = Path(path)
        self.size = size
        self.cache_kib = cache_kib
        self.timeout = timeout
        self._cond = threading.Condition()
        self._idle: list[Database] = []
        self._open = 0
        """Connections open, lent or idle (never more than ``size``)."""
        self._generation = 0
        """Bumped by ``close``: a connection lent before it is closed when it comes back."""
        self._lent: dict[int, int] = {}
        """The generation each lent connection was lent in, by ``id``."""

    @property
    def opened(self) -> int:
        with self._cond:
            return self._open

    @contextmanager
    def reading(self) -> Iterator[Database]:
        """A connection for the block's reads, back in the pool when the block ends. Raises
        ``StoreError`` when none is free within ``timeout`` seconds."""
        db = self._borrow()
        good = False
        try:
            yield db
            good = not db.conn.in_transaction
        finally:
            self._give_back(db, good=good)

    def close(self) -> None:
        """Close the idle connections now, and each lent one when it comes back. The pool
        stays usable: a later read opens a connection again (an engine run after another)."""
        with self._cond:
            self._generation += 1
            idle, self._idle = self._idle, []
            self._open -= len(idle)
            self._cond.notify_all()
        for db in idle:
            db.close()

    def _borrow(self) -> Database:
        deadline = time.monotonic() + self.timeout
        with self._cond:
            while True:
                if self._idle:
                    db = self._idle.pop()
                    self._lent[id(db)] = self._generation
                    return db
                if self._open < self.size:
                    self._open += 1
                    generation = self._generation
                    break
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise StoreError(
                        f"no reader of {self.path} free within {self.timeout:g} s "
                        f"(all {self.size} lent)"
                    )
                self._cond.wait(remaining)
        # Opened outside the lock: other borrowers need not wait for a file open.
        try:
            db = self._connect()
        except BaseException:
            with self._cond:
                self._open -= 1
                self._cond.notify()
            raise
        with self._cond:
            self._lent[id(db)] = generation
        return db

    def _connect(self) -> Database:
        db = open_reader(self.path, any_thread=True)
        try:
            db.execute(f"PRAGMA cache_size=-{int(self.cache_kib)}")
        except BaseException:
            db.close()
            raise
        return db

    def _give_back(self, db: Database, *, good: bool) -> None:
        with self._cond:
            keep = good and self._lent.pop(id(db)) == self._generation
            if keep:
                self._idle.append(db)
            else:
                self._open -= 1
            self._cond.notify()
        if not keep:
            db.close()
