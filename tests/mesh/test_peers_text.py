"""``mesh.peers`` as pairing writes it (``robota.host._mesh_peers``): a new device added, a
device paired again from a new address with only its address replaced, comments, the name the
operator gave and the other peers kept as they were."""

from __future__ import annotations

from pathlib import Path

import pytest

from robota.host._mesh_peers import peers_text, record_peer

A = "AAAA-BBBB-CCCC-DDDD-EEEE-FFFF-GGGG-HHHH-IIII-JJJJ-KKKK-LLLL-MMMM"
B = "MMMM-LLLL-KKKK-JJJJ-IIII-HHHH-GGGG-FFFF-EEEE-DDDD-CCCC-BBBB-AAAA"
HEAD = "# my own note\nmesh:\n  enabled: true  # on\n  peers:\n"
OTHER = f"    {B}: {{name: box, address: 10.0.0.9:7}}  # the build box\n"


@pytest.mark.parametrize(
    ("existing", "address", "expected"),
    [
        # A device paired for the first time: added with the address used.
        ("", "10.0.0.1:5", f'mesh:\n  peers:\n    {A}: {{name: "desk", address: "10.0.0.1:5"}}\n'),
        # The pairing device records no address (the joiner dials it).
        ("", None, f'mesh:\n  peers:\n    {A}: {{name: "desk"}}\n'),
        # Paired again from the same address: nothing changes.
        (
            HEAD + f'    {A}: {{"name": "mine", "address": "10.0.0.1:5"}}  # desk\n' + OTHER,
            "10.0.0.1:5",
            HEAD + f'    {A}: {{"name": "mine", "address": "10.0.0.1:5"}}  # desk\n' + OTHER,
        ),
        # From a new address: the address alone is replaced (flow style, JSON quotes).
        (
            HEAD + f'    {A}: {{"name": "mine", "address": "10.0.0.1:5"}}  # desk\n' + OTHER,
            "192.168.7.2:47390",
            HEAD + f'    {A}: {{"name": "mine", "address": "192.168.7.2:47390"}}  # desk\n' + OTHER,
        ),
        # Block style, plain and quoted, a comment after it.
        (
            HEAD + f"    {A}:\n      name: mine\n      address: 10.0.0.1:5   # old\n" + OTHER,
            "[fd00::2]:9",
            HEAD + f'    {A}:\n      name: mine\n      address: "[fd00::2]:9"   # old\n' + OTHER,
        ),
        (
            HEAD + f"    {A}:\n      address: '10.0.0.1:5'\n      name: mine\n",
            "10.0.0.3:5",
            HEAD + f'    {A}:\n      address: "10.0.0.3:5"\n      name: mine\n',
        ),
        # An entry without an address gains one; one with an address keeps it for the pairer.
        (
            HEAD + f"    {A}: {{name: mine}}\n",
            "10.0.0.3:5",
            HEAD + f"    {A}: {{name: mine, address: 10.0.0.3:5}}\n",
        ),
        (
            HEAD + f"    {A}: {{name: mine, address: 10.0.0.1:5}}\n",
            None,
            HEAD + f"    {A}: {{name: mine, address: 10.0.0.1:5}}\n",
        ),
    ],
)
def test_peers_text(existing: str, address: str | None, expected: str) -> None:
    assert peers_text(existing, A, "desk", address) == expected


def test_record_peer_rewrites_the_file_whole_with_its_mode(tmp_path: Path) -> None:
    config = tmp_path / "config.yaml"
    config.write_text(HEAD + f"    {A}: {{name: mine, address: 10.0.0.1:5}}\n")
    config.chmod(0o640)
    record_peer(config, A, "desk", "10.0.0.2:5")
    assert config.read_text() == HEAD + f'    {A}: {{name: mine, address: "10.0.0.2:5"}}\n'
    assert config.stat().st_mode & 0o777 == 0o640
    assert [p.name for p in tmp_path.iterdir()] == ["config.yaml"]
