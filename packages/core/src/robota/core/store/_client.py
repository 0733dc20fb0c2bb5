"""The callers' handle on the writer: submit a write, then wait for its ack however suits you.

A ``StoreClient`` owns one ``WriteQueue``, so the writes of one client are applied in the order
they were submitted. It holds the writer's ``Address`` (or, outside a supervisor, its pykka
``ActorRef``), never the writer itself: the writer can crash and restart underneath, and the
queue with everything not yet taken survives it.
"""

from __future__ import annotations

import contextlib
import threading
from typing import Any, Generic, TypeVar

import pykka
import trio

from .._errors import RequestTimeout, StoreError
from .._records import Record
from ..kernel import Address, LoopPort, Reply
from ._database import Database
from ._messages import Ack, Drain, ReleaseCache, Write, WriteQueue, settle
from ._migrations import schema_version
from ._ops import WriteOp

__all__ = ["StoreClient"]

R = TypeVar("R")


class StoreClient:
    """A thread-safe handle for writing to the store through its one writer.

    Three ways to write, one underneath the other: ``submit`` never blocks and acks through a
    callback (for actors); ``write`` awaits the ack on the trio loop; ``write_sync`` blocks the
    calling thread until the ack (for actor threads, tools and tests, never the trio thread).

    A write that times out is withdrawn when the writer has not taken it yet, and then never
    happens; once taken it may still commit after the timeout, which the error message says.
    """

    __slots__ = ("_queue", "_target")

    def __init__(self, writer: Address | pykka.ActorRef[Any]) -> None:
        self._target = writer
        self._queue = WriteQueue()

    def __repr__(self) -> str:
        return f"<StoreClient {self._target!r} pending={len(self._queue)}>"

    @property
    def pending(self) -> int:
        """Writes submitted and not yet taken by the writer."""
        return len(self._queue)

    def submit(self, op: WriteOp[R], ack: Ack[R]) -> Write[R]:
        """Queue ``op``; ``ack`` is called in the writer's thread once the batch committed.

        Returns the queued ``Write``, which ``withdraw`` accepts. Never blocks. With a raw
        ``ActorRef`` to a writer that is gone, every queued write is acked with ``StoreError``.
        """
        write = Write(op, ack)
        if self._queue.push(write):
            try:
                self._target.tell(Drain(self._queue))
            except pykka.ActorDeadError:
                gone = StoreError("the store writer is not running")
                for orphan in self._queue.unschedule():
                    settle(orphan, None, gone)
        return write

    def release_cache(self) -> None:
        """Ask the writer to give back what its connection caches (pages, statements) after
        the batches already asked for: a quiet host after a burst. Never blocks; nothing
        happens when the writer is gone."""
        with contextlib.suppress(pykka.ActorDeadError):
            self._target.tell(ReleaseCache())

    def withdraw(self, write: Write[R]) -> bool:
        """Take back a submitted write; ``True`` means it was not taken and never will be."""
        return self._queue.withdraw(write)

    async def ready(self, *, timeout: float) -> int:
        """Wait until the writer has opened and migrated the store; return its schema version.

        The writer starts (and migrates) in its own thread after it was launched, so a reader
        opened right after startup can find an empty file. Every ack proves the writer got past
        ``started``; this is the cheapest one. Open readers after it.
        """
        return await self.write(_Barrier(), timeout=timeout)

    def ready_sync(self, *, timeout: float) -> int:
        """``ready`` for actor threads and tools."""
        return self.write_sync(_Barrier(), timeout=timeout)

    async def write(self, op: WriteOp[R], *, timeout: float) -> R:
        """Apply ``op`` and return its result once it is committed.

        Raises the op's own error, ``StoreError`` when its batch failed, or ``RequestTimeout``.
        """
        send, receive = trio.open_memory_channel[tuple[bool, Any]](1)
        reply: Reply[R] = Reply(LoopPort(), send)
        with send, receive:
            write = self.submit(op, reply)
            try:
                with trio.fail_after(timeout):
                    ok, value = await receive.receive()
            except trio.TooSlowError:
                raise self._timed_out(write, timeout) from None
            except BaseException:
                # Cancelled: take the write back if we still can, so it does not happen unseen.
                self.withdraw(write)
                raise
        if ok:
            return value  # type: ignore[no-any-return]
        raise value

    def write_sync(self, op: WriteOp[R], *, timeout: float) -> R:
        """Apply ``op`` and block the calling thread until it is committed.

        Never call it from the writer's own thread (it would wait for itself) or from the trio
        thread (it would stall the loop). Raises like ``write``.
        """
        waiter: _Waiter[R] = _Waiter()
        write = self.submit(op, waiter)
        if not waiter.done.wait(timeout):
            raise self._timed_out(write, timeout)
        return waiter.outcome()

    def _timed_out(self, write: Write[R], timeout: float) -> RequestTimeout:
        name = type(write.op).__qualname__
        if self.withdraw(write):
            return RequestTimeout(f"{name} not written: no ack within {timeout:g} s, withdrawn")
        return RequestTimeout(
            f"{name}: no ack within {timeout:g} s; the writer took it and may still commit it"
        )


class _Barrier(Record):
    """A write that writes nothing: its ack only proves the writer is up."""

    def apply(self, db: Database, /) -> int:
        return schema_version(db)

    # Generated by tools/gen_records.py from the fields above: do not edit below.
    __slots__ = ()
    __match_args__ = ()

    def __init__(self) -> None:
        pass

    def __repr__(self) -> str:
        return f"{type(self).__qualname__}()"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, _Barrier) or other.__class__ is not self.__class__:
            return NotImplemented
        return () == ()

    def __hash__(self) -> int:
        return hash(())


class _Waiter(Generic[R]):
    """A blocking ack: the writer fills it in, the waiting thread reads it."""

    __slots__ = ("_error", "_result", "done")

    def __init__(self) -> None:
        self.done = threading.Event()
        self._result: R | None = None
        self._error: BaseException | None = None

    def __call__(self, value: R, /) -> None:
        self._result = value
        self.done.set()

    def fail(self, error: BaseException, /) -> None:
        self._error = error
        self.done.set()

    def outcome(self) -> R:
        if self._error is not None:
            raise self._error
        return self._result  # type: ignore[return-value]  # set by __call__ before done
