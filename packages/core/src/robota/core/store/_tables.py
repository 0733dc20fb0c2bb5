"""sqlite-utils on a store connection: the schema work SQLite makes hard by hand.

SQLite's ``ALTER TABLE`` cannot drop a column used by an index, change a type, a default, a
``NOT NULL`` or a primary key; each of those is the twelve-step rebuild (create the new table,
copy the rows, drop the old one, rename, recreate the indexes) that sqlite-utils'
``Table.transform`` does, keeping ``CHECK`` constraints and ``AUTOINCREMENT``. So migrations
from version 6 on are written against sqlite-utils (``schema_change``), and so is the store's
inspection (``_inspect``); the five released before it stay the DDL they were released as
(a released migration is never edited: an old database and a new one must end at the same
schema, to the byte).

sqlite-utils is imported here only, and lazily: it costs ~70 ms, more than a fifth of a start,
and an up-to-date store never needs it. The writer's batches and the query functions stay on
plain ``sqlite3`` (``Database``): their ops depend on ``rowcount`` and ``ON CONFLICT ... WHERE``,
which the table API does not expose, and they are the hot path (see ``tools/bench/engine.py``).

The sqlite-utils ``Database`` made here shares the store connection, its transaction and its
autocommit mode: inside a migration every change sqlite-utils makes runs in a savepoint of the
migration's transaction (sqlite-utils nests ``atomic`` that way), and commits with it or not at
all. It is made without side effects on the connection (no ``recursive_triggers``, no plugins).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from ._database import Database

if TYPE_CHECKING:
    import sqlite_utils

__all__ = ["schema_change", "tables_of"]


def tables_of(db: Database) -> sqlite_utils.Database:
    """sqlite-utils' view of ``db``: the same connection, the same transaction."""
    import sqlite_utils  # noqa: PLC0415 (lazy: see the module docstring)

    return sqlite_utils.Database(db.conn, recursive_triggers=False, execute_plugins=False)


def schema_change(change: Callable[[sqlite_utils.Database], object]) -> Callable[[Database], None]:
    """A migration body written with sqlite-utils (``create_table``, ``create_index``,
    ``add_column``, ``transform``...), run inside the migration's transaction::

        Migration(5, "prompt sources", schema_change(
            lambda db: db["queued_prompts"].transform(drop={"display_text"})
        ))
    """

    def apply(db: Database) -> None:
        change(tables_of(db))

    return apply
