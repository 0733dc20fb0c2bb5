"""Terminals attached to a background session: at most ``MAX_SURFACES`` at once, each its own
shared subscription to the session's route, over its own control connection.

``session.attach`` names the process start (its generation) and a mode: ``drive`` (what the
surface types reaches the route: a prompt, a steer, a command, an interrupt, an approval's
answer) or ``observe`` (it only watches; what it types is refused with a note to it alone).
The connection then carries the frames of ``robota.core.frontend._wire`` (newline JSON,
``MAX_FRAME`` bytes at most: a longer frame ends that connection only).

A surface that stops reading is cut off, never holding the session: what waits unsent to it
is counted in bytes, and past ``BYTE_BUDGET`` (or a send that takes ``SEND_TIMEOUT``) its
connection is closed. Leaving (``/exit``, Ctrl-D, a closed terminal) ends the connection and
nothing else: a running turn goes on. Each surface joins the route as ``attach:N``
(``SurfaceJoined``, driving or observing) and leaves it (``SurfaceLeft``); its answers name it.
Who may answer an approval, and what becomes of one nobody can answer, is the engine's rule
(``robota.core.engine``): the first answer wins, the others are refused to their surface alone.
"""

from __future__ import annotations

import itertools
import logging
import math
from collections.abc import Callable
from dataclasses import dataclass
from dataclasses import replace as _replace
from typing import ClassVar

import trio

from robota.core.control import HandlerError, LineSplitter, Overlong
from robota.core.engine import AnswerApproval, RouteReply, SurfaceJoined, SurfaceLeft
from robota.core.frontend import (
    MAX_FRAME,
    WIRE_PROTOCOL,
    FrontEndPort,
    WireError,
    decode_frame,
    encode_frame,
    frame_to_request,
    notice_to_json,
)

__all__ = ["BYTE_BUDGET", "MAX_SURFACES", "AttachDesk", "SessionAttach"]

logger = logging.getLogger("robota.cli.session")

MAX_SURFACES = 4
BYTE_BUDGET = 8 * 1024 * 1024
"""Bytes that may wait unsent to one surface before it is cut off."""
SEND_TIMEOUT = 30.0
OBSERVING = "this terminal only observes the session: what it types is not sent"


@dataclass(frozen=True, slots=True)
class SessionAttach:
    """Attach this connection to the session (the generation names its start)."""

    TYPE: ClassVar[str] = "session.attach"
    generation: str
    mode: str = "drive"


class AttachDesk:
    """The session's attached surfaces (trio thread only)."""

    def __init__(
        self,
        port: FrontEndPort,
        route_key: str,
        check: Callable[[str], str],
        hello: Callable[[], dict[str, object]],
    ) -> None:
        self.port = port
        self.route_key = route_key
        self._check = check
        self._hello = hello
        self._numbers = itertools.count(1)
        self.surfaces: dict[int, str] = {}
        """Attached surfaces by number: their mode."""

    @property
    def drivers(self) -> int:
        return sum(1 for mode in self.surfaces.values() if mode == "drive")

    async def attach(self, request: SessionAttach, stream: trio.SocketStream) -> None:
        self._check(request.generation)
        if request.mode not in ("drive", "observe"):
            raise HandlerError("bad_request", "session.attach: 'mode' is drive or observe", "mode")
        if len(self.surfaces) >= MAX_SURFACES:
            raise HandlerError("busy", f"the session has {MAX_SURFACES} surfaces attached")
        number = next(self._numbers)
        surface = f"attach:{number}"
        self.surfaces[number] = request.mode
        link = self.port.subscribe(self.route_key, shared=True)
        self.port.tell(self.route_key, SurfaceJoined(surface, request.mode == "drive"))
        send, receive = trio.open_memory_channel[bytes](math.inf)
        queued = [0]
        hello = {"type": "hello", "protocol": WIRE_PROTOCOL, "mode": request.mode, **self._hello()}
        hello["surface"] = surface
        try:
            async with trio.open_nursery() as nursery:

                def put(frame: dict[str, object]) -> None:
                    line = encode_frame(frame)
                    queued[0] += len(line)
                    if queued[0] > BYTE_BUDGET:
                        logger.info("session: surface attach:%d cut off (not reading)", number)
                        nursery.cancel_scope.cancel()
                        return
                    send.send_nowait(line)

                async def write() -> None:
                    async for line in receive:
                        with trio.move_on_after(SEND_TIMEOUT) as waited:
                            await stream.send_all(line)
                        if waited.cancelled_caught:
                            break
                        queued[0] -= len(line)
                    nursery.cancel_scope.cancel()

                async def pump() -> None:
                    seq = itertools.count(1)
                    async for batch in link:
                        for notice in batch:
                            if isinstance(notice, RouteReply) and notice.surface not in (
                                None,
                                surface,
                            ):
                                continue  # said to another surface alone
                            put(
                                {
                                    "type": "notice",
                                    "seq": next(seq),
                                    "notice": notice_to_json(notice),
                                }
                            )
                    nursery.cancel_scope.cancel()  # the session is stopping

                async def read() -> None:
                    await self._read(stream, request.mode, surface, put)
                    nursery.cancel_scope.cancel()

                put(hello)
                nursery.start_soon(write)
                nursery.start_soon(pump)
                nursery.start_soon(read)
        except* (trio.BrokenResourceError, trio.ClosedResourceError):
            pass  # the terminal went away: only this connection ends
        finally:
            link.close()
            del self.surfaces[number]
            self.port.tell(self.route_key, SurfaceLeft(surface))

    async def _read(
        self,
        stream: trio.SocketStream,
        mode: str,
        surface: str,
        put: Callable[[dict[str, object]], None],
    ) -> None:
        lines = LineSplitter(MAX_FRAME)
        while True:
            data = await stream.receive_some(64 * 1024)
            if not data:
                return
            for line in lines.feed(data):
                if isinstance(line, Overlong):
                    return  # an oversized frame ends this connection only
                try:
                    frame = decode_frame(line)
                    request = frame_to_request(frame)
                except WireError as error:
                    put({"type": "protocol_error", "message": str(error)})
                    continue
                if mode != "drive":
                    note = RouteReply(self.route_key, OBSERVING, "error")
                    put({"type": "notice", "seq": 0, "notice": notice_to_json(note)})
                    continue
                if isinstance(request, AnswerApproval):
                    request = _replace(request, surface=surface)
                self.port.tell(self.route_key, request)
