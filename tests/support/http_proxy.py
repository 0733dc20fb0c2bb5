"""A forward HTTP proxy on loopback for plain-http fakes (no CONNECT): each request in absolute
form (``GET http://127.0.0.1:PORT/path HTTP/1.1``) is recorded, sent on to its origin on a
connection of its own, and the whole answer handed back with ``Connection: close``.

``HTTP_PROXY=proxy.url`` then shows whether a client took the proxy: ``proxy.seen`` lists the
``(method, url)`` of every request that came through it."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from functools import partial
from urllib.parse import urlsplit

import pytest
import trio

_HEAD_END = b"\r\n\r\n"


def clear_proxy_variables(monkeypatch: pytest.MonkeyPatch, also: Iterable[str] = ()) -> None:
    """Every ``*_proxy`` variable of the environment (any case) gone for the test, and the
    names in ``also``: the machine's own settings must not decide where a test's calls go."""
    extra = set(also)
    for name in list(os.environ):
        if name.lower().endswith("_proxy") or name in extra:
            monkeypatch.delenv(name)


@dataclass
class HttpProxy:
    port: int = 0
    seen: list[tuple[str, str]] = field(default_factory=list)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def urls(self) -> list[str]:
        return [url for _, url in self.seen]


async def _read_head(stream: trio.abc.Stream, buffer: bytearray) -> bytes | None:
    while _HEAD_END not in buffer:
        chunk = await stream.receive_some(65536)
        if not chunk:
            return None
        buffer += chunk
    head, _, rest = bytes(buffer).partition(_HEAD_END)
    buffer[:] = rest
    return head


async def _read_body(stream: trio.abc.Stream, buffer: bytearray, length: int) -> bytes:
    while len(buffer) < length:
        chunk = await stream.receive_some(65536)
        if not chunk:
            break
        buffer += chunk
    body = bytes(buffer[:length])
    del buffer[:length]
    return body


def _headers(lines: list[bytes]) -> list[tuple[bytes, bytes]]:
    return [(k.strip(), v.strip()) for k, _, v in (line.partition(b":") for line in lines)]


async def _serve(proxy: HttpProxy, client: trio.SocketStream) -> None:
    buffer = bytearray()
    async with client:
        head = await _read_head(client, buffer)
        if head is None:
            return
        request_line, *lines = head.split(b"\r\n")
        method, target, version = request_line.decode("latin-1").split(" ")
        headers = _headers(lines)
        length = next((int(v) for k, v in headers if k.lower() == b"content-length"), 0)
        body = await _read_body(client, buffer, length)
        proxy.seen.append((method, target))
        parts = urlsplit(target)
        path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        kept = [
            (k, v)
            for k, v in headers
            if k.lower() not in (b"connection", b"proxy-connection", b"keep-alive")
            and not k.lower().startswith(b"proxy-")
        ]
        upstream_head = f"{method} {path} {version}\r\n".encode() + b"".join(
            k + b": " + v + b"\r\n" for k, v in [*kept, (b"Connection", b"close")]
        )
        assert parts.hostname is not None and parts.port is not None
        upstream = await trio.open_tcp_stream(parts.hostname, parts.port)
        async with upstream:
            await upstream.send_all(upstream_head + b"\r\n" + body)
            answer = bytearray()
            while chunk := await upstream.receive_some(65536):
                answer += chunk
        status_and_headers, _, rest = bytes(answer).partition(_HEAD_END)
        status_line, *answer_lines = status_and_headers.split(b"\r\n")
        answer_headers = [
            (k, v) for k, v in _headers(answer_lines) if k.lower() not in (b"connection",)
        ]
        await client.send_all(
            status_line
            + b"\r\n"
            + b"".join(k + b": " + v + b"\r\n" for k, v in answer_headers)
            + b"Connection: close\r\n\r\n"
            + rest
        )


@asynccontextmanager
async def http_proxy() -> AsyncIterator[HttpProxy]:
    proxy = HttpProxy()
    async with trio.open_nursery() as nursery:
        listeners = await nursery.start(
            partial(trio.serve_tcp, partial(_serve, proxy), 0, host="127.0.0.1")
        )
        proxy.port = listeners[0].socket.getsockname()[1]
        try:
            yield proxy
        finally:
            nursery.cancel_scope.cancel()
