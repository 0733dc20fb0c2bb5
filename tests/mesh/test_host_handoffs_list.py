"""``robota mesh handoffs [--json]`` through a running host: both sides' handoffs from the
store, newest first, with the Contract's names; a device with none says so."""

from __future__ import annotations

import json
from pathlib import Path

from robota.core.store import OfferHandoff, ReceiveHandoff, write_once

from ._hosts import hosts
from ._profiles import CONFIG, _robota

DIGEST = b"\x07" * 32
MANIFEST = {"inventory": {"source-local": ["notes.txt"]}, "origin": None, "head": None}


def test_mesh_handoffs_lists_both_sides_newest_first(tmp_path: Path) -> None:
    home = tmp_path / "laptop"
    home.mkdir(mode=0o700)
    (tmp_path / "user").mkdir()
    (home / "config.yaml").write_text(CONFIG)
    with hosts(home):
        empty = _robota(home, "mesh", "handoffs")
        assert empty.returncode == 0, empty.stderr
        assert empty.stdout.strip() == "no handoffs"

        store = home / "data" / "robota.sqlite"
        common = {
            "manifest_length": 7,
            "manifest_sha256": DIGEST,
            "manifest": MANIFEST,
            "grant": b"grant",
            "expires_at": 700.0,
        }
        pushed = OfferHandoff(
            handoff="0123456789abcdef",
            task="t-pushed",
            peer="DESK",
            payload=b'{"v":1}',
            at=100.0,
            **common,  # type: ignore[arg-type]
        )
        offered = ReceiveHandoff(
            handoff="fedcba9876543210",
            task="t-offered",
            peer="PHONE",
            nonce=b"\x01" * 16,
            at=200.0,
            **common,  # type: ignore[arg-type]
        )
        assert write_once(store, pushed) is True
        assert write_once(store, offered) == "recorded"

        listed = _robota(home, "mesh", "handoffs", "--json")
        assert listed.returncode == 0, listed.stderr
        items = json.loads(listed.stdout)
        assert [(i["id"], i["task"], i["to"], i["phase"]) for i in items] == [
            ("fedcba9876543210", "t-offered", "", "offered"),
            ("0123456789abcdef", "t-pushed", "DESK", "offered"),
        ]
        assert items[0]["from"] == "PHONE" and items[1]["updatedAt"] == 100.0
        assert set(items[0]) == {"id", "task", "from", "to", "phase", "updatedAt"}

        plain = _robota(home, "mesh", "handoffs")
        assert plain.returncode == 0, plain.stderr
        lines = plain.stdout.splitlines()
        assert lines[0].startswith("fedcba9876543210  task t-offered  from PHONE  to this device")
        assert "to DESK  offered  1970-01-01T00:01:40Z" in lines[1]
