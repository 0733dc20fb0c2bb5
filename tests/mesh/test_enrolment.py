"""Pairing end to end on loopback with real mesh files and the file credential store: A (the
first device) pairs B, then C; C links straight to B with what A handed it."""

from __future__ import annotations

from pathlib import Path

import trio

from robota.mesh import Marks, MeshFiles, device_id, init_first, init_join, new_code, new_phrase
from robota.mesh._actions import device_key
from robota.mesh._enrolment import (
    Enrolment,
    join_device,
    pack_enrolment,
    pair_device,
    unpack_enrolment,
)
from robota.mesh._identity import DeviceId
from robota.mesh._keyfile import KeyFile
from robota.mesh._linkcert import KnownCertificates, link_certificate
from robota.mesh._linkio import Links
from robota.mesh._pairing import PairingWindow
from robota.mesh._trust import LinkTrust

from ._devices import device_files as device

NOW = 1_800_000_000
LIFE = 3600


def test_an_enrolment_packs_and_unpacks() -> None:
    enrolment = Enrolment(b"root", b"cert", b"roster", b"revocations", (b"a", b"b"))
    assert unpack_enrolment(pack_enrolment(enrolment)) == enrolment


async def pair(
    signer: tuple[MeshFiles, KeyFile], joiner: tuple[MeshFiles, KeyFile], known: list[bytes]
) -> tuple[bytes, tuple[bytes, ...]]:
    """One pairing over loopback; the joiner's link certificate and what it was handed."""
    window = PairingWindow(new_code(), deadline=trio.current_time() + 60)
    (listener,) = await trio.open_tcp_listeners(0, host="127.0.0.1")
    port = listener.socket.getsockname()[1]
    out: dict[str, object] = {}

    async def yes(name: str, device: DeviceId) -> bool:
        return True

    async def shown(device: DeviceId) -> None:
        out["shown"] = device

    async def pairing_side() -> None:
        stream = await listener.accept()
        out["pairer"] = await pair_device(
            stream, window, *signer, now=NOW, lifetime=LIFE, marks=Marks(), known=known, decide=yes
        )

    with trio.fail_after(60):
        async with listener, trio.open_nursery() as nursery:
            nursery.start_soon(pairing_side)
            out["joiner"] = await join_device(
                "127.0.0.1",
                port,
                window.code,
                *joiner,
                now=lambda: NOW,
                marks=Marks(),
                confirmed=shown,
            )
    _cert, lists, joiner_cert = out["pairer"]  # type: ignore[misc]
    identity, joined_lists, certs = out["joiner"]  # type: ignore[misc]
    assert lists.roster.find(identity.device) is not None
    assert joined_lists.roster.seq == lists.roster.seq
    assert identity.root == signer[0].identity().root  # type: ignore[union-attr]
    return joiner_cert, certs


def trust(files: MeshFiles, store: KeyFile, certs: list[bytes]) -> LinkTrust:
    from robota.mesh import current_lists

    identity = files.identity()
    assert identity is not None and identity.root is not None
    lists = current_lists(files, identity, Marks())
    assert lists is not None
    key = device_key(store, identity)
    return LinkTrust(
        key, identity.name, identity.root, lists.roster, lists.revocations, KnownCertificates(certs)
    )


async def test_a_pairs_b_and_c_and_c_links_to_b(tmp_path: Path) -> None:
    a, b, c = (device(tmp_path, n) for n in "abc")
    init_first(*a, phrase=new_phrase(), name="desk", now=NOW, lifetime=LIFE)
    init_join(*b, name="laptop")
    init_join(*c, name="buildbox")
    b_cert, handed_to_b = await pair(a, b, [])
    c_cert, handed_to_c = await pair(a, c, [b_cert])
    a_identity = a[0].identity()
    assert a_identity is not None
    a_cert = link_certificate(device_key(a[1], a_identity))
    assert handed_to_b == (a_cert,)
    assert set(handed_to_c) == {a_cert, b_cert}

    # B learns C's certificate and A's newer roster as the links' gossip would bring them;
    # then C dials B directly.
    b_links = Links(trust(*b, [*handed_to_b, c_cert]), clock=lambda: float(NOW))
    newer = trust(*a, []).roster.blob
    assert b_links.trust.adopt("roster", newer, NOW) == "adopted"
    c_links = Links(trust(*c, list(handed_to_c)), clock=lambda: float(NOW))
    b_id = b_links.trust.device
    assert b_id == device_id(device_key(b[1], b[0].identity()))  # type: ignore[arg-type]
    async with trio.open_nursery() as nursery:
        port = await nursery.start(b_links.serve, "127.0.0.1", 0)
        nursery.start_soon(c_links.dial, "127.0.0.1", port, b_id)
        with trio.fail_after(20):
            while b_id not in c_links.links or c_links.links[b_id].state != "connected":
                await trio.sleep(0.02)
        assert c_links.status()[0]["name"] == "laptop"
        nursery.cancel_scope.cancel()
