"""HTTP calls with httpx's defaults, on an httpcore pool unless httpx would use a proxy.

A host serving Feishu or Slack must not import httpx: its package loads its command-line
client, and with it click, pygments and rich (about 8 MB and 150 ms of the host's start).
httpcore is httpx's own engine, so a pool made as httpx makes its own (``_net``'s TLS context,
100 connections, 20 kept alive for 5 s, HTTP/1.1) with httpx's per-phase timeouts behaves as
httpx did; the one choice is made per client, from ``_net.uses_proxy``: where httpx would go
through a proxy, the client is httpx's, imported then, so a proxy works exactly as before.

``AsyncHttp`` (trio) and ``Http`` (a blocking start-up call) answer in plain values
(``Reply``, ``Streamed``); a call with no answer raises ``Unanswered`` named after the
library's error (httpx's errors and httpcore's share their names). Nothing here logs.
"""

from __future__ import annotations

import json
import ssl
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import httpcore

from robota.core import RobotaError

from ._net import ssl_context, uses_proxy

if TYPE_CHECKING:
    import httpx

__all__ = [
    "KEEPALIVE_EXPIRY",
    "NETWORK_ERRORS",
    "USER_AGENT",
    "AsyncHttp",
    "Http",
    "Reply",
    "Streamed",
    "Unanswered",
    "async_pool",
    "httpx_streamed",
    "json_bytes",
    "named_headers",
    "request_headers",
    "timeouts",
]

KEEPALIVE_EXPIRY = 5.0
"""Seconds an idle pooled connection is kept for the next call (httpx's default)."""
USER_AGENT = b"robota"
NETWORK_ERRORS: tuple[type[Exception], ...] = (
    httpcore.TimeoutException,
    httpcore.NetworkError,
    httpcore.ProtocolError,
    httpcore.UnsupportedProtocol,
)
"""What httpx maps to its ``HTTPError``; the pool's own bugs raise."""


class Unanswered(RobotaError):
    """No answer: ``name`` is the library's error (``ConnectTimeout``, ``ReadError``...).
    The transports turn it into their own ``ApiError`` or a retry; it never leaves them."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.name = name


@dataclass(frozen=True, slots=True)
class Reply:
    status: int
    headers: Mapping[str, str]
    """Lower-case names; a repeated header's last value."""
    content: bytes = field(repr=False)


@dataclass(frozen=True, slots=True)
class Streamed:
    status: int
    headers: Mapping[str, str]
    chunks: AsyncIterator[bytes]
    url: str


def timeouts(seconds: float) -> dict[str, float]:
    """httpx's ``Timeout(seconds)``: each phase bounded alike."""
    return dict.fromkeys(("connect", "read", "write", "pool"), seconds)


def json_bytes(body: object) -> bytes:
    """``body`` as httpx encodes ``json=``: compact, UTF-8, no NaN."""
    return json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()


def request_headers(
    url: httpcore.URL, headers: Mapping[str, str], content: bytes, method: str
) -> list[tuple[bytes, bytes]]:
    """httpx's default headers, then ``headers``, then the body's length. The answers are
    not decoded here, so ``Accept-Encoding`` asks for none."""
    host = b"[" + url.host + b"]" if b":" in url.host else url.host
    if url.port is not None and (url.scheme, url.port) not in ((b"http", 80), (b"https", 443)):
        host += b":" + str(url.port).encode()
    found = [
        (b"Host", host),
        (b"Accept", b"*/*"),
        (b"Accept-Encoding", b"identity"),
        (b"Connection", b"keep-alive"),
        (b"User-Agent", USER_AGENT),
    ]
    found += [(k.encode("latin-1"), v.encode("latin-1")) for k, v in headers.items()]
    if content or method in ("POST", "PUT", "PATCH"):
        found.append((b"Content-Length", str(len(content)).encode()))
    return found


def named_headers(pairs: Sequence[tuple[bytes, bytes]]) -> dict[str, str]:
    """httpcore's header pairs by lower-case name (a repeated one's last value)."""
    return {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in pairs}


MAX_CONNECTIONS, MAX_KEEPALIVE = 100, 20
"""httpx's ``DEFAULT_LIMITS``."""


def async_pool(context: ssl.SSLContext | None) -> httpcore.AsyncConnectionPool:
    """A pool as httpx's own transport makes it."""
    return httpcore.AsyncConnectionPool(
        ssl_context=context,
        max_connections=MAX_CONNECTIONS,
        max_keepalive_connections=MAX_KEEPALIVE,
        keepalive_expiry=KEEPALIVE_EXPIRY,
    )


