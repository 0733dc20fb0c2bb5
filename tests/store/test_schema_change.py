"""Migrations written with sqlite-utils: real rebuilds inside the migration's transaction.

The released migrations are plain DDL; the next ones use ``schema_change``. These tests append
such migrations to ``MIGRATIONS`` on real files with the sample rows of every table, and check
that sqlite-utils keeps to the migration's contract: all or nothing, rows and constraints kept,
and no import of sqlite-utils unless a migration needs it.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
import sqlite_utils

from robota.core.store import (
    MIGRATIONS,
    Database,
    Migration,
    migrate,
    schema_change,
    schema_version,
)
from robota.core.store._connection import open_writer

LATEST = MIGRATIONS[-1].version


def columns(db: Database, table: str) -> list[tuple[str, str, int, object, int]]:
    """``PRAGMA table_info`` without the column ids: name, type, not null, default, pk."""
    return [tuple(row[1:]) for row in db.execute(f"PRAGMA table_info({table})")]


def schema(db: Database) -> list[tuple[str, str]]:
    rows = db.execute(
        "SELECT name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' ORDER BY name"
    )
    return [(name, " ".join((sql or "").split())) for name, sql in rows]


@pytest.fixture
def latest(tmp_path: Path) -> Database:
    db = open_writer(tmp_path / "store.db")
    migrate(db)
    db.execute("BEGIN")
    db.execute(
        "INSERT INTO queued_prompts (route_key, text, display_text, created_at) "
        "VALUES ('r', 'first', 'shown', 1.0), ('r', 'second', NULL, 2.0)"
    )
    db.execute("DELETE FROM queued_prompts WHERE text = 'second'")  # AUTOINCREMENT remembers 2
    db.execute("COMMIT")
    return db


def test_a_new_table_and_index_are_created_inside_the_migration(latest: Database) -> None:
    def create(tables: sqlite_utils.Database) -> None:
        tables.create_table(
            "prompt_sources",
            {"prompt_id": int, "source": str, "weight": float},
            pk="prompt_id",
            not_null={"source"},
            defaults={"weight": 1.0},
        )
        tables["prompt_sources"].create_index(["source"], index_name="prompt_sources_by_source")

    steps = (*MIGRATIONS, Migration(LATEST + 1, "prompt sources", schema_change(create)))
    assert migrate(latest, steps) == LATEST + 1
    assert columns(latest, "prompt_sources") == [
        ("prompt_id", "INTEGER", 0, None, 1),
        ("source", "TEXT", 1, None, 0),
        ("weight", "REAL", 0, "1.0", 0),
    ]
    indexes = latest.execute("PRAGMA index_list(prompt_sources)").fetchall()
    assert [row[1] for row in indexes] == ["prompt_sources_by_source"]
    assert not latest.conn.in_transaction


def test_transform_drops_a_column_and_keeps_rows_checks_indexes_and_autoincrement(
    latest: Database,
) -> None:
    drop = schema_change(lambda t: t["queued_prompts"].transform(drop={"display_text"}))
    assert migrate(latest, (*MIGRATIONS, Migration(LATEST + 1, "no display", drop))) == LATEST + 1
    assert "display_text" not in [c[0] for c in columns(latest, "queued_prompts")]
    rows = latest.execute("SELECT id, route_key, text, status FROM queued_prompts").fetchall()
    assert rows == [(1, "r", "first", "pending")]
    index = latest.execute(
        "SELECT sql FROM sqlite_master WHERE name = 'queued_prompts_by_route'"
    ).fetchone()
    assert index is not None
    with pytest.raises(sqlite3.IntegrityError, match="CHECK"):
        latest.execute(
            "INSERT INTO queued_prompts (route_key, text, status, created_at) "
            "VALUES ('r', 'x', 'lost', 3.0)"
        )
    cursor = latest.execute(
        "INSERT INTO queued_prompts (route_key, text, created_at) VALUES ('r', 'third', 3.0)"
    )
    assert cursor.lastrowid == 3  # not 2: the sequence survived the rebuild


def test_a_migration_failing_after_a_transform_leaves_the_previous_schema_and_rows(
    latest: Database,
) -> None:
    before = schema(latest)

    def half_done(tables: sqlite_utils.Database) -> None:
        tables["queued_prompts"].transform(drop={"display_text"})
        tables["tasks"].transform(rename={"title": "name"})
        raise RuntimeError("migration bug")

    steps = (*MIGRATIONS, Migration(LATEST + 1, "broken", schema_change(half_done)))
    with pytest.raises(RuntimeError, match="migration bug"):
        migrate(latest, steps)
    assert schema_version(latest) == LATEST
    assert schema(latest) == before
    assert latest.execute("SELECT text, display_text FROM queued_prompts").fetchall() == [
        ("first", "shown")
    ]
    assert not latest.conn.in_transaction


def test_an_up_to_date_store_never_imports_sqlite_utils(tmp_path: Path) -> None:
    """Opening a current store runs no sqlite-utils migration, so the writer's start does not
    pay for the import (a fresh file pays it once: migrations from 6 on are sqlite-utils')."""
    path = tmp_path / "store.db"
    fresh = open_writer(path)
    try:
        migrate(fresh)
    finally:
        fresh.close()
    code = (
        "import json, sys\n"
        "from robota.core.store import StoreWriter\n"
        f"for _ in range(2):\n"
        f"    writer = StoreWriter({str(path)!r})\n"
        "    writer.started()\n"
        "    writer.stopping()\n"
        "print(json.dumps('sqlite_utils' in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert json.loads(out.stdout) is False
    check = open_writer(path)
    try:
        assert schema_version(check) == LATEST
    finally:
        check.close()
