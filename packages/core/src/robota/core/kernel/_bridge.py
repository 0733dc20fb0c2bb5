"""The one place where actor threads and the trio loop meet.

The contract (docs/architecture/threads.md §2), and the tool this module gives for each clause:

1. trio to actor: ``Address.tell`` only. Never a pykka ``ask`` on the trio thread; pykka futures
   are not awaitable.
2. actor to trio: ``LoopPort.post(fn, *args)``, fire and forget. ``fn`` runs on the trio thread
   inside a guard, because an exception escaping a ``run_sync_soon`` callback ends the whole
   trio run. A loop that already finished makes ``post`` return ``False``; it never raises.
   For high-rate streams, ``Coalescer`` appends to a deque and posts one drain per burst.
   Code that may run on either side asks ``LoopPort.here()`` and, on the loop, calls at once.
3. request/reply from trio: ``request(address, build, timeout=...)`` puts a ``Reply`` callable in
   the message (Akka's replyTo); the actor calls it; the trio side waits on a one-slot channel
   under ``trio.fail_after``.
4. Actors never call ``trio.from_thread.run*`` in steady state: it blocks the actor and deadlocks
   when the loop waits on that actor.
5. Outbound I/O goes through an ``Outbox`` per connection: bounded, never blocking the sender,
   and with an overflow policy chosen by the caller (coalesce, drop oldest, drop newest, close).

And one kind of actor that lives on the loop itself: ``LoopMailbox``, for state whose every
message leads to I/O the loop does (an agent's session table, beside the process it drives).
Telling it wakes the loop once, where an actor thread in between would be a second wake-up,
on every prompt's way out and every event's way back.
"""

from __future__ import annotations

import enum
import logging
import threading
from collections import deque
from collections.abc import Callable, Hashable
from typing import Any, Generic, TypeVar

import trio

from .._errors import KernelError, RequestTimeout
from ._address import Address, DeadLetters

__all__ = [
    "Coalescer",
    "LoopMailbox",
    "LoopPort",
    "Outbox",
    "OutboxClosed",
    "Overflow",
    "Reply",
    "request",
]

logger = logging.getLogger("robota.core.bridge")

T = TypeVar("T")


def _guarded(fn: Callable[..., object], args: tuple[Any, ...]) -> None:
    try:
        fn(*args)
    except Exception:
        logger.exception("bridge callback %s raised; the loop keeps running", _name(fn))


def _name(fn: Callable[..., object]) -> str:
    return getattr(fn, "__qualname__", None) or repr(fn)


class LoopPort:
    """An actor's handle on the trio loop: post callbacks that run on the trio thread.

    Create it on the trio thread (it captures the current run's token) and hand it to actors.
    """

    __slots__ = ("_token",)

    def __init__(self, token: trio.lowlevel.TrioToken | None = None) -> None:
        self._token = token if token is not None else trio.lowlevel.current_trio_token()

    def post(self, fn: Callable[..., object], *args: Any) -> bool:
        """Run ``fn(*args)`` soon on the trio thread. Returns ``False`` if the loop is gone.

        Safe from any thread, the trio thread included. ``fn`` may raise: the exception is
        logged, not propagated, so a bad callback cannot end the run.
        """
        try:
            self._token.run_sync_soon(_guarded, fn, args)
        except trio.RunFinishedError:
            return False
        return True

    def here(self) -> bool:
        """Whether the caller runs on this port's loop, in its run: there a callback can be
        called at once instead of posted (one loop turn fewer; ``post`` is for the others)."""
        try:
            return trio.lowlevel.current_trio_token() is self._token
        except RuntimeError:  # no trio run on this thread
            return False


