"""``robota mesh`` for real: the phrase only on the controlling terminal, never stored, never
in output, argv or the environment; no terminal refused; status, devices, revoke, recover."""

from __future__ import annotations

import json
import re
import stat
import time
from pathlib import Path

import pytest

from robota.mesh import Marks, MeshFiles, enrol, key_from_bytes, public_bytes
from robota.mesh._keyfile import KeyFile

from ..support.trust import trust_workspace
from ._profiles import CONFIG, WORD, _env, _init, _robota
from ._terminal import Step, run_on_terminal


@pytest.fixture
def home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    (home / "config.yaml").write_text(CONFIG)
    (tmp_path / "user").mkdir()
    return home


def _mesh_files(home: Path) -> bytes:
    return b"".join(p.read_bytes() for p in (home / "data").rglob("*") if p.is_file())


def _no_phrase_in(text: str | bytes, phrase: str) -> None:
    data = text.encode() if isinstance(text, str) else text
    words = phrase.split()
    for start in range(22):
        assert " ".join(words[start : start + 3]).encode() not in data


def test_init_shows_the_phrase_on_the_terminal_only_and_stores_none_of_it(home: Path) -> None:
    seen: list[bytes] = []
    run, phrase = _init(home, seen)
    assert run.code == 0, (run.stderr, run.screen)
    assert "the mesh's signing device" in run.stdout
    assert "owner-only file" in run.stderr, "the file store is announced"
    for text in (run.stdout, run.stderr, *seen, _mesh_files(home)):
        _no_phrase_in(text, phrase)
    # What was typed (upper case, two spaces apart) was not echoed.
    typed = phrase.upper().split()
    assert "  ".join(typed[:2]) not in run.screen and typed[-1] not in run.screen
    assert "\x1b[3J" in run.screen, "the screen and its scrollback are cleared afterwards"
    mesh = home / "data" / "mesh"
    assert stat.S_IMODE(mesh.stat().st_mode) == 0o700
    assert stat.S_IMODE((mesh / "credentials").stat().st_mode) == 0o600
    status = json.loads(_robota(home, "mesh", "status", "--json").stdout)
    assert status["device"]["name"] == "laptop"
    assert re.fullmatch(r"[A-Z2-7]{4}(-[A-Z2-7]{4}){12}", status["device"]["id"])
    assert (status["store"], status["signing"], status["enabled"]) == ("file", True, False)
    assert status["roster"]["seq"] == 1 and status["revocations"]["seq"] == 1
    assert (status["links"], status["problems"]) == ([], [])
    devices = json.loads(_robota(home, "mesh", "devices", "--json").stdout)
    assert devices == [
        {
            "id": status["device"]["id"],
            "name": "laptop",
            "state": "active",
            "linked": False,
            "lastSeen": None,
        }
    ]
    again = _robota(home, "mesh", "init")
    assert again.returncode == 1 and "already has its mesh identity" in again.stderr


def test_a_phrase_not_typed_back_creates_nothing(home: Path) -> None:
    wrong = [Step("Type the 24 words to confirm", lambda _screen: "abandon zoo\n")] * 3
    run = run_on_terminal(["mesh", "init"], _env(home), home.parent, wrong)
    assert run.code == 1 and "nothing was created" in run.stderr
    assert "2 words, expected 24" in run.screen
    assert not (home / "data" / "mesh" / "identity.json").exists()


def test_init_without_a_terminal_refuses_and_shows_nothing(home: Path) -> None:
    done = _robota(home, "mesh", "init")
    assert done.returncode == 2
    assert "only on the controlling terminal" in done.stderr
    assert not WORD.search(done.stdout + done.stderr)
    assert not (home / "data" / "mesh" / "identity.json").exists()


def test_init_join_makes_only_a_device_key(home: Path) -> None:
    done = _robota(home, "mesh", "init", "--join")
    assert done.returncode == 0, done.stderr
    status = json.loads(_robota(home, "mesh", "status", "--json").stdout)
    assert status["device"]["id"] in done.stdout
    assert (status["signing"], status["roster"], status["store"]) == (False, None, "file")


def test_revoke_needs_yes_and_the_host_and_changes_nothing_without(home: Path) -> None:
    run, _phrase = _init(home)
    assert run.code == 0
    roster = (home / "data" / "mesh" / "roster").read_bytes()
    unknown = _robota(home, "mesh", "revoke", "nobody")
    assert unknown.returncode == 2 and "no device of the roster" in unknown.stderr
    no_yes = _robota(home, "mesh", "revoke", "laptop")
    assert no_yes.returncode == 2 and "add --yes" in no_yes.stderr
    no_host = _robota(home, "mesh", "revoke", "laptop", "--yes")
    assert no_host.returncode == 2 and "needs this profile's host running" in no_host.stderr
    assert (home / "data" / "mesh" / "roster").read_bytes() == roster


