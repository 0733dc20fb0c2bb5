"""The links' trio shell on loopback: pairing over TLS and a WebSocket (a right code, a wrong
one, a relay that terminates TLS, one that only forwards bytes), then links between rostered
devices: gossip of a newer revocation list, a revoked device closed out, a stranger refused."""

from __future__ import annotations

import pytest
import trio

from robota.mesh import Refused, device_id, new_code, new_key
from robota.mesh._identity import DeviceId
from robota.mesh._linkcert import link_certificate, pairing_context
from robota.mesh._linkio import PAIR_PREAMBLE, Links, join, serve_pairing
from robota.mesh._pairing import PairingFailed, PairingWindow

from ._chain import NOW, Chain
from ._links import trust, until


async def listening() -> tuple[trio.SocketListener, int]:
    (listener,) = await trio.open_tcp_listeners(0, host="127.0.0.1")
    return listener, listener.socket.getsockname()[1]


async def forward(source: trio.abc.Stream, sink: trio.abc.Stream) -> None:
    try:
        while data := await source.receive_some(65536):
            await sink.send_all(data)
    except (trio.BrokenResourceError, trio.ClosedResourceError):
        pass
    finally:
        await trio.aclose_forcefully(sink)  # the end of one direction ends the other


async def relay(listener: trio.SocketListener, port: int, terminate: bool) -> None:
    """One connection passed on to ``port``: bytes as they are, or TLS ended and begun again
    with the relay's own key on both sides."""
    async with listener:
        inbound: trio.abc.Stream = await listener.accept()
    outbound: trio.abc.Stream = await trio.open_tcp_stream("127.0.0.1", port)
    if terminate:
        # The preamble passes as it is (it says which TLS to speak), then TLS ends here.
        await outbound.send_all(await inbound.receive_some(len(PAIR_PREAMBLE)))
        own = new_key()
        inbound = trio.SSLStream(inbound, pairing_context(own, server_side=True), server_side=True)
        outbound = trio.SSLStream(outbound, pairing_context(own, server_side=False))
    try:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(forward, inbound, outbound)
            nursery.start_soon(forward, outbound, inbound)
    finally:
        await trio.aclose_forcefully(inbound)
        await trio.aclose_forcefully(outbound)


async def pair(
    *, typed: str | None = None, via: str | None = None, accept: bool = True
) -> tuple[object, object, PairingWindow]:
    window = PairingWindow(new_code(), deadline=trio.current_time() + 300)
    pairer_key, joiner_key = new_key(), new_key()
    listener, port = await listening()
    asked: list[tuple[str, DeviceId]] = []
    shown: list[DeviceId] = []
    results: dict[str, object] = {}

    async def decide(name: str, device: DeviceId) -> bool:
        asked.append((name, device))
        return accept

    async def confirmed(device: DeviceId) -> None:
        shown.append(device)

    async def pairing_side() -> None:
        stream = await listener.accept()
        try:
            results["pairer"] = await serve_pairing(
                stream,
                window,
                pairer_key,
                decide=decide,
                bundle=lambda n, c: b"bundle:" + n.encode(),
            )
        except PairingFailed as failed:
            results["pairer"] = failed.reason

    async def joining_side(port: int) -> None:
        try:
            results["joiner"] = await join(
                "127.0.0.1", port, typed or window.code, joiner_key, "laptop", confirmed=confirmed
            )
        except PairingFailed as failed:
            results["joiner"] = failed.reason

    with trio.fail_after(60):
        async with listener, trio.open_nursery() as nursery:
            nursery.start_soon(pairing_side)
            target = port
            if via is not None:
                relay_listener, target = await listening()
                nursery.start_soon(relay, relay_listener, port, via == "terminate")
            await joining_side(target)
            await trio.sleep(0)
            with trio.move_on_after(10):
                while "pairer" not in results:
                    await trio.sleep(0.05)
            nursery.cancel_scope.cancel()
    if results.get("joiner") == b"bundle:laptop":
        assert asked == [("laptop", device_id(joiner_key))]
        assert shown == [device_id(pairer_key)]
        assert results["pairer"] == ("laptop", link_certificate(joiner_key))
    return results.get("pairer"), results.get("joiner"), window


async def test_pairing_with_the_right_code() -> None:
    _pairer, joiner, window = await pair()
    assert joiner == b"bundle:laptop" and window.state == "used"


async def test_a_wrong_code_fails_on_both_sides_and_burns_the_window() -> None:
    pairer, joiner, window = await pair(typed=new_code())
    assert (pairer, joiner, window.state) == ("wrong-code", "wrong-code", "burned")


async def test_the_operator_says_no() -> None:
    pairer, joiner, window = await pair(accept=False)
    assert (pairer, joiner, window.state) == ("declined", "declined", "burned")


