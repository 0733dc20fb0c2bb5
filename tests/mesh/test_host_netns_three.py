"""Three devices' hosts in three network namespaces the test creates, on one bridge
(``_netns.bridged``): the laptop (signing, listening) in the first, the desk (listening too) in
the second, the box in the third. The laptop pairs the desk and then the box, each through two
terminals (tmux, its server inside the device's namespace): the code shown on the laptop's is
typed on the other's. The box dials the desk (its address in the box's ``mesh.peers`` before it
paired) and the two link with what the laptop's gossip taught them (the newer roster, each
other's link certificate); ``mesh status`` and ``mesh devices --json`` on each show the other
two. Then the laptop revokes the box: the revocation reaches the desk, which closes its link to
the box and refuses it from then on (as the laptop does), and every link of the box is down.

The hosts ping every 2 s (``ROBOTA_MESH_PING_SECONDS``, a test's only). Everything the test
starts or creates is ended and removed in a ``finally``; the test is skipped, saying why, where
namespaces cannot be created.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

from robota.host import PING_ENV

from ._hosts import (
    _link_state,
    _refusals,
    _status,
    _until,
    laptop_desk_and_box,
)
from ._netns import SUBNET, bridged, pair_and_join_in, start_in
from ._profiles import _robota

PORT = 47393
PING = {PING_ENV: "2"}
LAPTOP, DESK, BOX = f"{SUBNET}.1", f"{SUBNET}.2", f"{SUBNET}.3"


def _devices(home: Path) -> dict[str, dict[str, Any]]:
    done = _robota(home, "mesh", "devices", "--json")
    assert done.returncode == 0, done.stderr
    return {d["id"]: d for d in json.loads(done.stdout)}


def _links(home: Path) -> dict[str, str]:
    return {link["device"]: link["state"] for link in _status(home)["links"]}


def test_three_devices_in_namespaces_pair_on_their_terminals_link_and_a_revocation_closes_out(
    tmp_path: Path,
) -> None:
    laptop, desk, box, desk_id = laptop_desk_and_box(tmp_path, f"{LAPTOP}:{PORT}", f"{DESK}:{PORT}")
    homes = (laptop, desk, box)
    with bridged(f"r3{os.getpid() % 100000}", 3) as namespaces:
        started: list[Path] = []
        try:
            for home, namespace in zip(homes, namespaces, strict=True):
                start_in(namespace, home, PING)
                started.append(home)
            for home, namespace in ((desk, namespaces[1]), (box, namespaces[2])):
                paired, joined, code = pair_and_join_in(
                    (laptop, namespaces[0]), (home, namespace), f"{LAPTOP}:{PORT}"
                )
                assert paired.code == 0, (paired.stderr, paired.screen)
                assert joined.code == 0, (joined.stderr, joined.screen)
                assert code in paired.screen  # shown on the laptop's terminal, typed on the other
                assert home.name in paired.screen and "fingerprint" in paired.screen
            laptop_id, box_id = _status(laptop)["device"]["id"], _status(box)["device"]["id"]
            ids = {laptop: laptop_id, desk: desk_id, box: box_id}

            # Every device links to the other two, and each lists all three, linked.
            for home in homes:
                others = {ids[h] for h in homes if h is not home}
                _until(
                    lambda h=home, o=others: all(_links(h).get(d) == "connected" for d in o),
                    f"{home.name} linked to the other two",
                )
                _until(lambda h=home: len(_devices(h)) == 3, f"{home.name} lists three devices")
                listed = _devices(home)
                assert {d: listed[d]["state"] for d in listed} == dict.fromkeys(
                    ids.values(), "active"
                )
                assert all(listed[d]["linked"] for d in others), listed
                assert {x["name"] for x in _status(home)["links"]} == {
                    h.name for h in homes if h is not home
                }
            assert f"{DESK}:{PORT}" in box.joinpath("config.yaml").read_text()

            # The laptop revokes the box; the revocation reaches the desk over its link.
            desk_refused = _refusals(desk, BOX, "not-in-roster")
            laptop_refused = _refusals(laptop, BOX, "not-in-roster")
            done = _robota(laptop, "mesh", "revoke", "box", "--yes")
            assert done.returncode == 0, done.stderr
            _until(lambda: _devices(desk)[box_id]["state"] == "revoked", "the desk learns it", 30)
            for home, peer in ((laptop, box_id), (desk, box_id)):
                _until(lambda h=home, p=peer: _link_state(h, p) != "connected", "closed", 30)
            _until(
                lambda: set(_links(box).values()) == {"down"}, "every link of the box is down", 30
            )
            # The box keeps dialling: the desk and the laptop refuse it from then on.
            _until(
                lambda: _refusals(desk, BOX, "not-in-roster") > desk_refused,
                "the desk refuses the box",
            )
            _until(
                lambda: _refusals(laptop, BOX, "not-in-roster") > laptop_refused,
                "the laptop refuses the box",
            )
            time.sleep(5)  # more redials meanwhile
            assert _links(box) == {laptop_id: "down", desk_id: "down"}
            assert _link_state(laptop, box_id) != "connected"
            assert _link_state(desk, box_id) != "connected"
            assert _link_state(desk, laptop_id) == "connected"
            assert _link_state(laptop, desk_id) == "connected"
            for home in (laptop, desk):
                listed = _devices(home)
                assert listed[box_id]["state"] == "revoked" and not listed[box_id]["linked"]
        finally:
            for home in started:
                _robota(home, "server", "stop")
