"""Links between a test chain's devices on loopback: each device's trust, and waiting until a
condition holds (shared by the link shell's tests)."""

from __future__ import annotations

from collections.abc import Callable

import trio

from robota.mesh._identity import DeviceId
from robota.mesh._linkcert import KnownCertificates, link_certificate
from robota.mesh._trust import LinkTrust

from ._chain import Chain


def trust(
    chain: Chain, index: int, *, revoked: tuple[DeviceId, ...] = (), seq: int = 1
) -> LinkTrust:
    known = KnownCertificates(link_certificate(k) for k in chain.devices)
    return LinkTrust(
        chain.devices[index],
        f"device-{index}",
        chain.root_public,
        chain.roster(),
        chain.revocations(revoked, seq=seq),
        known,
    )


async def until(check: Callable[[], bool], what: str) -> None:
    with trio.fail_after(20):
        while not check():
            await trio.sleep(0.02)
