"""The writer actor: the only connection that ever writes to the store.

One writer means SQLite's single write lock is never contended inside the process, so no write
waits on ``busy_timeout`` and no batch is retried; other processes on the same file still get a
clear error instead of a silent hang.

Each batch is one ``BEGIN IMMEDIATE`` ... ``COMMIT``. Every op runs inside its own savepoint, so
an op that raises is rolled back alone and gets its error, while the rest of the batch commits.
Acks run after ``COMMIT`` returned: an acknowledged write is on disk (as far as
``synchronous=NORMAL`` promises) and visible to every reader that starts afterwards.

When the batch itself cannot begin or commit (another process holds the write lock, the disk is
full), every op of the batch is acked with a ``StoreError`` and nothing of it is kept; the writer
stays up for the next batch. The same happens when an op ends the transaction itself (a bug: ops
must not commit or roll back); if it committed, the ops before it in the batch were committed by
it, and are still reported failed, because the writer cannot tell. When the connection is in a
state the writer cannot reason about (a rollback failed), it crashes, and its supervisor starts it
again with a fresh connection. Writes not yet taken wait in their queue meanwhile; none is lost.
"""

from __future__ import annotations

import logging
import os
import sqlite3
from collections.abc import Callable, Sequence
from typing import Any

from .._errors import StoreError
from ..kernel import Actor
from ._connection import open_writer
from ._database import Database
from ._messages import Drain, ReleaseCache, Write, settle
from ._migrations import MIGRATIONS, Migration, migrate

__all__ = ["StoreWriter"]

logger = logging.getLogger("robota.core.store")

_SAVEPOINT = "robota_op"


