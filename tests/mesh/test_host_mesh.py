"""The host's mesh service for real: two profiles, two ``robota server`` processes on loopback,
linked by their hosts; the link survives a host's restart and a revocation closes it.

The devices are put in one mesh the way pairing leaves them (``enrol`` on the signing device,
``adopt_pairing`` on the joiner, each one's link certificate known to the other); pairing
through the terminals is ``robota mesh pair``/``join``'s own test.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from robota.host._mesh_files import load_link_certs, split_address

from ._hosts import (
    _free_port,
    _link_state,
    _status,
    _until,
    hosts,
    restart_then_revoke,
    signing_device,
)
from ._paired import _paired
from ._profiles import CONFIG, _init, _robota


@pytest.fixture
def two_devices(tmp_path: Path) -> Iterator[tuple[Path, Path, str, str]]:
    laptop, desk = tmp_path / "laptop", tmp_path / "desk"
    for home in (laptop, desk):
        home.mkdir(mode=0o700)
    (tmp_path / "user").mkdir()
    (laptop / "config.yaml").write_text(CONFIG)
    (desk / "config.yaml").write_text(CONFIG.replace("laptop", "desk"))
    assert _init(laptop)[0].code == 0
    assert _robota(desk, "mesh", "init", "--join").returncode == 0
    laptop_id, desk_id = _paired(laptop, desk)
    port = _free_port()
    (laptop / "config.yaml").write_text(
        CONFIG + f"  enabled: true\n  listen: ['127.0.0.1:{port}']\n"
    )
    (desk / "config.yaml").write_text(
        CONFIG.replace("laptop", "desk")
        + "  enabled: true\n"
        + f"  peers:\n    {laptop_id}: {{name: laptop, address: '127.0.0.1:{port}'}}\n"
    )
    with hosts(laptop, desk):
        yield laptop, desk, laptop_id, desk_id


def test_two_hosts_link_come_back_after_a_restart_and_a_revocation_closes_the_link(
    two_devices: tuple[Path, Path, str, str],
) -> None:
    laptop, desk, laptop_id, desk_id = two_devices
    _until(lambda: _link_state(desk, laptop_id) == "connected", "the desk links to the laptop")
    _until(lambda: _link_state(laptop, desk_id) == "connected", "the laptop sees the desk")
    for home in (laptop, desk):
        devices = json.loads(_robota(home, "mesh", "devices", "--json").stdout)
        assert {d["id"]: d["state"] for d in devices} == {laptop_id: "active", desk_id: "active"}
        assert _status(home)["problems"] == []

    restart_then_revoke(
        laptop, desk, laptop_id, desk_id, lambda: _robota(laptop, "server", "start")
    )
    devices = json.loads(_robota(laptop, "mesh", "devices", "--json").stdout)
    assert {d["id"]: d["state"] for d in devices}[desk_id] == "revoked"
    # The learned link certificates were saved beside the identity.
    assert len(load_link_certs(laptop / "data" / "mesh" / "link-certs")) == 2


def test_a_mesh_that_cannot_open_is_a_problem_and_the_host_serves_on(tmp_path: Path) -> None:
    home = signing_device(tmp_path, "  enabled: true\n")
    credentials = home / "data" / "mesh" / "credentials"
    credentials.write_text(credentials.read_text().replace('"device-key": "', '"device-key": "!'))
    assert _robota(home, "server", "start").returncode == 0
    try:
        problems = _status(home)["problems"]
        assert any(p.startswith("host: the mesh did not open") for p in problems), problems
        assert _robota(home, "server", "status").returncode == 0
    finally:
        assert _robota(home, "server", "stop").returncode == 0


@pytest.mark.parametrize(
    ("address", "split"),
    [
        ("127.0.0.1:7240", ("127.0.0.1", 7240)),
        ("[::1]:7240", ("::1", 7240)),
        ("box.local:0", ("box.local", 0)),
        ("127.0.0.1", None),
        (":7240", None),
        ("host:port", None),
        ("host:70000", None),
    ],
)
def test_split_address(address: str, split: tuple[str, int] | None) -> None:
    if split is None:
        with pytest.raises(ValueError, match="is not HOST:PORT"):
            split_address(address)
    else:
        assert split_address(address) == split


def test_the_signing_hosts_reissue_the_lists_before_half_their_lifetime(tmp_path: Path) -> None:
    # The shortest lifetime there is (60 s): the host reissues once 30 s have passed.
    home = signing_device(tmp_path, "  enabled: true\n  listLifetimeSeconds: 60\n")
    first = _status(home)
    assert (first["roster"]["seq"], first["revocations"]["seq"]) == (1, 1)
    with hosts(home):
        _until(lambda: _status(home)["roster"]["seq"] >= 2, "the lists reissued", 90)
        again = _status(home)
        assert again["revocations"]["seq"] >= 2
        assert again["problems"] == []
