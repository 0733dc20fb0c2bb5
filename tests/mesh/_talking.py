"""Two linked profiles whose hosts run a real agent against the fake model, for the peer
conversation tests: their config (the real agent's, with a ``mesh`` section), their store's
conversations, and a task made on a host."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from contextlib import closing, contextmanager
from pathlib import Path
from typing import Any

import pytest

from ..support.model_server import FakeModel
from ..support.real_agents import write_real_agents_config
from ..support.robota import Robota
from ._hosts import _free_port, _link_state, _status, _until, hosts
from ._netns import PORT, SUBNET, namespaces_and_veth, start_in
from ._paired import _paired
from ._profiles import _init, _robota

__all__ = [
    "AGENT",
    "agents_in_namespaces",
    "linked",
    "model",
    "TALK",
    "conversations",
    "converse_to_the_limit",
    "fake_model_in",
    "linked_agents",
    "linked_in_namespaces",
    "new_task",
    "owner_of",
    "write_mesh",
]

AGENT = "codex-acp"
TALK = 300.0
"""Seconds eight turns on two real agents may take under load."""
FAKE_MODEL = Path(__file__).parents[2] / "tools" / "fake_model.py"


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


def owner_of(home: Path, task_id: str) -> str | None:
    """The kind of process the profile's store says drives ``task_id`` (``host``, ...)."""
    with closing(sqlite3.connect(home / "data" / "robota.sqlite")) as db:
        row = db.execute("SELECT owner FROM task_owners WHERE task_id = ?", (task_id,)).fetchone()
    return None if row is None else str(row[0])


@contextmanager
def fake_model_in(namespace: str, *options: str) -> Iterator[str]:
    """``tools/fake_model.py [OPTIONS]`` run inside ``namespace`` (its own loopback): its URL.
    Ended (its process group) afterwards."""
    ip = "/usr/sbin/ip" if Path("/usr/sbin/ip").exists() else "ip"
    model = subprocess.Popen(
        [ip, "netns", "exec", namespace, sys.executable, str(FAKE_MODEL), *options],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        start_new_session=True,
    )
    try:
        assert model.stdout is not None
        url = model.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:"), url
        yield url
    finally:
        os.killpg(model.pid, signal.SIGTERM)
        try:
            model.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(model.pid, signal.SIGKILL)
            model.wait(30)
        if model.stdout is not None:
            model.stdout.close()


def converse_to_the_limit(
    laptop: Path, desk: Path, laptop_id: str, desk_id: str
) -> tuple[dict[str, Any], dict[str, Any]]:
    """``mesh send desk ... --from TASK --wait`` on the laptop, whose agent and the desk's
    answer every message (the fake model's ``ECHO``): the reply printed, then the conversation
    stopped by the laptop at ``maxHops`` (8) as both sides counted it, told in ``mesh status``
    and the host's log; both sides' rows."""
    asker = new_task(laptop)
    sent = _robota(laptop, "mesh", "send", "desk", "hello there", "--from", asker, "--wait")
    assert sent.returncode == 0, sent.stderr
    assert sent.stdout.startswith("ECHO: hello there"), sent.stdout
    assert f"[robota mesh: from device laptop ({laptop_id}), task {asker}]" in sent.stdout

    def stopped() -> bool:
        rows = conversations(laptop)
        return bool(rows) and rows[0]["state"] == "stopped"

    _until(stopped, "the laptop's fourth reply is held back", TALK)

    def told() -> bool:  # the laptop tells the desk over the link once it stopped
        rows = conversations(desk)
        return bool(rows) and rows[0]["state"] != "open"

    _until(told, "the desk is told the conversation ended", TALK)
    [mine] = conversations(laptop)
    [theirs] = conversations(desk)
    assert mine["id"] == theirs["id"]
    assert (mine["peer"], mine["began"], mine["task_id"]) == (desk_id, "me", asker)
    assert (mine["hops"], mine["replies"], mine["reason"]) == (8, 3, "max-hops")
    assert (theirs["peer"], theirs["began"], theirs["peer_task"]) == (laptop_id, "peer", asker)
    assert (theirs["hops"], theirs["replies"]) == (8, 4)
    assert theirs["state"] == "ended" and theirs["reason"] == "peer: max-hops"
    problems = _status(laptop)["problems"]
    assert any(f"conversation {mine['id']} with desk stopped (max-hops)" in p for p in problems), (
        problems
    )
    log = (laptop / "logs" / "robota.log").read_text()
    assert f"the conversation {mine['id']} with desk stopped" in log
    return mine, theirs


@pytest.fixture
def model() -> Iterator[FakeModel]:
    with FakeModel() as fake:
        yield fake


@pytest.fixture
def linked(tmp_path: Path, model: FakeModel) -> Iterator[tuple[Path, Path, str, str]]:
    """Two linked profiles on loopback, their hosts running, sharing ``model``: their homes
    and device ids."""
    address = f"127.0.0.1:{_free_port()}"
    laptop, desk, laptop_id, desk_id = linked_agents(
        tmp_path, (model.url, model.url), address, address
    )
    with hosts(laptop, desk):
        _until(lambda: _link_state(desk, laptop_id) == "connected", "the desk links")
        _until(lambda: _link_state(laptop, desk_id) == "connected", "the laptop sees it")
        yield laptop, desk, laptop_id, desk_id


Device = tuple[Path, str, str]
"""A profile's home, the namespace its host runs in, its device id."""


@contextmanager
def agents_in_namespaces(root: Path, tag: str) -> Iterator[tuple[Device, Device]]:
    """Two namespaces the test creates, joined by a veth pair, each with its own fake model on
    its own loopback; a laptop listening in the first and a desk dialling it, each with the
    real agent against its namespace's model (``linked_agents``; hosts not started)."""
    address = f"{SUBNET}.1:{PORT}"
    with (
        namespaces_and_veth(tag) as (laptop_ns, desk_ns),
        fake_model_in(laptop_ns) as laptop_model,
        fake_model_in(desk_ns) as desk_model,
    ):
        laptop, desk, laptop_id, desk_id = linked_agents(
            root, (laptop_model, desk_model), address, address
        )
        yield (laptop, laptop_ns, laptop_id), (desk, desk_ns, desk_id)


@contextmanager
def linked_in_namespaces(
    laptop: tuple[Path, str, str], desk: tuple[Path, str, str]
) -> Iterator[None]:
    """Each profile's host (home, namespace, device id) started in its namespace, the two
    linked, for the block; both stopped after it."""
    started: list[Path] = []
    try:
        for home, namespace, _device in (laptop, desk):
            start_in(namespace, home)
            started.append(home)
        _until(lambda: _link_state(desk[0], laptop[2]) == "connected", "the desk links across")
        _until(lambda: _link_state(laptop[0], desk[2]) == "connected", "the laptop sees it")
        yield
    finally:
        for home in started:
            _robota(home, "server", "stop")
