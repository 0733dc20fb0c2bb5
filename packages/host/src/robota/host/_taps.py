"""The host's side of the front-end port: one subscription per route, heard by many requests.

Several requests may follow one route at once (two ``task send --wait`` on the same task, a
``task stop`` beside them), and a chat transport listens to its routes through the same port.
So the host holds one shared ``RouteLink`` per route key while anyone of its requests listens
(``FrontEndPort.subscribe(shared=True)``: the transport's own link keeps hearing), reads it on
the trio loop and copies every notice to each ``tap`` open on that key. A tap is open before
the request tells the route anything, so it misses nothing the route says in answer.

It also counts the ``UserInput`` the host sent each route in this run: the route counts the
same inputs (``RouteIdle.inputs``), so a request that sent the n-th input knows the route has
answered it once an idle notice says ``inputs >= n``. Such a route is held in the port
(``FrontEndPort.hold``): a chat transport's quiet chat never gets it forgotten, which would
start the route's count again.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

import trio

from robota.core.engine import FrontEndRequest, RouteNotice, UserInput
from robota.core.frontend import FrontEndPort, RouteLink

__all__ = ["RouteTaps"]


@dataclass(slots=True)
class _Followed:
    link: RouteLink
    taps: list[trio.MemorySendChannel[RouteNotice]] = field(default_factory=list)


class RouteTaps:
    """See the module docstring. Trio thread only."""

    def __init__(self, port: FrontEndPort) -> None:
        self.port = port
        self._nursery: trio.Nursery | None = None
        self._followed: dict[str, _Followed] = {}
        self._inputs: Counter[str] = Counter()
        """Each agent's protocol-reported version, from the sessions the host saw open."""

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Where the links are read: a service of the host's tree. Ending it ends every link."""
        try:
            async with trio.open_nursery() as nursery:
                self._nursery = nursery
                task_status.started()
                await trio.sleep_forever()
        finally:
            self._nursery = None
            for followed in list(self._followed.values()):
                followed.link.close()
            self._followed.clear()

    @asynccontextmanager
    async def tap(self, route_key: str) -> AsyncIterator[trio.MemoryReceiveChannel[RouteNotice]]:
        """Every notice ``route_key`` says while the block runs (until the host stops)."""
        if self._nursery is None:
            raise RuntimeError("the host's route taps are not running")
        send, receive = trio.open_memory_channel[RouteNotice](math.inf)
        followed = self._followed.get(route_key)
        if followed is None:
            followed = _Followed(self.port.subscribe(route_key, shared=True))
            self._followed[route_key] = followed
            self._nursery.start_soon(self._pump, route_key, followed)
        followed.taps.append(send)
        try:
            yield receive
        finally:
            followed.taps.remove(send)
            send.close()
            if not followed.taps and self._followed.get(route_key) is followed:
                # The pump ends with the link; a new tap subscribes afresh.
                del self._followed[route_key]
                followed.link.close()

    def tell(self, route_key: str, request: FrontEndRequest) -> int:
        """Tell the route ``request``; the number of ``UserInput`` sent to it so far."""
        if isinstance(request, UserInput):
            self._inputs[route_key] += 1
            self.port.hold(route_key)  # its count must keep matching the route's
        self.port.tell(route_key, request)
        return self._inputs[route_key]

    async def _pump(self, route_key: str, followed: _Followed) -> None:
        async for batch in followed.link:
            for notice in batch:
                for send in list(followed.taps):
                    send.send_nowait(notice)
        for send in list(followed.taps):
            send.close()  # the link ended: whoever listens hears the end
        if self._followed.get(route_key) is followed:
            # The link was ended from the engine's side (overflow, replaced): the next tap
            # must subscribe again.
            del self._followed[route_key]