class StoreWriter(Actor):
    """Applies writes in batches, one transaction per batch, and acks each after its commit.

    It opens (creating and migrating if needed) the database at ``path`` in ``started``, so a
    store that cannot be opened is a crash its supervisor sees and reports. Messages:
    ``Drain(queue)`` (what ``StoreClient`` sends), a bare ``Write`` (a batch of one) and
    ``ReleaseCache`` (``StoreClient.release_cache``).

    ``max_batch`` bounds a transaction, so a flood of writes cannot hold the write lock (and the
    first write's ack) indefinitely. ``on_commit`` is called in the writer's thread after each
    commit with the number of ops in the batch, for metrics and tests.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        max_batch: int = 500,
        busy_timeout: float = 5.0,
        on_commit: Callable[[int], object] | None = None,
        migrations: Sequence[Migration] = MIGRATIONS,
    ) -> None:
        if max_batch < 1:
            raise ValueError(f"max_batch must be >= 1, got {max_batch}")
        super().__init__()
        self.path = os.fspath(path)
        self.max_batch = max_batch
        self._busy_timeout = busy_timeout
        self._on_commit = on_commit
        self._migrations = tuple(migrations)
        self._db: Database | None = None

    def __repr__(self) -> str:
        return f"<StoreWriter {self.path!r}>"

    # -- lifecycle -----------------------------------------------------------------------------

    def started(self) -> None:
        db = open_writer(self.path, busy_timeout=self._busy_timeout)
        try:
            migrate(db, self._migrations)
        except BaseException:
            db.close()
            raise
        self._db = db

    def stopping(self) -> None:
        db, self._db = self._db, None
        if db is None:
            return
        try:
            # Cheap on close, and keeps the planner's statistics current for the readers.
            db.execute("PRAGMA optimize")
        except sqlite3.Error:
            logger.warning("store: PRAGMA optimize failed on close", exc_info=True)
        finally:
            db.close()

    def terminated(self, reason: object) -> None:  # noqa: ARG002 (the kernel's hook)
        # After a crash nothing else closes the connection; waiting for the garbage collector
        # would keep the file open for as long as anything references this incarnation.
        self._close_quietly()

    def receive(self, message: Any) -> Any:
        if isinstance(message, Drain):
            batch, more = message.queue.take(self.max_batch)
            if more:
                # Sent before the batch runs: should this batch crash the writer, the drain is
                # already in the inbox and the kernel hands it to the next incarnation.
                self.actor_ref.tell(Drain(message.queue))
            self._run(batch)
            return None
        if isinstance(message, Write):
            self._run([message])
            return None
        if isinstance(message, ReleaseCache):
            self._release_cache()
            return None
        return super().receive(message)

    def _release_cache(self) -> None:
        """The connection closed and opened again, between batches: what a burst left in it
        stays for the process's life otherwise (its page cache, up to ``cache_size``, 2 MiB;
        its prepared statements; its cursors' weak references). The next batch prepares what
        it needs again. Should the file not open again, the writer crashes and its supervisor
        starts it afresh, as after any crash; the writes waiting keep their place."""
        db, self._db = self._db, None
        if db is None:
            return
        db.close()
        self._db = open_writer(self.path, busy_timeout=self._busy_timeout)

    # -- batches -------------------------------------------------------------------------------

    def _run(self, batch: Sequence[Write[object]]) -> None:
        if not batch:
            return
        db = self._db
        if db is None:
            closed = StoreError("the store writer has no open connection")
            for write in batch:
                settle(write, None, closed)
            raise closed
        outcomes: list[tuple[object, BaseException | None]] = []
        try:
            outcomes = self._transaction(db, batch)
        except _BatchFailed as failure:
            for write in batch:
                settle(write, None, failure.error)
            if failure.broken:
                # The connection may be mid-transaction in a way nothing can reason about.
                self._close_quietly()
                raise failure.error from failure.error.__cause__
            return
        except BaseException as error:
            # KeyboardInterrupt and the like: nothing of the batch is known to be committed.
            gone = StoreError(f"the store writer stopped during a batch: {error!r}")
            for write in batch:
                settle(write, None, gone)
            self._close_quietly()
            raise
        if self._on_commit is not None:
            try:
                self._on_commit(len(batch))
            except Exception:
                logger.exception("store: on_commit hook raised")
        for write, (result, op_error) in zip(batch, outcomes, strict=True):
            settle(write, result, op_error)

    def _transaction(
        self, db: Database, batch: Sequence[Write[object]]
    ) -> list[tuple[object, BaseException | None]]:
        conn = db.conn
        try:
            conn.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as error:
            raise _BatchFailed(_failure("begin", len(batch), error), broken=False) from error
        outcomes: list[tuple[object, BaseException | None]] = []
        try:
            for write in batch:
                outcomes.append(self._apply(db, write))
            conn.execute("COMMIT")
        except _BatchFailed:
            self._rollback(conn)
            raise
        except sqlite3.Error as error:
            self._rollback(conn)
            raise _BatchFailed(_failure("commit", len(batch), error), broken=False) from error
        return outcomes

    def _apply(self, db: Database, write: Write[object]) -> tuple[object, BaseException | None]:
        conn = db.conn
        conn.execute(f"SAVEPOINT {_SAVEPOINT}")
        try:
            result = write.op.apply(db)
        except Exception as error:
            if not conn.in_transaction:
                raise _BatchFailed(_ended(write, error), broken=False) from error
            conn.execute(f"ROLLBACK TO {_SAVEPOINT}")
            conn.execute(f"RELEASE {_SAVEPOINT}")
            return None, error
        if not conn.in_transaction:
            raise _BatchFailed(_ended(write, None), broken=False)
        conn.execute(f"RELEASE {_SAVEPOINT}")
        return result, None

    def _rollback(self, conn: sqlite3.Connection) -> None:
        if not conn.in_transaction:
            return
        try:
            conn.execute("ROLLBACK")
        except sqlite3.Error as error:
            raise _BatchFailed(
                StoreError(f"the store could not roll back a failed batch: {error}"), broken=True
            ) from error

    def _close_quietly(self) -> None:
        db, self._db = self._db, None
        if db is not None:
            try:
                db.close()
            except sqlite3.Error:
                pass  # the connection is being thrown away because it is in a bad state


class _BatchFailed(StoreError):
    """The batch as a whole failed; ``broken`` means the connection cannot be trusted."""

    def __init__(self, error: StoreError, *, broken: bool) -> None:
        super().__init__(str(error))
        self.error = error
        self.broken = broken


def _failure(stage: str, size: int, error: sqlite3.Error) -> StoreError:
    failure = StoreError(f"the store could not {stage} a batch of {size} writes: {error}")
    failure.__cause__ = error
    return failure


def _ended(write: Write[object], error: BaseException | None) -> StoreError:
    failure = StoreError(
        f"{type(write.op).__qualname__}.apply ended the batch's transaction; "
        "ops must not commit or roll back"
    )
    failure.__cause__ = error
    return failure
