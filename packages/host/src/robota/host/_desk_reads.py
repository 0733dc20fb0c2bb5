"""How the host's task desk reads the store: at once on the trio thread when SQLite answers
without waiting, else on a worker thread that may wait.

A ``task send`` reads its task twice, its route before the prompt and its state after the
answer, both on its critical path. A point read on the WAL store takes about 0.1 ms; a hop to
a worker thread and back costs about 0.3 ms more (``trio.to_thread``: a thread's wake-up and
the loop's). Reading on the loop is safe only if it never waits, so the loop's connection has
a busy timeout of 0: while the store is locked (a checkpoint's rare exclusive moment, a
recovery) SQLite raises at once, and that query runs again on a worker thread, on a
connection borrowed from the engine's ``ReaderPool``, which waits as every other reader does.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import trio

from robota.core.store import Database, ReaderPool, open_reader

__all__ = ["DeskReads"]

_T = TypeVar("_T")


class DeskReads:
    """The desk's reads of the store at ``db_path``: a connection of its own on the trio
    thread, opened on first use and kept (opening one costs more than the queries a ``task
    send`` makes with it), and ``pool`` (the engine's readers; ``None``: one of its own) for
    the reads that may wait. No transaction stays open between statements, so each read sees
    the latest commit."""

    def __init__(self, db_path: Path, pool: ReaderPool | None = None) -> None:
        self.db_path = db_path
        self.waited = 0
        """Queries that found the store locked and went to the worker thread."""
        self._loop: Database | None = None
        self._own_pool = pool is None
        self._pool = ReaderPool(db_path, size=1) if pool is None else pool

    async def query(self, query: Callable[[Database], _T]) -> _T:
        """``query``'s result; on the trio thread only. ``query`` must only read (it may run
        twice: once refused by a locked store, then again)."""
        if self._loop is None:
            self._loop = open_reader(self.db_path, busy_timeout=0, any_thread=True)
        try:
            return query(self._loop)
        except sqlite3.OperationalError:
            self.waited += 1
            return await trio.to_thread.run_sync(self.read, query)

    def read(self, query: Callable[[Database], _T]) -> _T:
        """``query`` on a pooled connection, from any thread; it may wait for the store."""
        with self._pool.reading() as db:
            return query(db)

    def close(self) -> None:
        if self._own_pool:
            self._pool.close()
        if self._loop is not None:
            self._loop.close()
            self._loop = None
