"""Two linked profiles whose hosts run a real agent against the fake model, for the peer
conversation tests: their config (the real agent's, with a ``mesh`` section), their store's
conversations, and a task made on a host."""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

from ..support.real_agents import write_real_agents_config
from ..support.robota import Robota
from ._paired import _paired
from ._profiles import _init, _robota

__all__ = ["AGENT", "conversations", "linked_agents", "new_task", "write_mesh"]

AGENT = "codex-acp"


def write_mesh(home: Path, mesh: dict[str, Any]) -> None:
    """Set the profile's ``mesh`` section (the file is JSON, which is YAML)."""
    config = json.loads((home / "config.yaml").read_text())
    config["mesh"] = mesh
    (home / "config.yaml").write_text(json.dumps(config, indent=2))


def linked_agents(
    root: Path, model_urls: tuple[str, str], listen: str, dial: str
) -> tuple[Path, Path, str, str]:
    """A signing ``laptop`` listening on ``listen`` and a ``desk`` that dials it at ``dial``,
    in one mesh, each with the real agent against its fake model (hosts not started); their
    homes and device ids."""
    homes = []
    for name, url in zip(("laptop", "desk"), model_urls, strict=True):
        device = root / name
        device.mkdir()
        robota = Robota(
            device,
            {"HOME": str(device / "user"), "ROBOTA_HOME": str(device / "home")},
        )
        (device / "user").mkdir()
        write_real_agents_config(robota, [AGENT], url, model_catalog=True)
        write_mesh(robota.home, {"name": name})
        homes.append(robota.home)
    laptop, desk = homes
    assert _init(laptop)[0].code == 0
    assert _robota(desk, "mesh", "init", "--join").returncode == 0
    laptop_id, desk_id = _paired(laptop, desk)
    write_mesh(laptop, {"name": "laptop", "enabled": True, "listen": [listen]})
    write_mesh(
        desk,
        {
            "name": "desk",
            "enabled": True,
            "peers": {laptop_id: {"name": "laptop", "address": dial}},
        },
    )
    return laptop, desk, laptop_id, desk_id


def new_task(home: Path) -> str:
    done = _robota(home, "task", "new", "--title", "asker", "--json")
    assert done.returncode == 0, done.stderr
    task_id: str = json.loads(done.stdout)["task"]["id"]
    return task_id


def conversations(home: Path) -> list[dict[str, Any]]:
    """The profile's ``mesh_conversations`` rows."""
    with closing(sqlite3.connect(home / "data" / "robota.sqlite")) as db:
        db.row_factory = sqlite3.Row
        rows = db.execute("SELECT * FROM mesh_conversations ORDER BY created_at").fetchall()
        return [dict(row) for row in rows]
