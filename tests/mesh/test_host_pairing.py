"""``robota mesh pair`` and ``robota mesh join ADDRESS`` for real, on loopback: two profiles,
two hosts, each command on a pseudo-terminal of its own; the code typed on one is the code shown
on the other. Then both hosts link, list each other, and each profile's config.yaml names the
other in ``mesh.peers`` with its comments kept. A wrong code burns the window (a new one then
pairs), an expired window refuses. A code anywhere but the terminal is refused, and
so is a terminal an agent opened (its process carries the mark robota gives the agents it
starts): no pairing window opens and no code is shown."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from robota.core.control import REAPER_MARK
from robota.mesh import new_code

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
from ._terminal import ROBOTA, Step, run_on_terminal


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


def test_an_agents_terminal_can_neither_pair_nor_join(devices: tuple[Path, Path, int]) -> None:
    laptop, desk, port = devices
    marked = {REAPER_MARK: "1"}  # what every process robota starts for an agent carries
    pair = run_on_terminal(["mesh", "pair"], {**_env(laptop), **marked}, laptop.parent)
    code = new_code()  # well formed: the refusal is the host's, not the code's
    typed = [Step("Type the pairing code", lambda _screen: code + "\n")]
    join = run_on_terminal(
        ["mesh", "join", f"127.0.0.1:{port}"], {**_env(desk), **marked}, desk.parent, typed
    )
    for done, request in ((pair, "mesh.pair"), (join, "mesh.join")):
        assert done.code == 1, (done.stderr, done.screen)
        assert f"only the operator may ask '{request}'" in done.stderr, done.stderr
    assert not CODE.search(pair.stdout + pair.stderr + pair.screen), "no code was shown"
    listed = json.loads(_robota(laptop, "mesh", "devices", "--json").stdout)
    assert len(listed) == 1
    assert "peers" not in laptop.joinpath("config.yaml").read_text()


def test_a_wrong_code_burns_the_window_and_a_new_window_pairs(
    devices: tuple[Path, Path, int],
) -> None:
    laptop, desk, port = devices
    address = f"127.0.0.1:{port}"
    wrong = new_code()  # well formed, its check character right: only the PAKE can tell
    paired, joined, shown = pair_and_join(laptop, desk, address, "y\n", lambda _shown: wrong)
    assert shown and shown != wrong
    assert paired.code == 1 and "not paired" in paired.stderr, (paired.stderr, paired.screen)
    assert joined.code == 1 and "the code did not match" in joined.stderr, joined.stderr
    assert "fingerprint" not in paired.screen  # nobody was asked to accept anything
    listed = json.loads(_robota(laptop, "mesh", "devices", "--json").stdout)
    assert len(listed) == 1

    paired, joined, again = pair_and_join(laptop, desk, address, "y\n")
    assert again != shown
    assert paired.code == 0, (paired.stderr, paired.screen)
    assert joined.code == 0, (joined.stderr, joined.screen)
    listed = json.loads(_robota(laptop, "mesh", "devices", "--json").stdout)
    assert len(listed) == 2


def test_a_wrong_code_says_pairing_failed_once(devices: tuple[Path, Path, int]) -> None:
    laptop, desk, port = devices
    address = f"127.0.0.1:{port}"
    _paired, joined, _shown = pair_and_join(laptop, desk, address, "y\n", lambda _s: new_code())
    assert joined.code == 1 and "the code did not match" in joined.stderr, joined.stderr
    assert joined.stderr.count("pairing failed") == 1, joined.stderr


def test_an_expired_window_refuses_its_code(tmp_path: Path) -> None:
    port = _free_port()
    laptop, desk = signing_laptop_and_new_desk(tmp_path, f"127.0.0.1:{port}")
    with laptop.joinpath("config.yaml").open("a") as config:
        config.write("  pairingTtlSeconds: 30\n")  # the shortest window there is
    shown: list[str] = []

    def take_code(screen: str) -> str:
        shown.extend(CODE.findall(screen))
        return ""

    with hosts(laptop, desk):
        paired = run_on_terminal(
            ["mesh", "pair"],
            _env(laptop),
            laptop.parent,
            [Step("the code there.", take_code)],
            timeout=120,
        )
        assert paired.code == 1 and "the pairing window expired" in paired.stderr, paired.stderr
        assert shown, paired.screen
        joined = run_on_terminal(
            ["mesh", "join", f"127.0.0.1:{port}"],
            _env(desk),
            desk.parent,
            [Step("Type the pairing code", lambda _screen: shown[0] + "\n")],
            timeout=120,
        )
        assert joined.code == 1, joined.stderr
        assert "pairing failed: no pairing window answered" in joined.stderr, joined.stderr
        listed = json.loads(_robota(laptop, "mesh", "devices", "--json").stdout)
        assert len(listed) == 1
