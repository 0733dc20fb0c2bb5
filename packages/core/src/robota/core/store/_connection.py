"""Opening connections: the writer's one, and any number of readers.

Both kinds are plain ``sqlite3`` connections in driver autocommit mode (``isolation_level=None``)
wrapped in a ``Database``. Autocommit mode means the driver never opens or commits a
transaction behind our back: the writer says ``BEGIN``/``COMMIT`` itself, which is what lets it
promise that an acknowledged write is committed, and a reader sees every commit made before its
next statement instead of a snapshot pinned by an implicit transaction it forgot to end.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from .._errors import StoreError
from ._database import Database

__all__ = ["open_reader", "open_writer"]

_BUSY_TIMEOUT = 5.0


def open_writer(path: str | os.PathLike[str], *, busy_timeout: float = _BUSY_TIMEOUT) -> Database:
    """Open the read-write connection of the one writer, creating the file if needed.

    WAL lets readers run while the writer commits; ``synchronous=NORMAL`` is durable across a
    process crash and only loses the last commits on a power cut, which costs a fraction of the
    fsyncs ``FULL`` does. ``journal_mode`` is stored in the file, ``synchronous`` is not, so both
    are set on every open.
    """
    file = Path(path)
    if not file.parent.is_dir():
        raise StoreError(f"cannot open the store {file}: directory {file.parent} does not exist")
    if not file.exists():
        # The store holds chat text and tokens. SQLite gives the -wal and -shm files the
        # permissions of the main file, so creating it private keeps all three private.
        file.touch(mode=0o600)
    db = _connect(file, uri=False, busy_timeout=busy_timeout, same_thread=True)
    try:
        db.enable_wal()
        mode = db.journal_mode
        db.execute("PRAGMA synchronous=NORMAL")
    except sqlite3.Error as error:
        db.close()
        raise StoreError(f"cannot open the store {file}: {error}") from error
    if mode != "wal":
        db.close()
        raise StoreError(
            f"cannot open the store {file}: journal_mode is {mode!r}, not 'wal' "
            "(is it on a network file system?)"
        )
    return db


def open_reader(
    path: str | os.PathLike[str],
    *,
    busy_timeout: float = _BUSY_TIMEOUT,
    any_thread: bool = False,
) -> Database:
    """Open a read-only connection to an existing store.

    Readers never go through the writer: in WAL mode they do not block it and it does not block
    them, and each one sees exactly what was committed before its statement started. The
    connection refuses writes (``query_only``), so a query helper that writes by mistake fails
    in tests instead of racing the writer.

    By default only the opening thread may use it (sqlite3's own check); ``any_thread=True``
    lifts that for a caller that serialises access itself, with a lock.
    """
    file = Path(path)
    if not file.is_file():
        raise StoreError(f"cannot open the store {file} for reading: no such file")
    db = _connect(file, uri=True, busy_timeout=busy_timeout, same_thread=not any_thread)
    try:
        db.execute("PRAGMA query_only=ON")
    except sqlite3.Error as error:
        db.close()
        raise StoreError(f"cannot open the store {file} for reading: {error}") from error
    return db


def _connect(file: Path, *, uri: bool, busy_timeout: float, same_thread: bool) -> Database:
    # ``mode=rw`` for readers: never create an empty database where the store was expected.
    target = f"{file.absolute().as_uri()}?mode=rw" if uri else str(file)
    try:
        conn = sqlite3.connect(
            target,
            timeout=busy_timeout,
            isolation_level=None,
            check_same_thread=same_thread,
            uri=uri,
        )
    except sqlite3.Error as error:
        raise StoreError(f"cannot open the store {file}: {error}") from error
    return Database(conn)
