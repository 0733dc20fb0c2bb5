"""Terminals attached to a background session: at most ``MAX_SURFACES`` at once, each over its
own control connection, all fed from the session's one numbered stream of notices.

``session.attach`` names the process start (its generation), a mode, and optionally the
protocol version the terminal speaks and the last ``seq`` it holds: ``drive`` (what the surface
types reaches the route: a prompt, a steer, a command, an interrupt, an approval's answer) or
``observe`` (it only watches; what it types is refused with a note to it alone). The
connection then carries the attach frames of ``robota.core.protocol`` (newline JSON,
``MAX_FRAME`` bytes at most: a longer frame ends that connection only; a wrong one is answered
with ``protocol_error`` and the connection reads on).

The session's notices are numbered once, whoever is attached: the desk hears the route through
one subscription, held for the session's life once ``run`` runs (and, before that or without
it, while a terminal is attached), and keeps the newest in a ``SeqLog`` (``RESUME_NOTICES``,
``RESUME_BYTES``). A terminal that comes back with ``last_seq`` gets what it missed, then the
live stream, with nothing lost or repeated in between (the replay and the joining happen in one
step on the trio thread), or ``resume_gap`` when the log no longer reaches back that far. A note
said to one terminal alone (a ``RouteReply`` naming a surface) is numbered like any notice and
sent to that surface only; a resuming terminal has a new surface name, so it is not replayed.
When the subscription is opened again (it fell behind and ended, or nobody held it), the route
may have spoken unheard: the log spends a seq on that loss, and a resume from before it is a
``resume_gap`` rather than a replay that would silently miss notices.

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
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import ClassVar

import trio

from robota.core import LoopPort, replace
from robota.core.control import HandlerError
from robota.core.engine import (
    AnswerApproval,
    FrontEndRequest,
    RouteReply,
    SurfaceJoined,
    SurfaceLeft,
    UserInput,
)
from robota.core.frontend import FrontEndPort, RouteLink
from robota.core.protocol import (
    MAX_FRAME,
    MAX_SEQ,
    PROTOCOL_VERSION,
    LineSplitter,
    Overlong,
    SeqLog,
    WireError,
    decode_frame,
    encode_frame,
    frame_to_request,
    notice_to_json,
    resume_gap,
)

__all__ = ["BYTE_BUDGET", "MAX_SURFACES", "AttachDesk", "SessionAttach", "surface_requests"]

logger = logging.getLogger("robota.host.session")

MAX_SURFACES = 4
BYTE_BUDGET = 8 * 1024 * 1024
"""Bytes that may wait unsent to one surface before it is cut off."""
SEND_TIMEOUT = 30.0
RESUME_NOTICES = 4096
RESUME_BYTES = 4 * 1024 * 1024
"""How much of the session's stream is kept for a terminal that comes back."""
OBSERVING = "this terminal only observes the session: what it types is not sent"


@dataclass(frozen=True, slots=True)
class SessionAttach:
    """Attach this connection to the session (the generation names its start). ``protocol``
    is the version the terminal speaks (none said: 1); ``last_seq``, from version 2, the last
    notice it holds from an earlier connection: it is sent what came after."""

    TYPE: ClassVar[str] = "session.attach"
    generation: str
    mode: str = "drive"
    protocol: int = 1
    last_seq: int | None = None


def attach_version(request: SessionAttach) -> int:
    """The version both sides speak, or ``HandlerError`` naming the field that is wrong."""
    if request.protocol < 1:
        raise HandlerError("bad_request", "session.attach: 'protocol' is 1 or more", "protocol")
    version = min(request.protocol, PROTOCOL_VERSION)
    if request.last_seq is not None:
        if version < 2:
            message = "session.attach: 'last_seq' needs protocol 2"
            raise HandlerError("bad_request", message, "last_seq")
        if not 0 <= request.last_seq <= MAX_SEQ:
            message = f"session.attach: 'last_seq' is an integer from 0 to {MAX_SEQ}"
            raise HandlerError("bad_request", message, "last_seq")
    return version


class _Attached:
    """One attached terminal as the stream sees it: its surface and how to send it a line."""

    __slots__ = ("put", "scope", "surface")

    def __init__(self, surface: str, put: Callable[[bytes], None], scope: trio.CancelScope) -> None:
        self.surface = surface
        self.put = put
        self.scope = scope

    def hears(self, addressee: str | None) -> bool:
        return addressee is None or addressee == self.surface


