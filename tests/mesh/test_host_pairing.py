"""``robota mesh pair`` and ``robota mesh join ADDRESS`` for real, on loopback: two profiles,
two hosts, each command on a pseudo-terminal of its own; the code typed on one is the code shown
on the other. Then both hosts link, list each other, and each profile's config.yaml names the
other in ``mesh.peers`` with its comments kept. A code anywhere but the terminal is refused."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from ._hosts import (
    CODE,
    COMMENT,
    _free_port,
    _link_state,
    _until,
    hosts,
    pair_and_join,
    signing_laptop_and_new_desk,
)
from ._profiles import CONFIG, _env, _robota
from ._terminal import ROBOTA


@pytest.fixture
def devices(tmp_path: Path) -> Iterator[tuple[Path, Path, int]]:
    """``signing_laptop_and_new_desk`` on loopback, both hosts up."""
    port = _free_port()
    laptop, desk = signing_laptop_and_new_desk(tmp_path, f"127.0.0.1:{port}")
    with hosts(laptop, desk):
        yield laptop, desk, port


def test_pair_and_join_through_the_terminals_then_the_hosts_link(
    devices: tuple[Path, Path, int],
) -> None:
    laptop, desk, port = devices
    paired, joined, code = pair_and_join(laptop, desk, f"127.0.0.1:{port}", "y\n")
    assert paired.code == 0, (paired.stderr, paired.screen)
    assert joined.code == 0, (joined.stderr, joined.screen)
    # The code was shown on the pairing terminal only, never printed or in a listing.
    assert code in paired.screen
    for text in (paired.stdout, paired.stderr, joined.stdout, joined.stderr):
        assert code not in text
    laptop_id = json.loads(_robota(laptop, "mesh", "status", "--json").stdout)["device"]["id"]
    desk_id = json.loads(_robota(desk, "mesh", "status", "--json").stdout)["device"]["id"]
    assert desk_id in paired.stdout and laptop_id in joined.stdout
    assert "desk" in paired.screen and desk_id in paired.screen  # name and fingerprint asked

    # Each profile names the other in mesh.peers, its own comment kept.
    laptop_config, desk_config = (h.joinpath("config.yaml").read_text() for h in (laptop, desk))
    assert laptop_config.startswith(COMMENT) and desk_config.startswith(COMMENT)
    assert desk_id in laptop_config
    assert laptop_id in desk_config and f"127.0.0.1:{port}" in desk_config

    _until(lambda: _link_state(desk, laptop_id) == "connected", "the desk links to the laptop")
    _until(lambda: _link_state(laptop, desk_id) == "connected", "the laptop sees the desk")
    for home in (laptop, desk):
        listed = json.loads(_robota(home, "mesh", "devices", "--json").stdout)
        assert {d["id"]: d["state"] for d in listed} == {laptop_id: "active", desk_id: "active"}
        logs = b"".join(p.read_bytes() for p in home.rglob("*.log*") if p.is_file())
        assert code.encode() not in logs


def test_a_declined_pairing_pairs_nothing(devices: tuple[Path, Path, int]) -> None:
    laptop, desk, port = devices
    paired, joined, _code = pair_and_join(laptop, desk, f"127.0.0.1:{port}", "n\n")
    assert paired.code == 1 and "not paired" in paired.stderr
    assert joined.code == 1 and "pairing failed" in joined.stderr
    listed = json.loads(_robota(laptop, "mesh", "devices", "--json").stdout)
    assert len(listed) == 1


@pytest.mark.parametrize(
    ("args", "stdin"),
    [
        (["127.0.0.1:9", "7KQ4M-2XRPA-J"], None),
        (["127.0.0.1:9", "--code", "7KQ4M-2XRPA-J"], None),
        (["127.0.0.1:9"], "7KQ4M-2XRPA-J\n"),
    ],
)
def test_a_code_anywhere_but_the_terminal_is_refused(
    tmp_path: Path, args: list[str], stdin: str | None
) -> None:
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    (tmp_path / "user").mkdir()
    (home / "config.yaml").write_text(CONFIG)
    done = subprocess.run(
        [str(ROBOTA), "mesh", "join", *args],
        check=False,
        env=_env(home),
        cwd=tmp_path,
        input=stdin if stdin is not None else "",
        capture_output=True,
        text=True,
        timeout=60,
        start_new_session=True,
    )
    assert done.returncode == 1
    assert "the pairing code is read only on the terminal" in done.stderr
    assert not (home / "data" / "mesh" / "identity.json").exists()


def test_without_a_terminal_pair_and_join_refuse_and_show_no_code(
    devices: tuple[Path, Path, int],
) -> None:
    laptop, desk, port = devices
    pair = _robota(laptop, "mesh", "pair")
    join = _robota(desk, "mesh", "join", f"127.0.0.1:{port}")
    for done in (pair, join):
        assert done.returncode == 2
        assert "terminal" in done.stderr
        assert not CODE.search(done.stdout + done.stderr)
