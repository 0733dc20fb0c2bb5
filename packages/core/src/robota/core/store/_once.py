"""One write from a process that runs no writer actor: a short-lived command's (``robota mesh
init`` raising its high-water marks).

``write_once`` opens the writer's kind of connection (creating and migrating the store as
``StoreWriter`` does), applies the op in one ``BEGIN IMMEDIATE`` transaction and closes. A
host that runs meanwhile has its own writer: SQLite's lock orders the two (the busy timeout
waits), and an op written for this (``RaiseMeshMark``: a ``max`` in one statement) is right
in either order.
"""

from __future__ import annotations

import os
from typing import TypeVar

from ._connection import open_writer
from ._migrations import migrate
from ._ops import WriteOp

__all__ = ["write_once"]

_R = TypeVar("_R")


def write_once(path: str | os.PathLike[str], op: WriteOp[_R]) -> _R:
    """Apply ``op`` to the store at ``path`` in a transaction of its own; its result."""
    db = open_writer(path)
    try:
        migrate(db)
        db.execute("BEGIN IMMEDIATE")
        try:
            result = op.apply(db)
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")
        return result
    finally:
        db.close()
