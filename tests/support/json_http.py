"""A JSON-over-HTTP/1.1 server for the fake platforms (h11 on trio), one connection at a time.

The fakes of tests/transports (Feishu's, Slack's) serve their REST/Web API with it: each
request, its body read whole, goes to the fake's ``answer`` function, whose answer is sent as
JSON; ``Ellipsis`` as the body never answers (a call that hangs). Keep-alive works, as real
clients (httpx, the official SDKs) reuse connections.

    listeners = await nursery.start(
        partial(trio.serve_tcp, partial(serve_json, answer=fake.answer), 0, host="127.0.0.1")
    )
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import urlsplit

import h11
import trio

__all__ = ["Answer", "HttpRequest", "serve_json"]

Answer = tuple[int, dict[str, str], object]
"""HTTP status, headers, JSON body (bytes: sent as they are; ``Ellipsis``: never answer)."""


@dataclass
class HttpRequest:
    method: str
    path: str
    query: str
    headers: dict[str, str]
    """Names in lower case."""
    body: bytes


async def serve_json(stream: trio.SocketStream, *, answer: Callable[[HttpRequest], Answer]) -> None:
    try:
        await _serve(stream, answer)
    except (trio.BrokenResourceError, trio.ClosedResourceError, h11.RemoteProtocolError):
        pass  # the client went away: a client may always do that


async def _serve(stream: trio.SocketStream, answer: Callable[[HttpRequest], Answer]) -> None:
    conn = h11.Connection(h11.SERVER)
    head: h11.Request | None = None
    body = b""
    while True:
        event = conn.next_event()
        if event is h11.NEED_DATA:
            data = await stream.receive_some(65536)
            conn.receive_data(data)
            if not data and conn.their_state is not h11.DONE:
                return
            continue
        if isinstance(event, h11.Request):
            head, body = event, b""
        elif isinstance(event, h11.Data):
            body += event.data
        elif isinstance(event, h11.EndOfMessage):
            assert head is not None
            target = urlsplit(head.target.decode())
            request = HttpRequest(
                head.method.decode(),
                target.path,
                target.query,
                {k.decode().lower(): v.decode() for k, v in head.headers},
                body,
            )
            status, headers, content = answer(request)
            if content is Ellipsis:
                await trio.sleep_forever()
            # Bytes go as they are (a download), under the content type the answer names.
            data = content if isinstance(content, bytes) else json.dumps(content).encode()
            kind = headers.get("content-type", "application/json; charset=utf-8")
            extra = [(k, v) for k, v in headers.items() if k != "content-type"]
            response = h11.Response(
                status_code=status,
                headers=[("content-type", kind), ("content-length", str(len(data))), *extra],
            )
            await stream.send_all(conn.send(response) or b"")
            await stream.send_all(conn.send(h11.Data(data=data)) or b"")
            await stream.send_all(conn.send(h11.EndOfMessage()) or b"")
            if conn.our_state is h11.MUST_CLOSE:
                return
            conn.start_next_cycle()
        elif isinstance(event, h11.ConnectionClosed):
            return
