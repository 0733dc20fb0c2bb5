"""The connections: pragmas the writer promises, and readers that can only read."""

from __future__ import annotations

import sqlite3
import stat
import sys
import threading
from dataclasses import dataclass
from pathlib import Path

import pytest

from robota.core import StoreError
from robota.core.store import ClaimInboundEvent, Database, event_claimed, open_reader


@dataclass(frozen=True)
class Pragma:
    """Reads a pragma on the writer's own connection (some pragmas are per connection)."""

    name: str

    def apply(self, db: Database, /) -> object:
        return db.execute(f"PRAGMA {self.name}").fetchone()[0]


def test_writer_sets_wal_and_synchronous_normal(store) -> None:
    # synchronous is per connection, so it is read on the writer's own connection.
    assert store.client.write_sync(Pragma("synchronous"), timeout=5) == 1  # NORMAL
    assert store.client.write_sync(Pragma("journal_mode"), timeout=5) == "wal"
    reader = open_reader(store.path)
    try:
        # journal_mode=WAL is a property of the file: every other connection sees it too.
        assert reader.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    finally:
        reader.close()
    assert store.path.with_name(store.path.name + "-wal").exists()


def test_reader_refuses_writes(store) -> None:
    reader = open_reader(store.path)
    try:
        assert reader.execute("PRAGMA query_only").fetchone()[0] == 1
        with pytest.raises(sqlite3.OperationalError, match="readonly"):
            reader.execute(
                "INSERT INTO inbound_event_receipts (event_id, kind, received_at) "
                "VALUES ('e', 'k', 0)"
            )
    finally:
        reader.close()


def test_reader_sees_each_new_commit(store) -> None:
    reader = open_reader(store.path)
    try:
        assert not event_claimed(reader, "e1")
        store.client.write_sync(ClaimInboundEvent("e1", "message"), timeout=5)
        # Autocommit readers hold no snapshot between statements.
        assert event_claimed(reader, "e1")
    finally:
        reader.close()


def test_reader_belongs_to_its_thread_unless_asked(store) -> None:
    strict = open_reader(store.path)
    shared = open_reader(store.path, any_thread=True)
    errors: list[BaseException] = []
    claimed: list[bool] = []

    def use() -> None:
        try:
            strict.execute("SELECT 1")
        except sqlite3.ProgrammingError as error:
            errors.append(error)
        claimed.append(event_claimed(shared, "nope"))

    thread = threading.Thread(target=use)
    thread.start()
    thread.join(10)
    strict.close()
    shared.close()
    assert len(errors) == 1
    assert claimed == [False]


def test_reader_does_not_create_a_missing_store(tmp_path: Path) -> None:
    missing = tmp_path / "missing.db"
    with pytest.raises(StoreError, match="no such file"):
        open_reader(missing)
    assert not missing.exists()


def test_writer_needs_an_existing_directory(tmp_path: Path) -> None:
    from robota.core.store._connection import open_writer

    with pytest.raises(StoreError, match="does not exist"):
        open_writer(tmp_path / "nowhere" / "robota.db")


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX permissions")
def test_store_files_are_private(store) -> None:
    for suffix in ("", "-wal", "-shm"):
        file = store.path.with_name(store.path.name + suffix)
        mode = stat.S_IMODE(file.stat().st_mode)
        assert mode & 0o077 == 0, f"{file.name} is {oct(mode)}"
