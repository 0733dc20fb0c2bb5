"""The attach carrier's seq and resume, in-process: the session's ``AttachDesk`` on real
socket pairs and a route whose notices the test sends. The session's notices are numbered
once, whoever is attached; a terminal that comes back with its last seq gets exactly what it
missed and then the live stream, or ``resume_gap``; a version 1 terminal gets what it got."""

from __future__ import annotations

import json
import socket as stdlib_socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
import trio

from robota.core.control import HandlerError
from robota.core.engine import RouteReply
from robota.core.frontend import FrontEndPort
from robota.core.protocol import PROTOCOL_VERSION, notice_from_json
from robota.host import _attach
from robota.host._attach import AttachDesk, SessionAttach, attach_version

from . import _talking_hub
from ._talking_hub import ROUTE


class TalkingHub(_talking_hub.TalkingHub):
    """The budget tests' hub, which says a note when the test asks."""

    def say(self, text: str, surface: str | None = None) -> None:
        assert self.deliver is not None, "nobody hears the route"
        self.deliver(RouteReply(ROUTE, text, "info", surface=surface))


class Terminal:
    """The terminal's end of one attach connection: frames as they come."""

    def __init__(self, stream: trio.SocketStream) -> None:
        self.stream = stream
        self.buffer = b""

    async def frame(self) -> dict[str, Any]:
        while b"\n" not in self.buffer:
            chunk = await self.stream.receive_some(65536)
            assert chunk, "the connection ended"
            self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        frame: dict[str, Any] = json.loads(line)
        return frame

    async def said(self, count: int) -> list[tuple[int, str]]:
        """The next ``count`` notices: (seq, text)."""
        out = []
        while len(out) < count:
            frame = await self.frame()
            assert frame["type"] == "notice", frame
            out.append((frame["seq"], notice_from_json(frame["notice"]).text))
        return out


@asynccontextmanager
async def attached(
    nursery: trio.Nursery, desk: AttachDesk, request: SessionAttach
) -> AsyncIterator[Terminal]:
    ours, theirs = stdlib_socket.socketpair()
    stream = trio.SocketStream(trio.socket.from_stdlib_socket(ours))
    terminal = Terminal(trio.SocketStream(trio.socket.from_stdlib_socket(theirs)))
    done = trio.Event()

    async def serve() -> None:
        try:
            await desk.attach(request, stream)
        finally:
            await stream.aclose()
            done.set()

    nursery.start_soon(serve)
    try:
        yield terminal
    finally:
        await terminal.stream.aclose()
        await done.wait()


async def settle() -> None:
    for _ in range(5):
        await trio.sleep(0.01)


V2 = PROTOCOL_VERSION


async def test_a_terminal_that_comes_back_gets_exactly_what_it_missed_then_the_live_stream() -> (
    None
):
    hub = TalkingHub()
    desk = AttachDesk(FrontEndPort(hub), ROUTE, lambda g: "task", dict)
    with trio.fail_after(30):
        async with trio.open_nursery() as nursery:
            await nursery.start(desk.run)
            hub.say("before anyone")  # numbered though nobody is attached
            await settle()
            async with attached(nursery, desk, SessionAttach("gen", protocol=V2)) as first:
                hello = await first.frame()
                assert (hello["type"], hello["protocol"], hello["seq"]) == ("hello", 2, 1)
                hub.say("one")
                hub.say("two")
                assert await first.said(2) == [(2, "one"), (3, "two")]
            assert desk.surfaces == {}
            hub.say("while away 1")
            hub.say("for attach:1 alone", surface="attach:1")
            hub.say("while away 2")
            await settle()
            request = SessionAttach("gen", protocol=V2, last_seq=3)
            async with attached(nursery, desk, request) as back:
                hello = await back.frame()
                assert (hello["seq"], hello["surface"]) == (6, "attach:2")
                hub.say("live")
                assert await back.said(3) == [
                    (4, "while away 1"),
                    (6, "while away 2"),  # said to the surface this terminal was, not it
                    (7, "live"),
                ]
            nursery.cancel_scope.cancel()
    assert hub.deliver is None, "the session's subscription ended with the desk"


