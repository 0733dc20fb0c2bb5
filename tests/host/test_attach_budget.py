"""A surface that stops reading is cut off, in-process: the session's ``AttachDesk`` on a real
socket pair, a route that talks (a hub whose notices the test delivers), and a reader that
never reads."""

from __future__ import annotations

import socket as stdlib_socket

import pytest
import trio

from robota.core.engine import (
    AnswerApproval,
    RouteReply,
    SurfaceJoined,
    SurfaceLeft,
)
from robota.core.frontend import FrontEndPort
from robota.host import _attach
from robota.host._attach import AttachDesk, SessionAttach

from ._talking_hub import ROUTE, TalkingHub


async def test_a_surface_that_stops_reading_is_cut_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_attach, "BYTE_BUDGET", 64 * 1024)
    hub = TalkingHub()
    desk = AttachDesk(FrontEndPort(hub), ROUTE, lambda g: "task", lambda: {"id": "x"})
    ours, theirs = stdlib_socket.socketpair()
    theirs.setsockopt(stdlib_socket.SOL_SOCKET, stdlib_socket.SO_RCVBUF, 4096)
    stream = trio.SocketStream(trio.socket.from_stdlib_socket(ours))
    with trio.fail_after(30):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(desk.attach, SessionAttach("gen"), stream)
            while hub.deliver is None:
                await trio.sleep(0.01)
            assert desk.surfaces == {1: "drive"}
            big = "x" * 4096
            while desk.surfaces:  # the reader never reads: the budget runs out
                hub.deliver(RouteReply(ROUTE, big))
                await trio.sleep(0)
    await stream.aclose()
    assert hub.told == [SurfaceJoined("attach:1", True), SurfaceLeft("attach:1")], (
        "joining and leaving were told to the route once each"
    )
    assert hub.deliver is None, "the cut-off surface's subscription ended"
    # Our end is closed: what was sent is read to its end, and it is bounded by the budget.
    theirs.settimeout(30)
    received = b""
    while chunk := theirs.recv(1 << 20):
        received += chunk
    assert b'"type":"hello"' in received
    assert len(received) < 2 * 64 * 1024 + 65536, "more than the budget was sent"
    theirs.close()
    ours.close()


def surface_pair() -> tuple[
    TalkingHub,
    AttachDesk,
    tuple[stdlib_socket.socket, stdlib_socket.socket],
    tuple[trio.SocketStream, trio.SocketStream],
]:
    """A desk on a talking hub, and a connected pair: the session's end and the terminal's."""
    hub = TalkingHub()
    desk = AttachDesk(FrontEndPort(hub), ROUTE, lambda g: "task", dict)
    ours, theirs = stdlib_socket.socketpair()
    stream = trio.SocketStream(trio.socket.from_stdlib_socket(ours))
    client = trio.SocketStream(trio.socket.from_stdlib_socket(theirs))
    return hub, desk, (ours, theirs), (stream, client)


async def read_until(client: trio.SocketStream, text: bytes) -> bytes:
    data = b""
    while text not in data:
        chunk = await client.receive_some(65536)
        assert chunk, f"the connection ended before {text!r}"
        data += chunk
    return data


async def test_an_observer_is_told_its_typing_is_refused() -> None:
    hub, desk, (ours, theirs), (stream, client) = surface_pair()
    with trio.fail_after(30):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(desk.attach, SessionAttach("gen", "observe"), stream)
            await client.send_all(b'{"type": "submit", "prompt": "hello"}\n')
            await read_until(client, b"only observes")
            assert hub.told == [SurfaceJoined("attach:1", False)], (
                "an observer's typing reached the route"
            )
            await client.aclose()
    await stream.aclose()
    ours.close()
    theirs.close()
    assert desk.surfaces == {}
    assert hub.told[-1] == SurfaceLeft("attach:1")


async def test_answers_name_their_surface_and_a_reply_to_another_surface_is_dropped() -> None:
    hub, desk, (ours, theirs), (stream, client) = surface_pair()
    with trio.fail_after(30):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(desk.attach, SessionAttach("gen"), stream)
            frame = b'{"type": "permission-response", "id": "ap1", "result": "accept"}\n'
            await client.send_all(frame)
            while len(hub.told) < 2:
                await trio.sleep(0.01)
            assert hub.told[1] == AnswerApproval("ap1", "accept", surface="attach:1")
            assert hub.deliver is not None
            hub.deliver(RouteReply(ROUTE, "for another", "error", surface="attach:9"))
            hub.deliver(RouteReply(ROUTE, "for this one", "error", surface="attach:1"))
            data = await read_until(client, b"for this one")
            assert b"for another" not in data
            await client.aclose()
    await stream.aclose()
    ours.close()
    theirs.close()
