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
import os
from pathlib import Path

from ._hosts import _status
from ._profiles import _robota
from ._talking import (
    agents_in_namespaces,
    conversations,
    converse_to_the_limit,
    linked,
    linked_in_namespaces,
    model,
    owner_of,
)

__all__ = ["linked", "model"]  # the fixtures, from _talking.py


def test_a_conversation_between_two_agents_stops_at_the_limits(
    linked: tuple[Path, Path, str, str],
) -> None:
    laptop, desk, laptop_id, desk_id = linked
    mine, theirs = converse_to_the_limit(laptop, desk, laptop_id, desk_id)

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


def test_a_task_a_peers_message_ran_in_is_the_hosts(linked: tuple[Path, Path, str, str]) -> None:
    """Driven by the host's agent from then on, as after ``task send``: a terminal's ``-r``
    is refused naming the host rather than opening the same agent session a second time."""
    laptop, desk, _laptop_id, _desk_id = linked
    sent = _robota(laptop, "mesh", "send", "desk", "hello", "--wait")
    assert sent.returncode == 0, sent.stderr
    [theirs] = conversations(desk)
    assert owner_of(desk, theirs["task_id"]) == "host"


def test_agents_in_two_network_namespaces_converse_to_the_limit(tmp_path: Path) -> None:
    """The same conversation between hosts in two namespaces the test creates, each with its
    own fake model on its own loopback, linked across a veth pair."""
    with (
        agents_in_namespaces(tmp_path, f"rt{os.getpid() % 100000}") as (laptop, desk),
        linked_in_namespaces(laptop, desk),
    ):
        converse_to_the_limit(laptop[0], desk[0], laptop[2], desk[2])