async def test_a_resume_the_log_no_longer_reaches_is_told_as_a_gap(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(_attach, "RESUME_NOTICES", 3)
    hub = TalkingHub()
    desk = AttachDesk(FrontEndPort(hub), ROUTE, lambda g: "task", dict)
    with trio.fail_after(30):
        async with trio.open_nursery() as nursery:
            await nursery.start(desk.run)
            for n in range(1, 7):
                hub.say(f"n{n}")
            await settle()
            for last_seq, replayed in [(2, None), (3, [4, 5, 6]), (6, []), (9, None)]:
                request = SessionAttach("gen", protocol=V2, last_seq=last_seq)
                async with attached(nursery, desk, request) as terminal:
                    assert (await terminal.frame())["type"] == "hello"
                    if replayed is None:
                        gap = await terminal.frame()
                        assert gap == {
                            "type": "resume_gap",
                            "lastSeq": last_seq,
                            "firstSeq": 4,
                            "latestSeq": 6,
                        }
                    else:
                        got = await terminal.said(len(replayed))
                        assert [seq for seq, _ in got] == replayed
            nursery.cancel_scope.cancel()


async def test_a_version_1_terminal_gets_the_hello_it_knew_and_the_live_stream() -> None:
    hub = TalkingHub()
    desk = AttachDesk(FrontEndPort(hub), ROUTE, lambda g: "task", dict)
    with trio.fail_after(30):
        async with trio.open_nursery() as nursery:
            await nursery.start(desk.run)
            hub.say("before")
            await settle()
            async with attached(nursery, desk, SessionAttach("gen")) as old:
                hello = await old.frame()
                assert hello["protocol"] == 1 and "seq" not in hello
                hub.say("live")
                assert [text for _, text in await old.said(1)] == ["live"]
                await old.stream.send_all(b'{"type": "submit"}\n')
                error = await old.frame()
                assert error["type"] == "protocol_error" and error["field"] == "submit.prompt"
                assert "expected a string, found null" in error["message"]
            nursery.cancel_scope.cancel()


@pytest.mark.parametrize(
    ("protocol", "last_seq", "version", "field"),
    [
        (1, None, 1, None),
        (2, None, 2, None),
        (2, 0, 2, None),
        (99, 5, PROTOCOL_VERSION, None),  # a newer terminal: the lower version is spoken
        (1, 5, None, "last_seq"),  # resuming needs version 2
        (2, -1, None, "last_seq"),
        (2, 2**53, None, "last_seq"),
        (0, None, None, "protocol"),
    ],
)
def test_the_version_spoken(
    protocol: int, last_seq: int | None, version: int | None, field: str | None
) -> None:
    request = SessionAttach("gen", protocol=protocol, last_seq=last_seq)
    if version is not None:
        assert attach_version(request) == version
        return
    with pytest.raises(HandlerError) as refused:
        attach_version(request)
    assert refused.value.field == field


async def test_a_resume_across_a_time_nobody_heard_the_route_is_a_gap_not_a_silent_miss() -> None:
    hub = TalkingHub()
    desk = AttachDesk(
        FrontEndPort(hub), ROUTE, lambda g: "task", dict
    )  # not run: held by terminals
    with trio.fail_after(30):
        async with trio.open_nursery() as nursery:
            async with attached(nursery, desk, SessionAttach("gen", protocol=V2)) as first:
                assert (await first.frame())["seq"] == 0
                hub.say("one")
                hub.say("two")
                assert await first.said(2) == [(1, "one"), (2, "two")]
            assert hub.deliver is None, "nobody holds the route: what it says goes unheard"
            request = SessionAttach("gen", protocol=V2, last_seq=2)
            async with attached(nursery, desk, request) as back:
                hello = await back.frame()
                assert hello["seq"] == 3, "the loss is numbered"
                gap = {"type": "resume_gap", "lastSeq": 2, "firstSeq": 4, "latestSeq": 3}
                assert await back.frame() == gap
                hub.say("three")
                assert await back.said(1) == [(4, "three")]
            request = SessionAttach("gen", protocol=V2, last_seq=4)
            async with attached(nursery, desk, request) as again:
                assert (await again.frame())["seq"] == 5
                assert (await again.frame())["type"] == "resume_gap"
                hub.say("four")
                assert await again.said(1) == [(6, "four")]
