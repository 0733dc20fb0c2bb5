"""What a store file holds: its schema version, and each table's rows and size.

Read-only, on a reader connection, so it is safe beside a running robota (WAL readers never
block the writer) and never creates, migrates or repairs anything. Sizes come from SQLite's
``dbstat`` table, the pages each table and its indexes really use, when the library has it
(``SQLITE_ENABLE_DBSTAT_VTAB``, as Python's bundled SQLite does); otherwise they are estimated
from the bytes of the table's values, a lower bound (``size_source`` says which).
"""

from __future__ import annotations

import os
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from .._errors import StoreError
from ._connection import open_reader
from ._database import Database
from ._migrations import MIGRATIONS, schema_version
from ._tables import tables_of

__all__ = ["StoreReport", "TableReport", "inspect_store"]

SizeSource = Literal["dbstat", "estimate"]


@dataclass(frozen=True, slots=True)
class TableReport:
    name: str
    rows: int
    bytes: int
    """The table's own pages (``dbstat``) or the bytes of its values (``estimate``)."""
    index_bytes: int
    """The pages of its indexes; 0 when estimated."""
    indexes: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class StoreReport:
    path: Path
    schema_version: int
    latest_version: int
    """The version this robota migrates a store to."""
    journal_mode: str
    page_size: int
    pages: int
    free_pages: int
    file_bytes: int
    wal_bytes: int
    size_source: SizeSource
    tables: tuple[TableReport, ...]

    def as_json(self) -> dict[str, object]:
        return {
            "path": str(self.path),
            "schema_version": self.schema_version,
            "latest_version": self.latest_version,
            "journal_mode": self.journal_mode,
            "page_size": self.page_size,
            "pages": self.pages,
            "free_pages": self.free_pages,
            "file_bytes": self.file_bytes,
            "wal_bytes": self.wal_bytes,
            "size_source": self.size_source,
            "tables": [
                {
                    "name": t.name,
                    "rows": t.rows,
                    "bytes": t.bytes,
                    "index_bytes": t.index_bytes,
                    "indexes": list(t.indexes),
                }
                for t in self.tables
            ],
        }


def inspect_store(path: str | os.PathLike[str], *, dbstat: bool = True) -> StoreReport:
    """Report on the store at ``path`` (``StoreError`` if it does not exist or cannot be read).

    ``dbstat=False`` estimates sizes even where ``dbstat`` exists (for tests of the fallback).
    """
    file = Path(path)
    db = open_reader(file)
    try:
        return _report(file, db, dbstat=dbstat)
    except sqlite3.Error as error:
        raise StoreError(f"cannot read the store {file}: {error}") from error
    finally:
        db.close()


def _report(file: Path, db: Database, *, dbstat: bool) -> StoreReport:
    pages = _pages(db) if dbstat else None
    tables = tables_of(db)
    names = sorted(n for n in tables.table_names() if not n.startswith("sqlite_"))
    reports = []
    for name in names:
        table = tables.table(name)
        indexes = tuple(sorted(i.name for i in table.indexes if i.origin == "c"))
        if pages is None:
            size, index_size = _value_bytes(db, name, table.columns_dict), 0
        else:
            size = pages.get(name, 0)
            index_size = sum(pages.get(i.name, 0) for i in table.indexes)
        reports.append(TableReport(name, table.count, size, index_size, indexes))
    return StoreReport(
        path=file,
        schema_version=schema_version(db),
        latest_version=MIGRATIONS[-1].version,
        journal_mode=db.journal_mode,
        page_size=_pragma(db, "page_size"),
        pages=_pragma(db, "page_count"),
        free_pages=_pragma(db, "freelist_count"),
        file_bytes=file.stat().st_size,
        wal_bytes=_size_of(file.with_name(file.name + "-wal")),
        size_source="estimate" if pages is None else "dbstat",
        tables=tuple(reports),
    )


def _pages(db: Database) -> dict[str, int] | None:
    """Bytes of pages per table and index, or ``None`` when this SQLite has no ``dbstat``."""
    try:
        rows = db.execute("SELECT name, SUM(pgsize) FROM dbstat GROUP BY name").fetchall()
    except sqlite3.OperationalError as error:
        if "dbstat" in str(error):  # no such table: built without SQLITE_ENABLE_DBSTAT_VTAB
            return None
        raise
    return {str(name): int(size) for name, size in rows}


def _value_bytes(db: Database, table: str, columns: dict[str, object]) -> int:
    if not columns:
        return 0
    total = " + ".join(f'IFNULL(LENGTH(CAST("{c}" AS BLOB)), 0)' for c in columns)
    row = db.execute(f'SELECT SUM({total}) FROM "{table}"').fetchone()
    return int(row[0] or 0)


def _pragma(db: Database, name: str) -> int:
    return int(db.execute(f"PRAGMA {name}").fetchone()[0])


def _size_of(file: Path) -> int:
    try:
        return file.stat().st_size
    except FileNotFoundError:
        return 0