class LoopMailbox:
    """A mailbox whose messages ``receive`` handles on the trio thread, one at a time, in the
    order told.

    ``tell`` is safe from any thread and never blocks. Code already on the trio thread (the I/O
    the state belongs to) calls ``handle`` instead: the same handling, without the trip round
    the loop. A ``handle`` from within ``receive`` (a callback that reports back) is handled
    right after the current message, never inside it. ``receive`` must not block; an
    exception there is logged and passed to ``on_error`` (the owner's "crash": typically it
    fails the service the state belongs to), and the next message is handled as usual.
    Messages told before ``open`` wait and are handled, in order, when it is called; once the
    loop has finished they are dead letters.
    """

    __slots__ = (
        "_dead_letters",
        "_handling",
        "_later",
        "_lock",
        "_on_error",
        "_port",
        "_receive",
        "_waiting",
        "name",
    )

    def __init__(
        self,
        name: str,
        receive: Callable[[Any], object],
        *,
        on_error: Callable[[Exception], object] | None = None,
        dead_letters: DeadLetters | None = None,
    ) -> None:
        self.name = name
        self._receive = receive
        self._on_error = on_error
        self._dead_letters = dead_letters if dead_letters is not None else DeadLetters()
        self._lock = threading.Lock()
        self._port: LoopPort | None = None
        self._waiting: deque[object] = deque()
        self._handling = False
        self._later: deque[object] = deque()

    def __repr__(self) -> str:
        state = "open" if self._port is not None else f"waiting={len(self._waiting)}"
        return f"<LoopMailbox {self.name!r} {state}>"

    def tell(self, message: object) -> None:
        with self._lock:
            port = self._port
            if port is None:
                self._waiting.append(message)
                return
        if not port.post(self.handle, message):
            self._dead_letters.post(self.name, message, "the trio loop has finished")

    def open(self, port: LoopPort | None = None) -> None:
        """Start handling on the current trio run (call it on the trio thread), the messages
        that waited first. Opening again, on the same run or a later one, moves the mailbox."""
        port = port if port is not None else LoopPort()
        with self._lock:
            waiting = list(self._waiting)
            self._waiting.clear()
            self._port = port
        for message in waiting:
            self.handle(message)

    def handle(self, message: object) -> None:
        """Handle ``message`` now, or right after the message being handled. Only on the trio
        thread."""
        if self._handling:
            self._later.append(message)
            return
        self._handling = True
        try:
            self._handle_one(message)
            while self._later:
                self._handle_one(self._later.popleft())
        finally:
            self._handling = False

    def _handle_one(self, message: object) -> None:
        try:
            self._receive(message)
        except Exception as error:
            logger.exception("%s: handling %s failed", self.name, type(message).__qualname__)
            if self._on_error is not None:
                self._on_error(error)


class Reply(Generic[T]):
    """A one-shot answer to a request, safe to call from any thread, any number of times.

    Only the first call counts; later calls and calls after the requester gave up are ignored.
    """

    __slots__ = ("_port", "_send")

    def __init__(self, port: LoopPort, send: trio.MemorySendChannel[tuple[bool, Any]]) -> None:
        self._port = port
        self._send = send

    def __call__(self, value: T) -> None:
        self._port.post(self._deliver, (True, value))

    def fail(self, error: BaseException) -> None:
        """Make the requester raise ``error``."""
        self._port.post(self._deliver, (False, error))

    def _deliver(self, outcome: tuple[bool, Any]) -> None:
        try:
            self._send.send_nowait(outcome)
        except (trio.WouldBlock, trio.ClosedResourceError, trio.BrokenResourceError):
            pass  # answered already, or the requester timed out and left


async def request(
    address: Address,
    build: Callable[[Reply[T]], object],
    *,
    timeout: float,
    port: LoopPort | None = None,
) -> T:
    """Send ``build(reply)`` to ``address`` and wait for the reply, at most ``timeout`` seconds.

    Raises ``RequestTimeout`` when no reply comes in time, or the error the actor passed to
    ``Reply.fail``.
    """
    send, receive = trio.open_memory_channel[tuple[bool, Any]](1)
    reply: Reply[T] = Reply(port if port is not None else LoopPort(), send)
    with send, receive:
        address.tell(build(reply))
        try:
            with trio.fail_after(timeout):
                ok, value = await receive.receive()
        except trio.TooSlowError:
            raise RequestTimeout(f"no reply from {address.name!r} within {timeout:g} s") from None
    if ok:
        return value  # type: ignore[no-any-return]
    raise value


