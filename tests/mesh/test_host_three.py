"""Three devices' hosts on loopback: the laptop (signing, listening) pairs the desk and then the
box through their terminals; the desk listens too and the box dials it (its address in the
box's ``mesh.peers`` before the box ever paired), and the two link with what the laptop's
gossip taught them (the newer roster, each other's link certificate). Then the laptop revokes
the box: the revocation reaches the desk, which closes its link to the box too, and the box
stays out on both."""

from __future__ import annotations

import json
import time
from pathlib import Path

from ._hosts import (
    COMMENT,
    _free_port,
    _link_state,
    _status,
    _until,
    hosts,
    pair_and_join,
    signing_laptop_and_new_desk,
)
from ._profiles import CONFIG, _robota


def _devices(home: Path) -> dict[str, str]:
    listed = json.loads(_robota(home, "mesh", "devices", "--json").stdout)
    return {d["id"]: d["state"] for d in listed}


def test_a_pairs_b_and_c_they_link_and_a_revocation_of_c_reaches_b(tmp_path: Path) -> None:
    laptop_port, desk_port = _free_port(), _free_port()
    laptop, desk = signing_laptop_and_new_desk(tmp_path, f"127.0.0.1:{laptop_port}")
    with desk.joinpath("config.yaml").open("a") as config:
        config.write(f"  listen: ['127.0.0.1:{desk_port}']\n")
    assert _robota(desk, "mesh", "init", "--join").returncode == 0
    desk_id = _status(desk)["device"]["id"]
    box = tmp_path / "box"
    box.mkdir(mode=0o700)
    box.joinpath("config.yaml").write_text(
        COMMENT
        + CONFIG.replace("laptop", "box")
        + "  enabled: true\n"
        + f"  peers:\n    {desk_id}: {{name: desk, address: '127.0.0.1:{desk_port}'}}\n"
    )
    with hosts(laptop, desk, box):
        for home in (desk, box):
            paired, joined, _code = pair_and_join(laptop, home, f"127.0.0.1:{laptop_port}", "y\n")
            assert paired.code == 0, (paired.stderr, paired.screen)
            assert joined.code == 0, (joined.stderr, joined.screen)
        laptop_id, box_id = _status(laptop)["device"]["id"], _status(box)["device"]["id"]
        for home, peer in ((desk, laptop_id), (box, laptop_id), (box, desk_id), (desk, box_id)):
            _until(lambda h=home, p=peer: _link_state(h, p) == "connected", f"{home.name}-{peer}")
        for home in (laptop, desk, box):
            _until(lambda h=home: len(_devices(h)) == 3, f"{home.name} lists three devices")

        done = _robota(laptop, "mesh", "revoke", "box", "--yes")
        assert done.returncode == 0, done.stderr
        _until(lambda: _devices(desk)[box_id] == "revoked", "the desk learns of it", 30)
        for home, peer in ((laptop, box_id), (desk, box_id), (box, laptop_id), (box, desk_id)):
            _until(lambda h=home, p=peer: _link_state(h, p) != "connected", "closed", 30)
        time.sleep(5)  # the box redials meanwhile: refused on both
        assert _link_state(laptop, box_id) != "connected"
        assert _link_state(desk, box_id) != "connected"
        assert _link_state(desk, laptop_id) == "connected"
        assert _devices(laptop)[box_id] == "revoked"
