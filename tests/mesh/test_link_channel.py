"""A link's channel (the handoff's binding, issue 30 §3): each side's ``Channel`` nonce after its
hello, both sides' same fingerprint, a handoff's frames delivered only on a bound link and sent
only on the link a grant was made for; sans-IO as a table, then two real links on loopback."""

from __future__ import annotations

import pytest
import trio

from robota.mesh import device_id
from robota.mesh._frames import BadFrame, Channel, Frame, Hello, decode, encode
from robota.mesh._grant import channel_fingerprint
from robota.mesh._handoff import HandoffAccepted, HandoffStaged
from robota.mesh._handoff_frames import HandoffChunk, HandoffFrame
from robota.mesh._link import Bind, Close, DeliverHandoff, Effect, LinkGossip, Seqs
from robota.mesh._linkcert import link_certificate
from robota.mesh._linkio import Links

from ._chain import NOW, Chain
from ._links import trust, until

ME, PEER = "AAAA", "BBBB"
ID = "00112233aabbccdd"
NONCE = bytes(range(16))


def opened() -> LinkGossip:
    link = LinkGossip(ME, "desk", PEER, Seqs(1, 1), {}, {})
    link.receive(Hello(PEER, "laptop", 1, 1, ()))
    return link


@pytest.mark.parametrize(
    ("frames", "effects"),
    [
        ([Channel(NONCE)], [Bind(NONCE)]),
        ([Channel(NONCE), HandoffAccepted(ID)], [DeliverHandoff(HandoffAccepted(ID))]),
        (
            [Channel(NONCE), HandoffChunk(ID, 0, b"abc")],
            [DeliverHandoff(HandoffChunk(ID, 0, b"abc"))],
        ),
        # Before the channel is bound a handoff's frame has nothing its grant could bind to.
        ([HandoffStaged(ID)], [Close("a handoff frame before the link's channel nonce")]),
        # One nonce per connection: a second would let a peer move the binding.
        ([Channel(NONCE), Channel(NONCE)], [Close("a second channel nonce on one link")]),
    ],
)
def test_the_channel_binds_once_and_handoff_frames_wait_for_it(
    frames: list[Frame], effects: list[Effect]
) -> None:
    link = opened()
    seen: list[Effect] = []
    for frame in frames:
        seen = link.receive(frame)
    assert seen == effects


def test_a_channel_nonce_before_the_hello_closes_the_link() -> None:
    link = LinkGossip(ME, "desk", PEER, Seqs(1, 1), {}, {})
    assert link.receive(Channel(NONCE)) == [Close("expected hello, got Channel")]


@pytest.mark.parametrize("size", [0, 15, 17, 64])
def test_a_channel_nonce_is_sixteen_bytes(size: int) -> None:
    with pytest.raises(BadFrame, match="16 bytes"):
        decode(encode(Channel(b"\x00" * size)))


async def test_both_ends_of_a_link_share_its_channel_and_handoff_frames_travel_on_it() -> None:
    chain = Chain()
    a_id, b_id = (device_id(k) for k in chain.devices[:2])
    a, b = (Links(trust(chain, i), clock=lambda: float(NOW), handshake_timeout=2) for i in (0, 1))
    arrived: list[tuple[str, bytes, HandoffFrame]] = []

    async def took(device: str, channel: bytes, frame: HandoffFrame) -> None:
        arrived.append((device, channel, frame))

    a.on_handoff = took
    bound: list[str] = []

    async def on_bound(device: str) -> None:
        bound.append(device)

    b.on_bound = on_bound
    async with trio.open_nursery() as nursery:
        a_port = await nursery.start(a.serve, "127.0.0.1", 0)
        nursery.start_soon(b.dial, "127.0.0.1", a_port, a_id)
        await until(lambda: a.channel(b_id) is not None and b.channel(a_id) is not None, "bound")
        channel = b.channel(a_id)
        assert channel is not None and a.channel(b_id) == channel
        # The fingerprint is the dialler's certificate first, and both nonces.
        a_cert, b_cert = (link_certificate(k) for k in chain.devices[:2])
        info_b, info_a = b.links[a_id], a.links[b_id]
        nonces = info_b._nonce + info_a._nonce
        assert channel == channel_fingerprint(b_cert, a_cert, nonces)

        assert await b.send_handoff(a_id, HandoffAccepted(ID), channel=channel)
        await until(lambda: len(arrived) == 1, "the frame")
        assert arrived == [(b_id, channel, HandoffAccepted(ID))]
        # A grant made for another connection is not sent on this one.
        assert not await b.send_handoff(a_id, HandoffStaged(ID), channel=b"\x00" * 32)

        # The link goes down and comes back: a new connection, a new channel.
        if info_b._cancel is not None:
            info_b._cancel.cancel()
        await until(lambda: b.links[a_id].state == "down", "the link down")
        assert b.channel(a_id) is None
        assert not await b.send_handoff(a_id, HandoffStaged(ID), channel=channel)
        nursery.start_soon(b.dial, "127.0.0.1", a_port, a_id)
        await until(
            lambda: b.channel(a_id) is not None and a.channel(b_id) == b.channel(a_id), "rebound"
        )
        assert b.channel(a_id) != channel
        assert bound == [a_id, a_id]  # told at each new connection's binding
        nursery.cancel_scope.cancel()