class Coalescer(Generic[T]):
    """Batch a high-rate stream from actor threads into one trio callback per burst.

    ``push`` appends to a deque and posts a drain only when none is pending; the drain hands
    everything queued so far to ``sink`` on the trio thread. ``sink`` must not block.
    """

    __slots__ = ("_items", "_lock", "_port", "_scheduled", "_sink")

    def __init__(self, port: LoopPort, sink: Callable[[list[T]], object]) -> None:
        self._port = port
        self._sink = sink
        self._items: deque[T] = deque()
        self._lock = threading.Lock()
        self._scheduled = False

    def push(self, item: T) -> None:
        self._items.append(item)
        with self._lock:
            if self._scheduled:
                return
            self._scheduled = True
        if not self._port.post(self._drain):
            with self._lock:
                self._scheduled = False

    def _drain(self) -> None:
        with self._lock:
            self._scheduled = False
        items = self._items
        batch = [items.popleft() for _ in range(len(items))]
        if batch:
            self._sink(batch)


class Overflow(enum.Enum):
    """What an ``Outbox`` does when an item arrives and it is full."""

    DROP_OLDEST = "drop-oldest"
    """Make room by discarding the oldest pending item (live views: newest state matters)."""
    DROP_NEWEST = "drop-newest"
    """Discard the arriving item (the pending ones are promised, the new one is not)."""
    COALESCE = "coalesce"
    """Replace the pending item with the same key in place; if none, drop the oldest."""
    CLOSE = "close"
    """Close the outbox: a client that cannot keep up is cut off, not waited for."""


class OutboxClosed(KernelError):
    """Raised by ``Outbox.receive`` after the outbox closed because it overflowed."""


class Outbox(Generic[T]):
    """A bounded outbound queue for one connection, on the trio thread.

    ``send_nowait`` never blocks and never raises; it returns whether the item was accepted.
    ``receive`` waits for the next item; after ``close()`` it drains what is left, then raises
    ``trio.EndOfChannel`` (or ``OutboxClosed`` when the close came from overflow).
    """

    def __init__(
        self,
        capacity: int,
        overflow: Overflow,
        *,
        key: Callable[[T], Hashable] | None = None,
    ) -> None:
        if capacity < 1:
            raise ValueError(f"capacity must be >= 1, got {capacity}")
        if overflow is Overflow.COALESCE and key is None:
            raise ValueError("Overflow.COALESCE needs a key function")
        self.capacity = capacity
        self.overflow = overflow
        self.dropped = 0
        self._key = key
        self._items: deque[T] = deque()
        self._lot = trio.lowlevel.ParkingLot()
        self._closed = False
        self._overflowed = False

    def __len__(self) -> int:
        return len(self._items)

    @property
    def closed(self) -> bool:
        return self._closed

    def send_nowait(self, item: T) -> bool:
        if self._closed:
            self.dropped += 1
            return False
        if self._key is not None and self.overflow is Overflow.COALESCE:
            key = self._key(item)
            for index, pending in enumerate(self._items):
                if self._key(pending) == key:
                    self._items[index] = item
                    return True
        if len(self._items) >= self.capacity:
            if self.overflow is Overflow.DROP_NEWEST:
                self.dropped += 1
                return False
            if self.overflow is Overflow.CLOSE:
                self.dropped += 1
                self._overflowed = True
                self.close()
                return False
            self._items.popleft()
            self.dropped += 1
        self._items.append(item)
        self._lot.unpark()
        return True

    async def receive(self) -> T:
        while not self._items:
            if self._closed:
                if self._overflowed:
                    raise OutboxClosed(f"outbox overflowed its capacity of {self.capacity}")
                raise trio.EndOfChannel
            await self._lot.park()
        return self._items.popleft()

    def close(self) -> None:
        self._closed = True
        self._lot.unpark_all()

    def __aiter__(self) -> Outbox[T]:
        return self

    async def __anext__(self) -> T:
        try:
            return await self.receive()
        except trio.EndOfChannel:
            raise StopAsyncIteration from None
