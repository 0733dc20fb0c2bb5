"""What travels to the writer: writes, their acknowledgements, and the queue that batches them.

Writes do not travel one message per write. A client appends them to a ``WriteQueue`` and tells
the writer ``Drain(queue)`` only when no drain is already on its way; the writer then takes
everything queued so far as one batch. That is what turns a burst of writes into one transaction
and keeps the writer's inbox (and its address's stash while it restarts) at one message per
client, however fast the client writes.
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, Protocol, TypeAlias, TypeVar, runtime_checkable

from ._ops import WriteOp

__all__ = ["Ack", "Drain", "Failable", "ReleaseCache", "Write", "WriteQueue", "settle"]

logger = logging.getLogger("robota.core.store")

R = TypeVar("R")
T_contra = TypeVar("T_contra", contravariant=True)


@runtime_checkable
class Failable(Protocol[T_contra]):
    """An acknowledgement with a separate error path, such as ``robota.core.Reply``."""

    def __call__(self, value: T_contra, /) -> object: ...

    def fail(self, error: BaseException, /) -> object: ...


Ack: TypeAlias = Failable[R] | Callable[[R | BaseException], object]
"""Called once, in the writer's thread, after the op's transaction committed (or failed).

A ``Failable`` (a trio ``Reply``) gets the result through ``ack(result)`` and an error through
``ack.fail(error)``; any other callable gets the result or the exception instance itself. It
must not block and should not raise (if it does, the error is logged and dropped).
"""


@dataclass(frozen=True, slots=True, eq=False)
class Write(Generic[R]):
    """One write: the op to apply and who to tell once it committed.

    Compared by identity, so a queued write can be withdrawn even when an equal one is queued too.
    """

    op: WriteOp[R]
    ack: Ack[R]


def settle(write: Write[R], result: R | None, error: BaseException | None) -> None:
    """Deliver ``write``'s outcome to its ack, never letting the ack's own error escape."""
    ack = write.ack
    try:
        if error is None:
            ack(result)  # type: ignore[arg-type]  # R | None is R when there is no error
        elif isinstance(ack, Failable):
            ack.fail(error)
        else:
            ack(error)
    except Exception:
        logger.exception("store: the ack of %s raised", type(write.op).__qualname__)


@dataclass(frozen=True, slots=True, eq=False)
class Drain:
    """Tells the writer to take a batch from ``queue``."""

    queue: WriteQueue


@dataclass(frozen=True, slots=True)
class ReleaseCache:
    """Tells the writer to give back what its connection caches (between batches)."""


class WriteQueue:
    """A thread-safe FIFO of writes with one flag: is a ``Drain`` already on its way?

    Any thread pushes; only the writer takes. The flag is cleared in the same critical section
    that empties the queue, so a write pushed after a take always schedules a new drain, and a
    write pushed before it is always in the batch.
    """

    __slots__ = ("_items", "_lock", "_scheduled")

    def __init__(self) -> None:
        self._items: deque[Write[object]] = deque()
        self._lock = threading.Lock()
        self._scheduled = False

    def __len__(self) -> int:
        return len(self._items)

    def push(self, write: Write[R]) -> bool:
        """Queue ``write``; return ``True`` when the caller must send a ``Drain``."""
        with self._lock:
            self._items.append(write)  # type: ignore[arg-type]  # R is erased in the queue
            if self._scheduled:
                return False
            self._scheduled = True
            return True

    def take(self, limit: int) -> tuple[list[Write[object]], bool]:
        """Take up to ``limit`` writes, oldest first; the flag says whether more are left.

        When more are left the drain stays scheduled and the caller must send another.
        """
        with self._lock:
            count = min(limit, len(self._items))
            batch = [self._items.popleft() for _ in range(count)]
            more = bool(self._items)
            self._scheduled = more
            return batch, more

    def withdraw(self, write: Write[R]) -> bool:
        """Remove ``write`` if the writer has not taken it yet; ``True`` means it never will."""
        with self._lock:
            try:
                self._items.remove(write)  # type: ignore[arg-type]
            except ValueError:
                return False
            return True

    def unschedule(self) -> list[Write[object]]:
        """Empty the queue after its drain could not be sent; the caller fails what it gets."""
        with self._lock:
            items = list(self._items)
            self._items.clear()
            self._scheduled = False
            return items
