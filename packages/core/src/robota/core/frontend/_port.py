"""The front ends' port: subscribe to a route's notices, tell the route what the person did.

Every front end (the TUI, print mode, later the chat transports, ``robota session attach`` and
``--serve``) crosses from the engine's threads to its own side here, and only here. The route
calls ``RouteLink.deliver`` on its actor thread (it is the ``deliver`` the link connected with
``Outputs.connect``); the front end reads on its own side in the way its loop wants:

* a trio loop ``await link.receive()`` (or ``async for batch in link``): woken through a
  ``LoopPort``, one post per burst (the bridge's clause 2, as ``Coalescer`` does);
* a loop that wants a wake-up call (Textual's asyncio loop on its own thread): ``attach(wake)``
  then ``drain()`` from the loop; ``wake`` is called once per burst, from whichever thread
  delivered, so it must be the loop's thread-safe door (``App.post_message``,
  ``loop.call_soon_threadsafe``);
* a plain thread: ``wait(timeout)`` blocks on a condition.

Each read hands over everything waiting, in the route's order, as one batch: a front end then
repaints (or flushes stdout) once per burst, not once per text delta. What happens when it reads
slower than the route speaks is ``_backpressure``'s policy: nothing dropped or reordered while
it keeps up, streaming deltas merge once ``coalesce_after`` notices wait, and past ``capacity``
the subscription ends with ``Overflowed``.

Ending. ``end(reason)`` is the producer's side (the engine stopped; print mode has all its
answers): what waits stays readable, then readers get ``LinkEnded`` with the reason.
``close()`` is the reader's side (it left): what waits is discarded. Either wakes a reader
blocked on any thread, and disconnects the route (unless a newer link took the key over).
A ``deliver`` after either is dropped without raising: the route may still be speaking.

To the route: ``send`` (``UserInput``, ``NewTask``, ``UseTask``, ``ForkTask``), ``interrupt``
and ``answer`` go through ``hub.tell``, an actor tell: any thread, never blocks (the bridge's
clause 1). They work with or without a subscription being open.

Retiring. A front end that let a quiet route go (a chat transport's ``retire_quiet``) asks the
hub to forget it (``retire``, when the hub ``RetiresRoutes``); the hub asks back whether a
front end still holds it: a link hears it, or it was ``hold``-marked (the host counts the
inputs it tells a route against the route's own count, which a forgotten route starts again).
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol, cast, runtime_checkable

import trio

from .._errors import RobotaError
from ..engine import AnswerApproval, Interrupt
from ..kernel import LoopPort
from ._backpressure import CAPACITY, COALESCE_AFTER, merge_notices

if TYPE_CHECKING:
    from ..engine import FrontEndRequest, RouteNotice
    from ..events import ApprovalDecision

__all__ = ["FrontEndPort", "LinkEnded", "Overflowed", "RetiresRoutes", "RouteHub", "RouteLink"]

logger = logging.getLogger("robota.core.frontend")


class RouteHub(Protocol):
    """What the port needs of an engine (``robota.core.engine.Engine`` is one)."""

    def connect(self, route_key: str, deliver: Callable[[object], None]) -> None: ...

    def disconnect(self, route_key: str) -> None: ...

    def tell(self, route_key: str, request: FrontEndRequest) -> None: ...


@runtime_checkable
class RetiresRoutes(Protocol):
    """A hub that can forget a quiet route (``robota.core.engine.Engine`` is one)."""

    def retire(self, route_key: str, held: Callable[[], bool]) -> None: ...


class LinkEnded(RobotaError):
    """Raised by a read once the link ended and nothing waits; ``reason`` says why (``None``:
    ended on purpose, by ``end()`` or ``close()``)."""

    def __init__(self, route_key: str, reason: BaseException | None) -> None:
        self.route_key = route_key
        self.reason = reason
        why = f": {reason}" if reason is not None else ""
        super().__init__(f"route {route_key}: the subscription ended{why}")


class Overflowed(RobotaError):
    """The reader fell ``capacity`` notices behind and was cut off."""


class FrontEndPort:
    """One engine's door for front ends. Make one per engine: it knows which links hear each
    route key, so a link closed after another took its key over leaves the newer one be.

    A route speaks to the links of one port through one connection: the port fans each notice
    out to every link of the key (``shared`` subscriptions), in the route's order. A host's
    front ends (a chat transport, ``robota task send --wait``, attached terminals) all hear the
    same route that way; a terminal's own engine has one front end, which takes the key over."""

    def __init__(self, hub: RouteHub) -> None:
        self.hub = hub
        self._lock = threading.Lock()
        self._fans: dict[str, _Fan] = {}
        self._held: set[str] = set()

    def subscribe(
        self,
        route_key: str,
        *,
        capacity: int = CAPACITY,
        coalesce_after: int = COALESCE_AFTER,
        shared: bool = False,
    ) -> RouteLink:
        """Hear ``route_key`` from now on (any thread). With ``shared`` the link joins those
        already listening; without, they end (``LinkEnded``, "another subscription took it
        over") and this one is the route's only listener."""
        link = RouteLink(self, route_key, capacity=capacity, coalesce_after=coalesce_after)
        with self._lock:
            fan = self._fans.get(route_key)
            taken_over: tuple[RouteLink, ...] = ()
            if fan is None:
                fan = self._fans[route_key] = _Fan()
                # Under the lock, so two subscribes of one key connect in the order they took it.
                self.hub.connect(route_key, fan.deliver)
            elif not shared:
                taken_over = fan.links
                fan.links = ()
            fan.links = (*fan.links, link)
        for previous in taken_over:
            previous.end(RobotaError(f"route {route_key}: another subscription took it over"))
        return link

    def tell(self, route_key: str, request: FrontEndRequest) -> None:
        self.hub.tell(route_key, request)

    def hold(self, route_key: str) -> None:
        """Never let ``route_key`` be forgotten in this run (``retire``): its caller keeps
        something of it that a forgotten route would no longer match."""
        with self._lock:
            self._held.add(route_key)

    def retire(self, route_key: str) -> None:
        """Ask the hub to forget ``route_key`` once it is quiet (module docstring)."""
        hub = self.hub
        if isinstance(hub, RetiresRoutes):
            hub.retire(route_key, lambda: self._holds(route_key))

    def _holds(self, route_key: str) -> bool:
        with self._lock:
            return route_key in self._held or route_key in self._fans

    def listeners(self, route_key: str) -> int:
        """How many links hear ``route_key`` now."""
        with self._lock:
            fan = self._fans.get(route_key)
            return len(fan.links) if fan is not None else 0

    def _release(self, link: RouteLink) -> None:
        with self._lock:
            fan = self._fans.get(link.route_key)
            if fan is None or link not in fan.links:
                return
            fan.links = tuple(other for other in fan.links if other is not link)
            if not fan.links:
                del self._fans[link.route_key]
                self.hub.disconnect(link.route_key)


