"""The ``robota --serve`` tests' fake model and their WebSocket reads: a frame, the frames up
to a kind, and the status of a bare handshake."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from typing import Any

import pytest
import trio
from trio_websocket import (
    WebSocketConnection,
)

from ..support.host import BOUND
from ..support.model_server import FakeModel


@pytest.fixture
def model() -> Iterator[FakeModel]:
    with FakeModel(slow_deltas=60, slow_delay=0.05) as fake:
        yield fake


async def receive(ws: WebSocketConnection) -> dict[str, Any]:
    with trio.fail_after(BOUND):
        message = json.loads(await ws.get_message())
    assert isinstance(message, dict)
    return message


async def until(ws: WebSocketConnection, kind: str) -> list[dict[str, Any]]:
    """Every message up to and including the first of ``kind``."""
    got = []
    while True:
        message = await receive(ws)
        got.append(message)
        if message["type"] == kind:
            return got


def handshake_status(url: str) -> int:
    """The HTTP status a WebSocket handshake to ``url`` is answered with (a plain socket:
    trio-websocket's client leaves a rejected connection's socket unclosed)."""
    rest = url.removeprefix("ws://")
    address, _, target = rest.partition("/")
    host, port = address.split(":")
    request = (
        f"GET /{target} HTTP/1.1\r\nHost: {address}\r\nUpgrade: websocket\r\n"
        "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
        "Sec-WebSocket-Version: 13\r\n\r\n"
    )
    with socket.create_connection((host, int(port)), timeout=BOUND) as connection:
        connection.sendall(request.encode())
        status_line = connection.recv(4096).split(b"\r\n", 1)[0]
    return int(status_line.split()[1])