class AttachDesk:
    """The session's attached surfaces and its numbered stream (trio thread only)."""

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
        self.log: SeqLog[tuple[bytes, str | None] | None] = SeqLog(
            max_items=RESUME_NOTICES, max_bytes=RESUME_BYTES
        )
        """The session's notices as sent (their line, and the one surface a note is for);
        ``None`` where notices may have gone unheard (the subscription was opened again)."""
        self._heard = False
        """A subscription was open before: opening one again may follow a loss."""
        self._attached: dict[int, _Attached] = {}
        self._feed: RouteLink | None = None
        self._holders = 0

    @property
    def drivers(self) -> int:
        return sum(1 for mode in self.surfaces.values() if mode == "drive")

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Hear the route for the session's life, so a terminal that comes back after none was
        attached still resumes from its last seq."""
        self._hold()
        try:
            task_status.started()
            await trio.sleep_forever()
        finally:
            self._release()

    # -- the stream ----------------------------------------------------------------------------

    def _hold(self) -> None:
        self._holders += 1
        if self._feed is None:
            if self._heard:
                self.log.publish(None, 1)  # what the route said meanwhile went unheard
            self._heard = True
            link = self.port.subscribe(self.route_key, shared=True)
            self._feed = link
            loop = LoopPort()
            link.attach(lambda: loop.post(self._drain, link))

    def _release(self) -> None:
        self._holders -= 1
        if self._holders == 0 and self._feed is not None:
            link, self._feed = self._feed, None
            link.close()

    def _drain(self, link: RouteLink) -> None:
        if link is not self._feed:
            return  # a link closed since: its last wake-up
        for notice in link.drain():
            addressee = notice.surface if isinstance(notice, RouteReply) else None
            seq = self.log.seq + 1
            line = encode_frame({"type": "notice", "seq": seq, "notice": notice_to_json(notice)})
            self.log.publish((line, addressee), len(line))
            for attached in list(self._attached.values()):
                if attached.hears(addressee):
                    attached.put(line)
        if link.ended:  # the route's side ended it: the session is stopping
            self._feed = None
            for attached in list(self._attached.values()):
                attached.scope.cancel()

    # -- one terminal --------------------------------------------------------------------------

    async def attach(self, request: SessionAttach, stream: trio.SocketStream) -> None:
        self._check(request.generation)
        if request.mode not in ("drive", "observe"):
            raise HandlerError("bad_request", "session.attach: 'mode' is drive or observe", "mode")
        version = attach_version(request)
        if len(self.surfaces) >= MAX_SURFACES:
            raise HandlerError("busy", f"the session has {MAX_SURFACES} surfaces attached")
        number = next(self._numbers)
        surface = f"attach:{number}"
        self.surfaces[number] = request.mode
        self.port.tell(self.route_key, SurfaceJoined(surface, request.mode == "drive"))
        send, receive = trio.open_memory_channel[bytes](math.inf)
        queued = [0]
        self._hold()  # first: opening the subscription may number a loss
        try:
            hello = {"type": "hello", "protocol": version, "mode": request.mode, **self._hello()}
            hello["surface"] = surface
            if version >= 2:
                hello["seq"] = self.log.seq
            async with trio.open_nursery() as nursery:

                def put_line(line: bytes) -> None:
                    queued[0] += len(line)
                    if queued[0] > BYTE_BUDGET:
                        logger.info("session: surface attach:%d cut off (not reading)", number)
                        nursery.cancel_scope.cancel()
                        return
                    send.send_nowait(line)

                def put(frame: dict[str, object]) -> None:
                    put_line(encode_frame(frame))

                async def write() -> None:
                    async for line in receive:
                        with trio.move_on_after(SEND_TIMEOUT) as waited:
                            await stream.send_all(line)
                        if waited.cancelled_caught:
                            break
                        queued[0] -= len(line)
                    nursery.cancel_scope.cancel()

                async def read() -> None:
                    await self._read(stream, request.mode, surface, put)
                    nursery.cancel_scope.cancel()

                self._join(number, _Attached(surface, put_line, nursery.cancel_scope), hello)
                if request.last_seq is not None:
                    self._replay(self._attached[number], request.last_seq)
                nursery.start_soon(write)
                nursery.start_soon(read)
        except* (trio.BrokenResourceError, trio.ClosedResourceError):
            pass  # the terminal went away: only this connection ends
        finally:
            self._attached.pop(number, None)
            self._release()
            del self.surfaces[number]
            self.port.tell(self.route_key, SurfaceLeft(surface))

    def _join(self, number: int, attached: _Attached, hello: dict[str, object]) -> None:
        """The hello, then the live stream; with ``_replay`` right after, in the same step on
        the trio thread (nothing awaited), the replay ends where the live stream begins."""
        attached.put(encode_frame(hello))
        self._attached[number] = attached
        if self._feed is None:  # the route already ended: the session is stopping
            attached.scope.cancel()

    def _replay(self, attached: _Attached, last_seq: int) -> None:
        """What came after ``last_seq`` that this terminal may see, or ``resume_gap``."""
        replay = self.log.replay(last_seq)
        losses = [i for i, kept in enumerate(replay or ()) if kept is None]
        if replay is None or losses:
            gap = resume_gap(self.log, last_seq)
            if losses:  # what came after the last loss is whole
                gap["firstSeq"] = last_seq + losses[-1] + 2
            attached.put(encode_frame(gap))
            return
        for kept in replay:
            if kept is not None and attached.hears(kept[1]):
                attached.put(kept[0])

    async def _read(
        self,
        stream: trio.SocketStream,
        mode: str,
        surface: str,
        put: Callable[[dict[str, object]], None],
    ) -> None:
        async for said in surface_requests(stream):
            if isinstance(said, dict):
                put(said)  # a protocol error, said to this surface
                continue
            request = said
            if mode != "drive":
                note = RouteReply(self.route_key, OBSERVING, "error")
                frame = {"type": "notice", "seq": self.log.seq, "notice": notice_to_json(note)}
                put(frame)
                continue
            if isinstance(request, AnswerApproval):
                request = replace(request, surface=surface)
            elif isinstance(request, UserInput):  # what it starts names this terminal
                request = replace(request, message_id=surface)
            self.port.tell(self.route_key, request)


async def surface_requests(
    stream: trio.SocketStream,
) -> AsyncIterator[FrontEndRequest | dict[str, object]]:
    """The requests a terminal's frames on ``stream`` make, or for a frame that is none the
    ``protocol_error`` to answer it with (the stream reads on); ends with the stream, or at
    an oversized frame (it ends that connection only)."""
    lines = LineSplitter(MAX_FRAME)
    while True:
        data = await stream.receive_some(64 * 1024)
        if not data:
            return
        for line in lines.feed(data):
            if isinstance(line, Overlong):
                return
            try:
                yield frame_to_request(decode_frame(line))
            except WireError as error:
                message: dict[str, object] = {"type": "protocol_error", "message": str(error)}
                if error.path is not None:
                    message["field"] = error.path
                yield message
