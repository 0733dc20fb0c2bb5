"""The store's SQLite connection: ``sqlite3`` with the few helpers the store's code uses.

These few (rows as dicts, the table list, WAL mode) are what every start and every write uses,
so they stay plain ``sqlite3``: sqlite-utils offers them too, but importing it costs ~70 ms of a
~300 ms start. sqlite-utils does the schema changes and the inspection, where it saves real
work, on the same connection (``_tables``). Connections are opened by ``_connection`` in
autocommit mode (``isolation_level=None``): a transaction is one only where the code says
``BEGIN``.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, TypeAlias

__all__ = ["Database", "Parameters"]

Parameters: TypeAlias = Sequence[Any] | Mapping[str, Any]


class Database:
    """One open connection to a store; ``conn`` is the ``sqlite3.Connection`` itself."""

    __slots__ = ("conn",)

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def __repr__(self) -> str:
        return f"<Database {self.conn!r}>"

    def execute(self, sql: str, parameters: Parameters = ()) -> sqlite3.Cursor:
        return self.conn.execute(sql, parameters)

    def query(self, sql: str, parameters: Parameters = ()) -> Iterator[dict[str, Any]]:
        """Run ``sql`` now; its rows, each as a dict of column name to value."""
        cursor = self.conn.execute(sql, parameters)
        names = [column[0] for column in cursor.description or ()]
        return (dict(zip(names, row, strict=True)) for row in cursor)

    def table_names(self) -> list[str]:
        return [
            name
            for (name,) in self.conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        ]

    def table_exists(self, name: str) -> bool:
        found = self.conn.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (name,)
        )
        return found.fetchone() is not None

    @property
    def journal_mode(self) -> str:
        return str(self.conn.execute("PRAGMA journal_mode").fetchone()[0])

    def enable_wal(self) -> None:
        if self.journal_mode != "wal":
            self.conn.execute("PRAGMA journal_mode=wal")

    def close(self) -> None:
        self.conn.close()
