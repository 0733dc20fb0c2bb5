"""The WebSocket server: loopback only, a token at the handshake, text frames to the hub.

* bound to 127.0.0.1 alone, whatever the port;
* the handshake's request must carry ``?token=`` equal (``hmac.compare_digest``) to the
  launch's token: otherwise it is rejected with HTTP 401 and never reaches the hub;
* a text frame goes to ``SurfaceHub.handle`` (a wrong one is answered ``protocol_error``
  there; the connection goes on); a binary frame is answered the same way;
* a frame over ``MAX_FRAME`` closes that connection alone (trio-websocket closes it with 1009,
  "message too big");
* a client the hub cut off (it stopped reading) is closed with 1008; a send that takes
  ``SEND_TIMEOUT`` closes it too. The session is never held.
"""

from __future__ import annotations

import hmac
import logging
from urllib.parse import parse_qs, urlsplit

import trio
from trio_websocket import (
    ConnectionClosed,
    WebSocketConnection,
    WebSocketRequest,
    serve_websocket,
)

from robota.core.surfaces import MAX_FRAME, SurfaceHub

__all__ = ["HOST", "SEND_TIMEOUT", "serve"]

logger = logging.getLogger("robota.transports.websocket")

HOST = "127.0.0.1"
SEND_TIMEOUT = 30.0
CUT_OFF = 1008


async def serve(hub: SurfaceHub, *, port: int, token: str, task_status: object) -> None:
    async def handler(request: WebSocketRequest) -> None:
        if not _token_ok(request.path, token):
            # The path is never logged: it may carry a guess at the token.
            logger.info("websocket: a handshake without the right token refused (401)")
            await request.reject(401, body=b"a token is required\n")
            return
        connection = await request.accept()
        await _serve_connection(hub, connection)

    async with trio.open_nursery() as nursery:
        server = await nursery.start(
            lambda task_status: serve_websocket(
                handler,
                HOST,
                port,
                None,
                max_message_size=MAX_FRAME,
                task_status=task_status,
            )
        )
        bound = server.port
        task_status.started(f"ws://{HOST}:{bound}/?token={token}")  # type: ignore[attr-defined]


def _token_ok(path: str, token: str) -> bool:
    given = parse_qs(urlsplit(path).query).get("token", [""])
    return len(given) == 1 and hmac.compare_digest(given[0].encode(), token.encode())


async def _serve_connection(hub: SurfaceHub, connection: WebSocketConnection) -> None:
    client = await hub.join()
    try:
        async with trio.open_nursery() as nursery:

            async def write() -> None:
                async for text in client.outbox:
                    with trio.move_on_after(SEND_TIMEOUT) as waited:
                        await connection.send_message(text)
                    if waited.cancelled_caught:
                        break
                    client.sent(text)
                if client.cut_off or not connection.closed:
                    await connection.aclose(CUT_OFF, "not reading")
                nursery.cancel_scope.cancel()

            async def read() -> None:
                while True:
                    message = await connection.get_message()
                    if isinstance(message, bytes):
                        message = "binary frame"  # answered: frames are JSON text
                    await hub.handle(client, message)

            nursery.start_soon(write)
            nursery.start_soon(read)
    except* ConnectionClosed:
        pass  # the client went, or an oversized frame closed it: only this connection ends
    finally:
        hub.leave(client)