class AsyncHttp:
    """One client under trio: ``proxied`` picks httpx's (see the docstring); ``context`` is
    the TLS context to share (made once per caller, ``_net.ssl_context``)."""

    def __init__(
        self, *, timeout: float, proxied: bool, context: ssl.SSLContext | None = None
    ) -> None:
        self.timeout = timeout
        self.proxied = proxied
        self._context = context
        self._pool: httpcore.AsyncConnectionPool | None = None
        self._httpx: httpx.AsyncClient | None = None
        if proxied:
            import httpx  # noqa: PLC0415 (only behind a proxy, see the docstring)

            self._httpx = httpx.AsyncClient(timeout=timeout, verify=context or True)
        else:
            self._pool = async_pool(context)

    @classmethod
    def for_url(cls, url: str, *, timeout: float, context: ssl.SSLContext) -> AsyncHttp:
        return cls(timeout=timeout, proxied=uses_proxy(url), context=context)

    async def __aenter__(self) -> AsyncHttp:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        if self._pool is not None:
            await self._pool.aclose()
        if self._httpx is not None:
            await self._httpx.aclose()

    async def request(
        self, method: str, url: str, *, headers: Mapping[str, str], content: bytes = b""
    ) -> Reply:
        async with self.stream(method, url, headers=headers, content=content) as answer:
            body = b"".join([chunk async for chunk in answer.chunks])
            return Reply(answer.status, answer.headers, body)

    @asynccontextmanager
    async def stream(
        self, method: str, url: str, *, headers: Mapping[str, str], content: bytes = b""
    ) -> AsyncIterator[Streamed]:
        """The answer as it comes in: its chunks are read inside the ``async with``."""
        if self._httpx is not None:
            async with self._httpx_stream(method, url, headers, content) as streamed:
                yield streamed
            return
        assert self._pool is not None
        target = httpcore.URL(url)
        wire = request_headers(target, headers, content, method)
        try:
            async with self._pool.stream(
                method,
                target,
                headers=wire,
                content=content,
                extensions={"timeout": timeouts(self.timeout)},
            ) as response:
                chunks = response.aiter_stream()
                yield Streamed(response.status, named_headers(response.headers), chunks, url)
        except NETWORK_ERRORS as error:
            raise Unanswered(type(error).__name__) from None

    @asynccontextmanager
    async def _httpx_stream(
        self, method: str, url: str, headers: Mapping[str, str], content: bytes
    ) -> AsyncIterator[Streamed]:
        assert self._httpx is not None
        request = {"headers": headers, "content": content or None}
        async with httpx_streamed(self._httpx, method, url, **request) as streamed:
            yield streamed


@asynccontextmanager
async def httpx_streamed(
    client: httpx.AsyncClient, method: str, url: str, **request: Any
) -> AsyncIterator[Streamed]:
    """httpx's streamed answer (a client behind a proxy) as the pool's is: a ``Streamed``
    named by the URL httpx sent to, its errors ``Unanswered`` by name."""
    import httpx  # noqa: PLC0415 (only behind a proxy)

    try:
        async with client.stream(method, url, **request) as response:
            named = {k.lower(): v for k, v in response.headers.items()}
            yield Streamed(response.status_code, named, response.aiter_bytes(), str(response.url))
    except httpx.HTTPError as error:
        raise Unanswered(type(error).__name__) from None


class Http:
    """A blocking client for a call or two at start (``with Http(...) as http:``), one TLS
    context and connection for them all."""

    def __init__(self, url: str, *, timeout: float) -> None:
        self.timeout = timeout
        self._pool: httpcore.ConnectionPool | None = None
        self._httpx: httpx.Client | None = None
        if uses_proxy(url):
            import httpx  # noqa: PLC0415 (only behind a proxy)

            self._httpx = httpx.Client(timeout=timeout)
        else:
            self._pool = httpcore.ConnectionPool(
                ssl_context=ssl_context(),
                max_connections=MAX_CONNECTIONS,
                max_keepalive_connections=MAX_KEEPALIVE,
                keepalive_expiry=KEEPALIVE_EXPIRY,
            )

    def __enter__(self) -> Http:
        return self

    def __exit__(self, *_: object) -> None:
        if self._pool is not None:
            self._pool.close()
        if self._httpx is not None:
            self._httpx.close()

    def request(
        self, method: str, url: str, *, headers: Mapping[str, str], content: bytes = b""
    ) -> Reply:
        if self._httpx is not None:
            import httpx  # noqa: PLC0415

            try:
                got = self._httpx.request(method, url, headers=headers, content=content or None)
            except httpx.HTTPError as error:
                raise Unanswered(type(error).__name__) from None
            named = {k.lower(): v for k, v in got.headers.items()}
            return Reply(got.status_code, named, got.content)
        assert self._pool is not None
        target = httpcore.URL(url)
        try:
            answer = self._pool.request(
                method,
                target,
                headers=request_headers(target, headers, content, method),
                content=content,
                extensions={"timeout": timeouts(self.timeout)},
            )
        except NETWORK_ERRORS as error:
            raise Unanswered(type(error).__name__) from None
        return Reply(answer.status, named_headers(answer.headers), answer.content)
