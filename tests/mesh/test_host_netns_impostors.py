"""Two devices' hosts and an impostor in three network namespaces the test creates, on one
bridge (``_netns.bridged``): the laptop (signing, listening) in the first, the desk in the
second, and in the third a relay that only forwards bytes, through which the desk pairs and
links (a forwarding relay works), then the impostors: a replayed recording of that link, a
stranger with keys of its own, and a relay that ends TLS with its own certificate. Each is
refused before any application frame, and the host that refused it names it in its log with a
reason from the closed set; no key or code is in a log, a listing, an argv or an environment
of the hosts. Then the desk pairs again from the laptop's own address (its
``mesh.peers`` address replaced, comments kept, dialled at once without a restart), and its veth
is taken down: the pings find the link silent on both sides, and it comes back once the veth is
up again (redials with backoff and jitter).

The hosts ping every 2 s (``ROBOTA_MESH_PING_SECONDS``, a test's only) instead of 15 s, so a cut
link is found within seconds. Everything the test starts or creates is ended and removed in a
``finally``; the test is skipped, saying why, where namespaces cannot be created.
"""

from __future__ import annotations

import base64
import json
import os
import select
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from robota.host import PING_ENV
from robota.mesh import key_from_bytes, link_certificate
from robota.mesh._keyfile import KeyFile
from robota.mesh._linkio import LINK_PREAMBLE

from ._hosts import (
    COME_BACK,
    COMMENT,
    _link_state,
    _status,
    _until,
    pair_and_join,
    signing_laptop_and_new_desk,
)
from ._netns import SUBNET, bridged, cut, end, spawn_in, start_in, veth
from ._profiles import _robota

PORT = 47391
PING = {PING_ENV: "2"}
SILENT_WITHIN = 3 * 2 + 30.0
"""Seconds a cut link may take to be found silent: three ping intervals, and slack for load."""
IMPOSTOR = Path(__file__).with_name("_impostor.py")
LAPTOP, DESK, RELAY = f"{SUBNET}.1", f"{SUBNET}.2", f"{SUBNET}.3"


@dataclass
class Mesh:
    """The devices' homes and ids, the namespaces, and where the relay records."""

    laptop: Path
    desk: Path
    laptop_id: str
    desk_id: str
    namespaces: list[str]
    tag: str
    work: Path
    relay: subprocess.Popen[str] | None = None
    """The forwarding relay the desk paired and linked through."""
    code: str = ""
    """The pairing code shown on the laptop's terminal (and typed on the desk's)."""

    def impostor(self, *args: str) -> subprocess.Popen[str]:
        return spawn_in(self.namespaces[2], [sys.executable, str(IMPOSTOR), *args])


def _log(home: Path) -> str:
    return "".join(
        p.read_text(errors="replace") for p in sorted(home.rglob("*.log*")) if p.is_file()
    )


def _ready(process: subprocess.Popen[str], within: float = 60.0) -> None:
    """Wait for the impostor's ``ready`` line."""
    assert process.stdout is not None
    readable, _, _ = select.select([process.stdout], [], [], within)
    line = process.stdout.readline() if readable else ""
    if line.strip() != "ready":
        end(process)
        raise AssertionError(f"the impostor did not start: {line!r}")


def _finished(process: subprocess.Popen[str]) -> None:
    _ready(process)
    process.wait(30)
    end(process)


