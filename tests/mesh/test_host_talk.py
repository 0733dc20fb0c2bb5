"""Peer conversations for real (issue 30 §1): two profiles' hosts linked on loopback, each
with a real agent against the fake model, whose every answer (``ECHO: ...``) asks back.

``robota mesh send desk TEXT --from TASK --wait`` runs TEXT on the desk in a new task of its
own, prints the desk's answer, and delivers it to TASK on the laptop, whose answer goes back,
and so on: each side counts alone, and the conversation stops at ``mesh.limits`` (8 messages:
the laptop's fourth reply is held back), told in ``mesh status`` and the host's log, kept
through a restart.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from ..support.model_server import FakeModel
from ._hosts import _free_port, _link_state, _status, _until, hosts
from ._profiles import _robota
from ._talking import conversations, linked_agents, new_task

TALK = 300.0
"""Seconds eight turns on two real agents may take under load."""


@pytest.fixture
def linked(tmp_path: Path) -> Iterator[tuple[Path, Path, str, str]]:
    address = f"127.0.0.1:{_free_port()}"
    with FakeModel() as model:
        laptop, desk, laptop_id, desk_id = linked_agents(
            tmp_path, (model.url, model.url), address, address
        )
        with hosts(laptop, desk):
            _until(lambda: _link_state(desk, laptop_id) == "connected", "the desk links")
            _until(lambda: _link_state(laptop, desk_id) == "connected", "the laptop sees it")
            yield laptop, desk, laptop_id, desk_id


def test_a_conversation_between_two_agents_stops_at_the_limits(
    linked: tuple[Path, Path, str, str],
) -> None:
    laptop, desk, laptop_id, desk_id = linked
    asker = new_task(laptop)
    sent = _robota(laptop, "mesh", "send", "desk", "hello there", "--from", asker, "--wait")
    assert sent.returncode == 0, sent.stderr
    assert sent.stdout.startswith("ECHO: hello there"), sent.stdout
    assert f"[robota mesh: from device laptop ({laptop_id}), task {asker}]" in sent.stdout

    def stopped() -> bool:
        rows = conversations(laptop)
        return bool(rows) and rows[0]["state"] == "stopped"

    _until(stopped, "the laptop's fourth reply is held back", TALK)
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

    # The desk's task was its own, on a route named for the laptop.
    tasks = json.loads(_robota(desk, "task", "list", "--json").stdout)
    [peer_task] = [t for t in tasks if t["id"] == theirs["task_id"]]
    assert peer_task["title"] == "from laptop"

    # The counts are the store's: a restart keeps the conversation stopped.
    assert _robota(laptop, "server", "stop").returncode == 0
    assert _robota(laptop, "server", "start").returncode == 0
    assert conversations(laptop) == [mine]
    assert any(f"conversation {mine['id']}" in p for p in _status(laptop)["problems"])


def test_a_message_to_a_task_that_is_not_there_ends_the_conversation(
    linked: tuple[Path, Path, str, str],
) -> None:
    laptop, desk, _laptop_id, _desk_id = linked
    sent = _robota(laptop, "mesh", "send", "desk", "hi", "--task", "no-such-task", "--wait")
    assert sent.returncode == 1
    assert "no reply: no-task" in sent.stderr
    [theirs] = conversations(desk)
    assert (theirs["state"], theirs["reason"], theirs["hops"]) == ("ended", "no-task", 1)
    unknown = _robota(laptop, "mesh", "send", "nobody", "hi")
    assert unknown.returncode == 2
    assert "no device of the roster is 'nobody'" in unknown.stderr