class _Fan:
    """The one ``deliver`` a route key is connected with: every link of the key hears each
    notice. ``links`` is replaced, never changed in place, so a delivery on a route's thread
    reads one consistent tuple without the port's lock."""

    __slots__ = ("links",)

    def __init__(self) -> None:
        self.links: tuple[RouteLink, ...] = ()

    def deliver(self, notice: object) -> None:
        for link in self.links:
            link.deliver(notice)


class RouteLink:
    """One front end's subscription to one route, and its way of telling the route things.

    See the module docstring. Readers: one kind per link (``receive`` on a trio loop, or
    ``attach`` + ``drain``, or ``wait`` on a thread).
    """

    def __init__(
        self,
        port: FrontEndPort,
        route_key: str,
        *,
        capacity: int = CAPACITY,
        coalesce_after: int = COALESCE_AFTER,
    ) -> None:
        if capacity < 1 or coalesce_after < 1:
            raise ValueError(
                f"capacity and coalesce_after must be >= 1, got {capacity} and {coalesce_after}"
            )
        self.route_key = route_key
        self.capacity = capacity
        self.coalesce_after = coalesce_after
        self.coalesced = 0
        """Deltas merged into the one before them (the reader was behind)."""
        self.dropped = 0
        """Notices that came after the link ended (or the one that overflowed it)."""
        self._port = port
        self._items: deque[object] = deque()
        self._lock = threading.Lock()
        self._readable = threading.Condition(self._lock)
        self._wake: Callable[[], object] | None = None
        self._due = False
        """A wake-up is on its way and no drain has taken the items since."""
        self._ended = False
        self._reason: BaseException | None = None
        self._trio: tuple[LoopPort, trio.lowlevel.ParkingLot] | None = None

    def __repr__(self) -> str:
        state = "ended" if self._ended else f"waiting={len(self._items)}"
        return f"<RouteLink {self.route_key!r} {state}>"

    # -- the route's side (actor threads) -------------------------------------------------------

    def deliver(self, notice: object) -> None:
        """Take one notice; never blocks, never raises. What ``Outputs`` calls."""
        overflowed = False
        wake: Callable[[], object] | None = None
        with self._lock:
            if self._ended:
                self.dropped += 1
                return
            items = self._items
            if len(items) >= self.coalesce_after:
                merged = merge_notices(items[-1], notice)
                if merged is not None:
                    items[-1] = merged
                    self.coalesced += 1
                    return  # items were waiting already: their wake-up is due
            if len(items) >= self.capacity:
                self.dropped += 1
                overflowed = True
            else:
                items.append(notice)
                self._readable.notify_all()
                wake = self._take_wake()
        if overflowed:
            self.end(Overflowed(f"the front end fell {self.capacity} notices behind its route"))
            return
        if wake is not None:
            _call(wake)

    # -- the front end's side -------------------------------------------------------------------

    def send(self, request: FrontEndRequest) -> None:
        """Tell the route what the person did (any thread, never blocks)."""
        self._port.tell(self.route_key, request)

    def interrupt(self) -> None:
        """Stop the running turn; queued prompts stay queued."""
        self.send(Interrupt())

    def answer(self, approval_id: str, decision: ApprovalDecision) -> None:
        self.send(AnswerApproval(approval_id, decision))

    def drain(self) -> list[RouteNotice]:
        """Everything waiting, oldest first (empty if nothing is); never blocks."""
        with self._lock:
            self._due = False
            batch = list(self._items)
            self._items.clear()
        return cast("list[RouteNotice]", batch)

    def attach(self, wake: Callable[[], object]) -> None:
        """Call ``wake`` (from the delivering thread) once per burst, until a drain; notices
        that waited already, or an end, wake it now."""
        with self._lock:
            self._wake = wake
            if not (self._items or self._ended) or self._due:
                return
            self._due = True
        _call(wake)

    def wait(self, timeout: float | None = None) -> list[RouteNotice]:
        """Block this thread until notices come (then all of them), at most ``timeout``
        seconds (then ``[]``). Raises ``LinkEnded`` once the link ended and nothing waits."""
        with self._lock:
            self._readable.wait_for(lambda: self._items or self._ended, timeout)
            if not self._items and self._ended:
                raise LinkEnded(self.route_key, self._reason)
        return self.drain()

    async def receive(self) -> list[RouteNotice]:
        """Wait on the trio loop until notices come, then all of them. Raises ``LinkEnded``
        once the link ended and nothing waits."""
        lot = self._trio_lot()
        while True:
            batch = self.drain()
            if batch:
                return batch
            with self._lock:
                if self._ended:
                    raise LinkEnded(self.route_key, self._reason)
            # Nothing awaits between the drain and the park: a delivery in between posts its
            # wake-up, which runs on this thread only after the park.
            await lot.park()

    def __aiter__(self) -> RouteLink:
        return self

    async def __anext__(self) -> list[RouteNotice]:
        try:
            return await self.receive()
        except LinkEnded:
            raise StopAsyncIteration from None

    # -- ending ---------------------------------------------------------------------------------

    @property
    def ended(self) -> bool:
        return self._ended

    @property
    def reason(self) -> BaseException | None:
        """Why the link ended (``None`` while open, or when it ended on purpose)."""
        return self._reason

    def end(self, reason: BaseException | None = None) -> None:
        """No more notices will be read from the route: what waits stays readable, then reads
        raise ``LinkEnded(reason)``. Any thread; only the first end counts."""
        self._finish(reason, discard=False)

    def close(self) -> None:
        """The reader leaves: what waits is discarded, a blocked reader wakes to ``LinkEnded``.
        Any thread; idempotent."""
        self._finish(None, discard=True)

    def _finish(self, reason: BaseException | None, *, discard: bool) -> None:
        with self._lock:
            if discard:
                self._items.clear()
            first = not self._ended
            if first:
                self._ended = True
                self._reason = reason
            self._readable.notify_all()
            wake = self._wake
            self._due = wake is not None  # forced: the end wakes even while one is due
        if first:
            self._port._release(self)  # the port and its links are one unit
        if wake is not None:
            _call(wake)

    def _take_wake(self) -> Callable[[], object] | None:
        """The wake-up to call for an arrival (under the lock): one per burst."""
        if self._due or self._wake is None:
            return None
        self._due = True
        return self._wake

    def _trio_lot(self) -> trio.lowlevel.ParkingLot:
        if self._trio is None:
            port, lot = LoopPort(), trio.lowlevel.ParkingLot()
            self._trio = (port, lot)
            self.attach(lambda: port.post(lot.unpark_all))
        return self._trio[1]


def _call(wake: Callable[[], object]) -> None:
    try:
        wake()
    except RuntimeError:
        pass  # the reader's loop has closed: nobody is left to wake
    except Exception:
        logger.exception("a front end's wake-up raised; the route keeps speaking")
