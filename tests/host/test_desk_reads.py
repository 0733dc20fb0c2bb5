"""The task desk's store reads (``DeskReads``): on the trio thread while the store answers at
once, on a worker thread when it is locked, and the loop never waits for the lock."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest
import trio

from robota.core.store import CreateTask, Database, migrate
from robota.core.store import task as load_task
from robota.host import DeskReads


@pytest.fixture
def store(tmp_path: Path) -> Path:
    path = tmp_path / "robota.sqlite"
    db = Database(sqlite3.connect(path, isolation_level=None))
    db.execute("PRAGMA journal_mode=WAL")  # as the store writer opens it
    migrate(db)
    CreateTask("t1a2b3c4d5e6", "codex", str(tmp_path), "app-server").apply(db)
    db.close()
    return path


def test_a_free_store_is_read_on_the_loop(store: Path) -> None:
    reads = DeskReads(store)
    threads: list[int] = []

    def query(db: Database) -> str | None:
        threads.append(threading.get_ident())
        found = load_task(db, "t1a2b3c4d5e6")
        return found.agent if found is not None else None

    async def main() -> tuple[str | None, int]:
        return await reads.query(query), threading.get_ident()

    try:
        agent, loop_thread = trio.run(main)
    finally:
        reads.close()
    assert agent == "codex"
    assert threads == [loop_thread]
    assert reads.waited == 0


def test_a_locked_store_is_read_on_a_worker_while_the_loop_goes_on(store: Path) -> None:
    """A connection in exclusive locking mode keeps every reader out of a WAL store until it
    closes: the loop's read is refused at once and runs again on the worker, which
    waits; meanwhile the loop keeps running its other tasks."""
    holder = sqlite3.connect(store, isolation_level=None, check_same_thread=False)
    holder.execute("PRAGMA locking_mode=EXCLUSIVE")
    holder.execute("BEGIN IMMEDIATE")
    holder.execute("UPDATE tasks SET title = 'held' WHERE id = 't1a2b3c4d5e6'")
    reads = DeskReads(store)
    threads: list[int] = []
    ticks_while_locked: list[int] = []

    def query(db: Database) -> str | None:
        threads.append(threading.get_ident())
        found = load_task(db, "t1a2b3c4d5e6")
        return found.title if found is not None else None

    async def main() -> tuple[str | None, int]:
        ticks = 0
        async with trio.open_nursery() as nursery:

            async def tick() -> None:
                nonlocal ticks
                while True:
                    ticks += 1
                    if ticks == 20:
                        # The loop ran on while the read waited: let the store go.
                        ticks_while_locked.append(ticks)
                        holder.execute("COMMIT")
                        holder.close()
                    await trio.sleep(0.01)

            nursery.start_soon(tick)
            title = await reads.query(query)
            nursery.cancel_scope.cancel()
        return title, threading.get_ident()

    try:
        title, loop_thread = trio.run(main)
    finally:
        reads.close()
        holder.close()
    assert reads.waited == 1
    assert threads[0] == loop_thread and len(threads) == 2 and threads[1] != loop_thread
    assert ticks_while_locked == [20]
    assert title == "held"  # the worker waited for the commit and read it