@contextmanager
def paired_through_a_relay(tmp_path: Path) -> Iterator[Mesh]:
    """The laptop's and the desk's hosts up in their namespaces, the desk paired and linked
    through a forwarding relay in the third (running while the block runs)."""
    direct = f"{LAPTOP}:{PORT}"
    laptop, desk = signing_laptop_and_new_desk(tmp_path, direct)
    tag = f"rm{os.getpid() % 100000}"
    work = tmp_path / "relay"
    work.mkdir()
    with bridged(tag, 3) as namespaces:
        started: list[Path] = []
        relay: subprocess.Popen[str] | None = None
        try:
            for home, namespace in ((laptop, namespaces[0]), (desk, namespaces[1])):
                start_in(namespace, home, PING)
                started.append(home)
            mesh = Mesh(laptop, desk, "", "", namespaces, tag, work)
            relay = mesh.impostor("forward", str(PORT), LAPTOP, str(PORT), str(work))
            _ready(relay)
            paired, joined, mesh.code = pair_and_join(laptop, desk, f"{RELAY}:{PORT}", "y\n")
            assert paired.code == 0, (paired.stderr, paired.screen)
            assert joined.code == 0, (joined.stderr, joined.screen)
            mesh.laptop_id = _status(laptop)["device"]["id"]
            mesh.desk_id = _status(desk)["device"]["id"]
            assert f"{RELAY}:{PORT}" in desk.joinpath("config.yaml").read_text()
            _until(lambda: _link_state(desk, mesh.laptop_id) == "connected", "linked via relay")
            _until(lambda: _link_state(laptop, mesh.desk_id) == "connected", "the laptop sees it")
            mesh.relay = relay
            yield mesh
        finally:
            if relay is not None:
                end(relay)
            for home in started:
                _robota(home, "server", "stop")


def _laptop_certificate(laptop: Path) -> bytes:
    raw = KeyFile(laptop / "data" / "mesh" / "credentials").get("device-key")
    assert raw is not None
    return link_certificate(key_from_bytes(raw, name="device-key"))


def _secrets(home: Path) -> list[str]:
    """Each private key of ``home``'s device as it is stored (base64) and in hex."""
    store = KeyFile(home / "data" / "mesh" / "credentials")
    forms = []
    for name in ("device-key", "signing-key"):
        raw = store.get(name)
        if raw is not None:
            forms += [base64.b64encode(raw).decode(), raw.hex()]
    return forms


def _seen(home: Path) -> list[str]:
    """What a person or a process can read of ``home``'s device: its logs, its listings, its
    config, its host's argv and environment."""
    texts = [_log(home), home.joinpath("config.yaml").read_text()]
    for listing in (("mesh", "status", "--json"), ("mesh", "devices", "--json")):
        texts.append(_robota(home, *listing).stdout)
    pid = json.loads(_robota(home, "server", "status", "--json").stdout)["pid"]
    for part in ("cmdline", "environ"):
        texts.append(Path(f"/proc/{pid}/{part}").read_bytes().decode(errors="replace"))
    return texts


def _refusals(home: Path, source: str, reason: str) -> int:
    """How many connections from ``source`` the host logged as refused for ``reason``."""
    return sum(
        1
        for line in _log(home).splitlines()
        if f"refused a connection from {source}:" in line and f": {reason}: " in line
    )