def test_recover_takes_the_phrase_on_the_terminal_and_certifies_a_new_signing_key(
    home: Path,
) -> None:
    run, phrase = _init(home)
    assert run.code == 0
    before = json.loads(_robota(home, "mesh", "status", "--json").stdout)
    seen: list[bytes] = []
    recovered = run_on_terminal(
        ["mesh", "recover"],
        _env(home),
        home.parent,
        [Step("Type the 24 words of the recovery phrase", lambda _s: phrase + "\n")],
        while_waiting=lambda pid: seen.append(Path(f"/proc/{pid}/environ").read_bytes()),
    )
    assert recovered.code == 0, (recovered.stderr, recovered.screen)
    assert "new signing key" in recovered.stdout
    for text in (recovered.stdout, recovered.stderr, recovered.screen, *seen, _mesh_files(home)):
        _no_phrase_in(text, phrase)
    after = json.loads(_robota(home, "mesh", "status", "--json").stdout)
    assert after["device"] == before["device"]
    assert (after["roster"]["seq"], after["revocations"]["seq"]) == (2, 2)
    assert after["problems"] == []


def test_recover_refuses_another_phrase(home: Path) -> None:
    run, phrase = _init(home)
    assert run.code == 0
    other = " ".join(["abandon"] * 23 + ["art"])
    assert other != phrase
    refused = run_on_terminal(
        ["mesh", "recover"],
        _env(home),
        home.parent,
        [Step("Type the 24 words of the recovery phrase", lambda _s: other + "\n")],
    )
    assert refused.code == 1 and "not the one of this device's mesh" in refused.stderr


def test_a_project_mesh_setting_is_a_problem_status_names(home: Path, tmp_path: Path) -> None:
    workspace = tmp_path / "repo"
    (workspace / ".git").mkdir(parents=True)
    (workspace / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (workspace / ".robota").mkdir()
    (workspace / ".robota" / "config.yaml").write_text("mesh:\n  enabled: true\n")
    trust_workspace(home, workspace)
    status = json.loads(_robota(home, "mesh", "status", "--json", cwd=workspace).stdout)
    assert status["enabled"] is False
    (problem,) = status["problems"]
    assert str(workspace / ".robota" / "config.yaml") in problem and "mesh" in problem


def test_status_shows_the_name_the_mesh_knows_and_a_later_mesh_name_as_a_problem(
    home: Path,
) -> None:
    joined = _robota(home, "mesh", "init", "--join")
    assert joined.returncode == 0, joined.stderr
    assert "robota mesh pair on the signing device, then robota mesh join" in joined.stdout
    assert json.loads(_robota(home, "mesh", "status", "--json").stdout)["problems"] == []
    (home / "config.yaml").write_text(CONFIG.replace("name: laptop", "name: desk"))
    status = json.loads(_robota(home, "mesh", "status", "--json").stdout)
    assert status["device"]["name"] == "laptop", "the certificate's name, which the mesh knows"
    (problem,) = status["problems"]
    assert problem.startswith("mesh.name is 'desk', but the mesh knows this device as 'laptop'")


def test_accept_without_a_terminal_says_it_needs_one(home: Path) -> None:
    refused = _robota(home, "mesh", "accept", "3f2a")
    assert refused.returncode == 2
    assert "has none: run robota mesh accept in a terminal" in refused.stderr, refused.stderr


def _enrol(signer: Path, joiner: Path, name: str) -> str:
    """Pair ``joiner`` into ``signer``'s mesh the way pairing does once its PAKE holds (the
    pairing branch does this over the wire; here both profiles are on one disk)."""
    joined = MeshFiles(joiner / "data" / "mesh").identity()
    assert joined is not None
    raw = KeyFile(joiner / "data" / "mesh" / "credentials").get("device-key")
    assert raw is not None
    subject = public_bytes(key_from_bytes(raw, name="device-key"))
    enrol(
        MeshFiles(signer / "data" / "mesh"),
        KeyFile(signer / "data" / "mesh" / "credentials"),
        subject,
        name=name,
        now=int(time.time()),
        lifetime=3600,
        marks=Marks(1, 1),
    )
    return joined.device


def test_revoke_on_a_signing_device_with_its_host_running(home: Path, tmp_path: Path) -> None:
    run, phrase = _init(home)
    assert run.code == 0
    other = tmp_path / "other"
    other.mkdir(mode=0o700)
    (other / "config.yaml").write_text(CONFIG.replace("laptop", "desk"))
    assert _robota(other, "mesh", "init", "--join").returncode == 0
    desk = _enrol(home, other, "desk")
    started = _robota(home, "server", "start")
    assert started.returncode == 0, started.stderr
    try:
        done = _robota(home, "mesh", "revoke", "desk", "--yes")
        assert done.returncode == 0, done.stderr
        assert desk in done.stdout
        status = json.loads(_robota(home, "mesh", "status", "--json").stdout)
        assert (status["roster"]["seq"], status["revocations"]["seq"]) == (3, 3)
        devices = json.loads(_robota(home, "mesh", "devices", "--json").stdout)
        assert [(d["name"], d["state"]) for d in devices] == [
            ("laptop", "active"),
            ("desk", "revoked"),
        ]
        again = _robota(home, "mesh", "revoke", "desk", "--yes")
        assert again.returncode == 2 and "no device of the roster" in again.stderr
    finally:
        assert _robota(home, "server", "stop").returncode == 0
    logs = b"".join(p.read_bytes() for p in home.rglob("*.log*") if p.is_file())
    assert logs, "the host logged"
    _no_phrase_in(logs, phrase)
    private = (home / "data" / "mesh" / "credentials").read_text()
    assert all(value not in logs.decode() for value in json.loads(private).values())
