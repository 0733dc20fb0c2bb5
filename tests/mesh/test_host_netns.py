"""Two devices in two network namespaces the test creates: each profile's host runs inside its
own namespace (``ip netns exec``), joined by a veth pair with private test addresses; they pair
through their terminals (the commands reach their hosts over the profiles' Unix sockets), link
across the veth, survive the listening host's restart and a revocation closes the link.

Everything the test creates (namespaces, the veth pair, the hosts) is removed in a ``finally``;
the test is skipped, saying why, where namespaces cannot be created (not root, no ``ip``).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from ._hosts import (
    _link_state,
    _until,
    pair_and_join,
    restart_then_revoke,
    signing_laptop_and_new_desk,
)
from ._netns import PORT, SUBNET, namespaces_and_veth
from ._netns import start_in as _start_in
from ._profiles import _robota


def test_two_devices_in_two_namespaces_pair_link_and_a_revocation_closes_the_link(
    tmp_path: Path,
) -> None:
    address = f"{SUBNET}.1:{PORT}"
    laptop, desk = signing_laptop_and_new_desk(tmp_path, address)
    tag = f"rm{os.getpid() % 100000}"
    with namespaces_and_veth(tag) as (laptop_ns, desk_ns):
        started: list[Path] = []
        try:
            for home, namespace in ((laptop, laptop_ns), (desk, desk_ns)):
                _start_in(namespace, home)
                started.append(home)
            paired, joined, _code = pair_and_join(laptop, desk, address, "y\n")
            assert paired.code == 0, (paired.stderr, paired.screen)
            assert joined.code == 0, (joined.stderr, joined.screen)
            laptop_id = json.loads(_robota(laptop, "mesh", "status", "--json").stdout)
            desk_id = json.loads(_robota(desk, "mesh", "status", "--json").stdout)
            lid, did = laptop_id["device"]["id"], desk_id["device"]["id"]
            assert address in desk.joinpath("config.yaml").read_text()
            _until(lambda: _link_state(desk, lid) == "connected", "the desk links across")
            _until(lambda: _link_state(laptop, did) == "connected", "the laptop sees the desk")

            restart_then_revoke(laptop, desk, lid, did, lambda: _start_in(laptop_ns, laptop))
        finally:
            for home in started:
                _robota(home, "server", "stop")
