"""``robota session push`` refused while an approval waits (issue 30 §3), through two linked
hosts and a real agent that asks before a command (the fake model's ``SHELL``): a background
session on the laptop, a terminal attached to it, asked to run a command; while the question
waits, the push is refused naming the approval and nothing is offered; once it is answered and
the turn ended, the same push offers the task."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from robota.core.config import resolve_profile

from ..support.host import short_root
from ..support.model_server import FakeModel
from ..support.real_agents import write_real_agents_config
from ..support.robota import Robota
from ..support.sessions import Surface, notice
from ._hosts import _free_port, _link_state, _until, hosts
from ._profiles import _robota, listed
from ._talking import AGENT, TALK, linked_agents, model, write_mesh

__all__ = ["model", "short_root"]  # the fixtures, from _talking.py and tests/support/host.py


@pytest.fixture
def asking(short_root: Path, model: FakeModel) -> Iterator[tuple[Path, Path, str, str]]:
    """Two linked profiles on loopback whose laptop's agent asks before a command (``ask``),
    their hosts running: their homes and device ids. Under a short root: the test attaches to
    the session's Unix socket itself."""
    address = f"127.0.0.1:{_free_port()}"
    laptop, desk, laptop_id, desk_id = linked_agents(
        short_root, (model.url, model.url), address, address
    )
    device = laptop.parent
    robota = Robota(device, {"HOME": str(device / "user"), "ROBOTA_HOME": str(laptop)})
    write_real_agents_config(robota, [AGENT], model.url, model_catalog=True, ask=True)
    write_mesh(laptop, {"name": "laptop", "enabled": True, "listen": [address]})
    with hosts(laptop, desk):
        _until(lambda: _link_state(desk, laptop_id) == "connected", "the desk links")
        _until(lambda: _link_state(laptop, desk_id) == "connected", "the laptop sees it")
        yield laptop, desk, laptop_id, desk_id


def _state(home: Path, session: str) -> str:
    [row] = [row for row in listed(home, "session", "list") if row["id"] == session]
    return str(row["state"])


def test_a_push_is_refused_while_an_approval_waits(
    asking: tuple[Path, Path, str, str],
) -> None:
    laptop, _desk, _laptop_id, desk_id = asking
    started = _robota(laptop, "session", "start", "--background", "--json")
    assert started.returncode == 0, started.stderr
    session = json.loads(started.stdout)["id"]
    surface: Surface | None = None
    try:
        surface = Surface(resolve_profile({"ROBOTA_HOME": str(laptop)}), session)
        assert surface.first["type"] == "hello", surface.first
        surface.send({"type": "submit", "prompt": "SHELL: touch made.txt && echo asked-first"})
        asked = surface.until(notice("TurnUpdate", "approval_requested"))
        approval = asked["notice"]["event"]["approval_id"]
        assert _state(laptop, session) == "needs-input"

        refused = _robota(laptop, "session", "push", session, "--to", "desk")
        assert refused.returncode == 1, refused.stdout
        assert "cannot move while an approval is waiting" in refused.stderr, refused.stderr
        assert listed(laptop, "mesh", "handoffs") == []

        surface.send({"type": "permission-response", "id": approval, "result": "decline"})
        surface.until(notice("TurnFinished"))
        _until(lambda: _state(laptop, session) == "idle", "the session's turn ends", TALK)
        pushed = _robota(laptop, "session", "push", session, "--to", "desk", "--json")
        assert pushed.returncode == 0, pushed.stderr
        [mine] = listed(laptop, "mesh", "handoffs")
        assert (mine["id"], mine["to"]) == (json.loads(pushed.stdout)["handoff"], desk_id)
    finally:
        if surface is not None:
            surface.close()
        _robota(laptop, "session", "stop", session)
