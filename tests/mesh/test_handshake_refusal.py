"""Why a link's TLS handshake failed, named from the closed set of reasons
(``handshake_refusal``): real handshakes on loopback, each side's error classified, and a table
of the errors that are no TLS failure at all."""

from __future__ import annotations

import ssl

import pytest
import trio

from robota.mesh import Refused, device_id, new_key
from robota.mesh._linkcert import (
    KnownCertificates,
    client_context,
    handshake_refusal,
    link_certificate,
    server_context,
)

from ._chain import Chain


async def errors(
    server: ssl.SSLContext, client: ssl.SSLContext | bytes
) -> dict[str, BaseException]:
    """What each side's handshake raised (a ``bytes`` client sends those bytes, no TLS)."""
    (listener,) = await trio.open_tcp_listeners(0, host="127.0.0.1")
    port = listener.socket.getsockname()[1]
    raised: dict[str, BaseException] = {}

    async def serve() -> None:
        tls = trio.SSLStream(await listener.accept(), server, server_side=True)
        try:
            await tls.do_handshake()
            await tls.send_all(b"x")
        except trio.BrokenResourceError as error:
            raised["server"] = error
        finally:
            await trio.aclose_forcefully(tls)

    with trio.fail_after(20):
        async with listener, trio.open_nursery() as nursery:
            nursery.start_soon(serve)
            stream = await trio.open_tcp_stream("127.0.0.1", port)
            if isinstance(client, bytes):
                await stream.send_all(client)
                with trio.move_on_after(5):
                    await stream.receive_some(1)
                await trio.aclose_forcefully(stream)
                return raised
            tls = trio.SSLStream(stream, client)
            try:
                await tls.do_handshake()
                await tls.receive_some(1)
            except trio.BrokenResourceError as error:
                raised["client"] = error
            finally:
                await trio.aclose_forcefully(tls)
    return raised


@pytest.mark.parametrize(
    ("who", "judge", "reason"),
    [
        # A stranger dials with its own keys, knowing A's certificate: A refuses its certificate.
        ("stranger", "server", "not-in-roster"),
        # B dials A; a relay answers with its own certificate: B refuses it.
        ("relay", "client", "not-in-roster"),
        # Bytes that are no TLS handshake (a recording replayed into a fresh one fails likewise).
        ("garbage", "server", "malformed"),
    ],
)
async def test_each_failed_handshake_is_named(who: str, judge: str, reason: str) -> None:
    chain = Chain()
    a, b, _c = chain.devices
    stranger = new_key()
    known = KnownCertificates(link_certificate(k) for k in (a, b))
    trusted = known.trusted(chain.roster(), chain.revocations())
    if who == "stranger":
        raised = await errors(
            server_context(a, trusted), client_context(stranger, [link_certificate(a)])
        )
    elif who == "relay":
        raised = await errors(
            server_context(stranger, [link_certificate(b)]), client_context(b, trusted)
        )
    else:
        raised = await errors(server_context(a, trusted), b"GET / HTTP/1.1\r\n\r\n" * 4)
    named = {side: handshake_refusal(error) for side, error in raised.items()}
    assert named[judge].reason == reason, {side: str(r) for side, r in named.items()}
    # The other side, refused, sees the connection end.
    for side, refused in named.items():
        if side != judge:
            assert refused.detail == "the connection ended during the TLS handshake"


@pytest.mark.parametrize(
    ("error", "reason", "detail"),
    [
        (Refused("revoked", "device X is revoked"), "revoked", "device X is revoked"),
        (trio.BrokenResourceError(), "malformed", "the connection ended during the TLS handshake"),
        (ssl.SSLCertVerificationError(1, "bad"), "not-in-roster", "no rostered device's"),
    ],
)
def test_handshake_refusal(error: BaseException, reason: str, detail: str) -> None:
    refused = handshake_refusal(error)
    assert refused.reason == reason and detail in refused.detail


def test_a_refusal_names_the_device_never_a_key() -> None:
    key = new_key()
    refused = handshake_refusal(Refused("not-in-roster", f"dialled {device_id(key)}"))
    assert device_id(key) in str(refused)