async def test_a_relay_that_terminates_tls_fails_like_a_wrong_code() -> None:
    pairer, joiner, window = await pair(via="terminate")
    assert (pairer, joiner, window.state) == ("wrong-code", "wrong-code", "burned")


async def test_a_relay_that_forwards_bytes_pairs() -> None:
    _pairer, joiner, _window = await pair(via="forward")
    assert joiner == b"bundle:laptop"


async def test_links_gossip_and_a_revocation_closes_the_revoked_device_out() -> None:
    chain = Chain()
    a_id, b_id, c_id = (device_id(k) for k in chain.devices)
    a, b, c = (
        Links(trust(chain, i), clock=lambda: float(NOW), handshake_timeout=2) for i in range(3)
    )
    async with trio.open_nursery() as nursery:
        a_port = await nursery.start(a.serve, "127.0.0.1", 0)
        nursery.start_soon(b.dial, "127.0.0.1", a_port, a_id)
        nursery.start_soon(c.dial, "127.0.0.1", a_port, a_id)
        await until(
            lambda: all(
                x.links.get(p) is not None and x.links[p].state == "connected"
                for x, p in ((a, b_id), (a, c_id), (b, a_id), (c, a_id))
            ),
            "three links",
        )
        assert {row["device"] for row in a.status()} == {b_id, c_id}
        assert b.status()[0]["name"] == "device-0"

        # A learns that C is revoked: C's link closes at once, and B gets the list by gossip.
        newer = chain.revocations((c_id,), seq=2)
        assert a.trust.adopt("revocations", newer.blob, NOW) == "adopted"
        await a.close_revoked()
        await a._spread()
        await until(lambda: c.links[a_id].state == "down", "C closed out")
        await until(lambda: b.trust.revocations.seq == 2, "B has the newer list")
        assert not b.trust.admits(c_id)

        # C dials again: refused before any frame.
        with trio.fail_after(20), pytest.raises(Refused):
            await c.dial("127.0.0.1", a_port, a_id)
        assert a.links[c_id].state == "down"
        nursery.cancel_scope.cancel()


async def test_a_stranger_and_a_wrong_device_are_refused() -> None:
    chain = Chain()
    a_id = device_id(chain.devices[0])
    a = Links(trust(chain, 0), clock=lambda: float(NOW))
    other = Chain()  # another user's devices: a stranger
    stranger = Links(trust(other, 0), clock=lambda: float(NOW), handshake_timeout=2)
    b = Links(trust(chain, 1), clock=lambda: float(NOW), handshake_timeout=2)
    async with trio.open_nursery() as nursery:
        a_port = await nursery.start(a.serve, "127.0.0.1", 0)
        with trio.fail_after(20):
            with pytest.raises(Refused):
                await stranger.dial("127.0.0.1", a_port, a_id)
            with pytest.raises(Refused):
                await b.dial("127.0.0.1", a_port, device_id(chain.devices[2]))  # not who answers
        assert a.links == {}
        nursery.cancel_scope.cancel()


async def test_the_link_listener_serves_a_pairing_window_and_links_beside_it() -> None:
    chain = Chain()
    a_id = device_id(chain.devices[0])
    a = Links(trust(chain, 0), clock=lambda: float(NOW), handshake_timeout=2)
    b = Links(trust(chain, 1), clock=lambda: float(NOW), handshake_timeout=2)
    joiner_key = new_key()

    async def yes(name: str, device: DeviceId) -> bool:
        return True

    async def shown(device: DeviceId) -> None:
        assert device == a_id

    async with trio.open_nursery() as nursery:
        port = await nursery.start(a.serve, "127.0.0.1", 0)
        # No window: a joiner does not get through the links' handshake.
        with trio.fail_after(20), pytest.raises((PairingFailed, trio.BrokenResourceError)):
            await join(
                "127.0.0.1",
                port,
                new_code(),
                joiner_key,
                "laptop",
                confirmed=shown,
                handshake_timeout=2,
            )
        window = PairingWindow(new_code(), deadline=trio.current_time() + 60)
        a.open_pairing(window, yes, lambda name, cert: b"bundle")
        nursery.start_soon(b.dial, "127.0.0.1", port, a_id)  # a link beside the window
        with trio.fail_after(20):
            bundle = await join(
                "127.0.0.1", port, window.code, joiner_key, "laptop", confirmed=shown
            )
        assert bundle == b"bundle"
        await until(lambda: bool(a.paired), "the pairing device's side ends")
        assert a.paired == [("laptop", link_certificate(joiner_key))]
        await until(lambda: device_id(chain.devices[1]) in a.links, "B's link")
        a.close_pairing()
        nursery.cancel_scope.cancel()
