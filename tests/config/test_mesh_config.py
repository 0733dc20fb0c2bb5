"""The ``mesh`` section: defaults, every mistake named, and never from a project's file."""

from __future__ import annotations

from pathlib import Path

import pytest

from robota.core import ConfigError
from robota.core.config import (
    Config,
    MeshPeer,
    load_project_config,
    parse_config,
    parse_project_config,
    resolve_profile,
)
from robota.core.config._mesh import host_name, parse_address

HOME = Path("/profiles/p")
DEVICE = "ABCD-EFGH-IJKL-MNOP-QRST-UVWX-YZ23-4567-ABCD-EFGH-IJKL-MNOP-QRST"
BASE = """\
agents:
  mine: {kind: acp, command: my-agent}
defaults: {agent: mine}
"""


def _parse(mesh: str) -> Config:
    return parse_config(
        BASE + mesh,
        file=HOME / "config.yaml",
        environ={},
        profile=resolve_profile({"ROBOTA_HOME": str(HOME)}),
        start_dir=Path("/w"),
    )


def test_no_section_is_the_mesh_off_with_every_default() -> None:
    mesh = _parse("").mesh
    assert mesh.enabled is False
    assert mesh.name == host_name()
    assert (mesh.listen, dict(mesh.peers)) == ((), {})
    assert (mesh.list_lifetime_seconds, mesh.pairing_ttl_seconds) == (86400, 300)


def test_a_full_section_parses() -> None:
    mesh = _parse(
        "mesh:\n"
        "  enabled: true\n"
        "  name: laptop\n"
        "  listen: ['10.0.0.1:47390', '[::1]:47391']\n"
        "  listLifetimeSeconds: 60\n"
        "  pairingTtlSeconds: 30\n"
        "  peers:\n"
        f"    {DEVICE}: {{name: desktop, address: 'desk.lan:47390'}}\n"
    ).mesh
    assert (mesh.enabled, mesh.name) == (True, "laptop")
    assert mesh.listen == ("10.0.0.1:47390", "[::1]:47391")
    assert dict(mesh.peers) == {DEVICE: MeshPeer("desktop", "desk.lan:47390")}
    assert (mesh.list_lifetime_seconds, mesh.pairing_ttl_seconds) == (60, 30)


@pytest.mark.parametrize(
    ("section", "key", "expected"),
    [
        ("mesh: [1]", "mesh", "a mapping"),
        ("mesh: {enable: true}", "mesh", "one of enabled, name"),
        ("mesh: {enabled: maybe}", "mesh.enabled", "true or false"),
        ("mesh: {name: " + "x" * 65 + "}", "mesh.name", "at most 64 bytes"),
        ("mesh: {listen: '1.2.3.4:5'}", "mesh.listen", "a list of HOST:PORT"),
        ("mesh: {listen: ['1.2.3.4']}", "mesh.listen[0]", "HOST:PORT"),
        ("mesh: {listen: ['1.2.3.4:70000']}", "mesh.listen[0]", "HOST:PORT"),
        ("mesh: {listLifetimeSeconds: 59}", "mesh.listLifetimeSeconds", "from 60"),
        ("mesh: {pairingTtlSeconds: 3601}", "mesh.pairingTtlSeconds", "to 3600"),
        ("mesh: {limits: 8}", "mesh.limits", "a mapping"),
        ("mesh: {limits: {hops: 8}}", "mesh.limits", "one of maxHops"),
        ("mesh: {limits: {maxHops: 0}}", "mesh.limits.maxHops", "from 1"),
        ("mesh: {limits: {maxHops: true}}", "mesh.limits.maxHops", "whole number"),
        ("mesh: {limits: {maxReplies: -1}}", "mesh.limits.maxReplies", "from 0"),
        ("mesh: {limits: {maxReplies: 1001}}", "mesh.limits.maxReplies", "to 1000"),
        ("mesh: {peers: [a]}", "mesh.peers", "a mapping of device ids"),
        ("mesh: {peers: {laptop: {}}}", "mesh.peers", "a device id"),
        (f"mesh: {{peers: {{{DEVICE.lower()}: {{}}}}}}", "mesh.peers", "a device id"),
        (f"mesh: {{peers: {{{DEVICE}: {{addr: x}}}}}}", f"mesh.peers.{DEVICE}", "one of name"),
        (
            f"mesh: {{peers: {{{DEVICE}: {{address: nowhere}}}}}}",
            f"mesh.peers.{DEVICE}.address",
            "HOST:PORT",
        ),
    ],
)
def test_every_mistake_names_its_key(section: str, key: str, expected: str) -> None:
    with pytest.raises(ConfigError) as caught:
        _parse(section + "\n")
    assert caught.value.key == key, caught.value
    assert expected in caught.value.expected, caught.value


@pytest.mark.parametrize(
    ("text", "parsed"),
    [
        ("host:1", ("host", 1)),
        ("10.0.0.1:47390", ("10.0.0.1", 47390)),
        ("[fe80::1]:443", ("fe80::1", 443)),
        ("host", None),
        ("host:0", None),
        ("host:65536", None),
        (":80", None),
        ("::1:80", None),
        ("a b:80", None),
    ],
)
def test_host_port_addresses(text: str, parsed: tuple[str, int] | None) -> None:
    assert parse_address(text) == parsed


def test_a_project_with_a_mesh_section_is_a_configuration_error_naming_file_and_key(
    tmp_path: Path,
) -> None:
    file = tmp_path / ".robota" / "config.yaml"
    with pytest.raises(ConfigError) as caught:
        parse_project_config({"mesh": {"enabled": True}}, file=file, agents={})
    assert (caught.value.file, caught.value.key) == (str(file), "mesh")
    assert "profile" in caught.value.expected
    # Read from disk the same way, whatever else the file holds.
    file.parent.mkdir()
    file.write_text("defaults: {agent: mine}\nmesh:\n  enabled: true\n")
    config = _parse("")
    with pytest.raises(ConfigError) as from_disk:
        load_project_config(tmp_path, config)
    assert (from_disk.value.file, from_disk.value.key) == (str(file), "mesh")


def test_the_conversation_limits_default_and_parse() -> None:
    assert (_parse("").mesh.max_hops, _parse("").mesh.max_replies) == (8, 4)
    mesh = _parse("mesh:\n  limits: {maxHops: 3, maxReplies: 0}\n").mesh
    assert (mesh.max_hops, mesh.max_replies) == (3, 0)
    assert _parse("mesh: {limits: {maxHops: 20}}\n").mesh.max_replies == 4
