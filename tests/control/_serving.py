"""A control server to talk to in tests, and the raw side of a connection."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import trio

from robota.core.control import ControlServer, Endpoint, HandlerError, ServerLimits

from ._requests import Status


@dataclass(frozen=True, slots=True)
class Echo:
    TYPE: ClassVar[str] = "echo"
    text: str
    times: int = 1


@dataclass(frozen=True, slots=True)
class Boom:
    TYPE: ClassVar[str] = "boom"
    how: str = "raise"


class BoomFailure(RuntimeError):
    pass


async def echo(request: Echo) -> object:
    return {"text": request.text * request.times}


async def status(request: Status) -> object:
    return {"running": True}


async def boom(request: Boom) -> object:
    if request.how == "refuse":
        raise HandlerError("not_found", "no such thing", "how")
    if request.how == "unserialisable":
        return {"value": object()}
    raise BoomFailure("the handler broke")


ENDPOINTS: Sequence[Endpoint[Any]] = (
    Endpoint(Echo, echo),
    Endpoint(Status, status),
    Endpoint(Boom, boom),
)


@asynccontextmanager
async def serving(
    socket_path: Path,
    endpoints: Sequence[Endpoint[Any]] = ENDPOINTS,
    *,
    limits: ServerLimits | None = None,
    allowed_uid: int | None = None,
) -> AsyncIterator[ControlServer]:
    server = ControlServer(
        socket_path, endpoints, limits=limits or ServerLimits(), allowed_uid=allowed_uid
    )
    async with trio.open_nursery() as nursery:
        await nursery.start(server.serve)
        yield server
        nursery.cancel_scope.cancel()


class Raw:
    """A connection driven byte by byte, reading whole reply lines."""

    def __init__(self, stream: trio.SocketStream) -> None:
        self.stream = stream
        self._buffer = b""

    @classmethod
    @asynccontextmanager
    async def open(cls, socket_path: Path) -> AsyncIterator[Raw]:
        stream = await trio.open_unix_socket(str(socket_path))
        async with stream:
            yield cls(stream)

    async def send(self, data: bytes) -> None:
        await self.stream.send_all(data)

    async def reply(self) -> dict[str, Any]:
        while b"\n" not in self._buffer:
            data = await self.stream.receive_some(65536)
            if not data:
                raise EOFError(f"connection closed; unread: {self._buffer!r}")
            self._buffer += data
        line, self._buffer = self._buffer.split(b"\n", 1)
        reply: dict[str, Any] = json.loads(line)
        return reply

    async def at_eof(self) -> bool:
        """True when the host closed the connection with nothing more to say. A host that
        closes without reading what was sent resets the connection: closed too."""
        if self._buffer:
            return False
        try:
            return await self.stream.receive_some(65536) == b""
        except trio.BrokenResourceError:
            return True