def test_impostors_in_a_third_namespace_are_refused_and_a_forwarding_relay_links(
    tmp_path: Path,
) -> None:
    with paired_through_a_relay(tmp_path) as mesh:
        laptop, desk = mesh.laptop, mesh.desk

        # A replayed recording of the link the desk opened through the relay.
        recordings = [p for p in sorted(mesh.work.glob("*.bin")) if p.read_bytes()]
        links = [p for p in recordings if p.read_bytes().startswith(LINK_PREAMBLE)]
        assert links, [p.read_bytes()[:8] for p in recordings]
        report = mesh.work / "replay.txt"
        _finished(mesh.impostor("replay", LAPTOP, str(PORT), str(links[0]), str(report)))
        _until(lambda: _refusals(laptop, RELAY, "malformed") >= 1, "the replay refused", 30)

        # A stranger: keys of its own, the laptop's certificate known, never paired.
        report = mesh.work / "stranger.txt"
        certificate = mesh.work / "laptop.der"
        certificate.write_bytes(_laptop_certificate(laptop))
        _finished(mesh.impostor("stranger", LAPTOP, str(PORT), str(certificate), str(report)))
        assert "stranger: refused" in report.read_text(), report.read_text()
        _until(lambda: _refusals(laptop, RELAY, "not-in-roster") >= 1, "the stranger refused", 30)
        refused_before = _refusals(laptop, RELAY, "not-in-roster")
        # Neither got a link: the laptop still has the desk's alone.
        assert [x["device"] for x in _status(laptop)["links"]] == [mesh.desk_id]

        # A relay that ends TLS with its own certificate, where the forwarding one was.
        assert mesh.relay is not None
        end(mesh.relay)
        _until(lambda: _link_state(desk, mesh.laptop_id) != "connected", "the relay link ends")
        report = mesh.work / "terminate.txt"
        relay = mesh.impostor("terminate", str(PORT), LAPTOP, str(PORT), str(report))
        try:
            _ready(relay)
            dialled = f"at {RELAY}:{PORT} failed: not-in-roster: "
            _until(lambda: _log(desk).count(dialled) >= 2, "the desk refuses the relay twice", 90)
            _until(
                lambda: _refusals(laptop, RELAY, "not-in-roster") > refused_before,
                "the laptop refuses the relay's own certificate",
                30,
            )
            assert _link_state(desk, mesh.laptop_id) != "connected"
            assert _link_state(laptop, mesh.desk_id) != "connected"
            seen = report.read_text()
            assert "dialler: handshake failed" in seen, seen
            # Nothing but handshakes passed: no application frame either way.
            assert all(
                line == "application bytes: 0 up, 0 down"
                for line in seen.splitlines()
                if line.startswith("application bytes")
            ), seen
        finally:
            end(relay)

        secrets = [mesh.code, *_secrets(laptop), *_secrets(desk)]
        assert len(secrets) == 7  # the code; the laptop's two keys, the desk's one, two forms
        for text in _seen(laptop) + _seen(desk):
            for secret in secrets:
                assert secret not in text


def test_a_re_pair_from_a_new_address_is_dialled_at_once_and_a_cut_link_comes_back(
    tmp_path: Path,
) -> None:
    with paired_through_a_relay(tmp_path) as mesh:
        laptop, desk = mesh.laptop, mesh.desk
        direct = f"{LAPTOP}:{PORT}"

        paired, joined, _code = pair_and_join(laptop, desk, direct, "y\n")
        assert paired.code == 0, (paired.stderr, paired.screen)
        assert joined.code == 0, (joined.stderr, joined.screen)
        config = desk.joinpath("config.yaml").read_text()
        assert config.startswith(COMMENT), config
        assert direct in config and f"{RELAY}:{PORT}" not in config, config
        # The relay goes: the desk links to the address it paired from, with no restart.
        assert mesh.relay is not None
        end(mesh.relay)
        _until(lambda: _link_state(desk, mesh.laptop_id) == "connected", "linked directly")
        _until(lambda: _link_state(laptop, mesh.desk_id) == "connected", "the laptop sees it")

        # The cut: the desk's veth goes down; the pings find the link silent on both sides.
        namespace, device = mesh.namespaces[1], veth(mesh.tag, 1)
        cut(namespace, device, up=False)
        try:
            _until(
                lambda: _link_state(desk, mesh.laptop_id) in ("connecting", "down"),
                "the desk finds the link silent",
                SILENT_WITHIN,
            )
            _until(
                lambda: _link_state(laptop, mesh.desk_id) in ("connecting", "down"),
                "the laptop finds the link silent",
                SILENT_WITHIN,
            )
            assert "went silent" in _log(desk) + _log(laptop)
            time.sleep(4)  # a few redials fail meanwhile, backing off
        finally:
            cut(namespace, device, up=True)
        _until(lambda: _link_state(desk, mesh.laptop_id) == "connected", "back", COME_BACK)
        _until(lambda: _link_state(laptop, mesh.desk_id) == "connected", "back there", 60)
