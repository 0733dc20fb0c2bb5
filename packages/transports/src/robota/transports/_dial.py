"""A ``wss`` dial's TLS, for the chat transports' long connections.

Two things a bare ``trio.open_ssl_over_tcp_stream`` under trio-websocket gets wrong:

* trio-websocket's client handshake does not end when TLS fails under it (its reader stops on
  the broken stream and the handshake waits out its timeout), so a refused certificate showed
  10-15 s later as ``TooSlowError``. ``tls_stream`` shakes TLS hands first, inside the
  caller's deadline, so it fails at once;
* trio wraps what TLS refused in ``BrokenResourceError``; ``failure_name`` names the cause
  (``SSLCertVerificationError``), which is what a person reading the link's status needs.
"""

from __future__ import annotations

import ssl

import trio

__all__ = ["failure_name", "tls_stream"]


async def tls_stream(
    host: str, port: int, context: ssl.SSLContext
) -> trio.SSLStream[trio.SocketStream]:
    """A TCP connection to ``host``, TLS verified with ``context`` (the transport's one: what
    its HTTP calls trust), the TLS handshake done. Raises ``OSError`` or
    ``trio.BrokenResourceError`` (see ``failure_name``)."""
    stream = await trio.open_ssl_over_tcp_stream(host, port, ssl_context=context)
    try:
        await stream.do_handshake()
    except BaseException:
        await trio.aclose_forcefully(stream)
        raise
    return stream


def failure_name(error: BaseException) -> str:
    """``error``'s type name, or for a broken stream the name of what broke it."""
    cause = error.__cause__
    if isinstance(error, trio.BrokenResourceError) and cause is not None:
        return type(cause).__name__
    return type(error).__name__
