"""``robota task push`` and ``mesh accept`` through two linked hosts with a real agent against
the fake model (issue 30 §3): a push mid-turn is refused saying a turn is running; an idle
task is offered to the other device, which lists it among its offers (``kind`` ``handoff``);
from the push on the task takes no input on the source, saying it is moving, and lists as
``moving``; an accept with no terminal to ask on takes nothing; the operator's yes on the
desk's terminal saves it there into the folder chosen, the source lists it ``moved`` to the
desk and refuses its input saying so, and on the desk it continues with its history (the fake
model's ``HISTORY`` answer names the prompts it had on the laptop). A background session
pushed stays up while its task is moving and ends once the desk saved the task."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ..support.model_server import FakeModel
from ._hosts import _until
from ._profiles import _env, _robota
from ._talking import TALK, linked, new_task
from ._terminal import Step, run_on_terminal

__all__ = ["linked"]  # the fixture, from _talking.py


@pytest.fixture
def model() -> Iterator[FakeModel]:
    """The fake model, its ``SLOW`` answer long enough (60 x 0.5 s) to push during it."""
    with FakeModel(slow_delay=0.5) as fake:
        yield fake


def _row(home: Path, task: str) -> dict[str, Any]:
    done = _robota(home, "task", "list", "--json")
    assert done.returncode == 0, done.stderr
    rows: list[dict[str, Any]] = json.loads(done.stdout)
    return next(row for row in rows if row["id"] == task)


def _state(home: Path, task: str) -> str:
    return str(_row(home, task)["state"])


def _handoffs(home: Path) -> list[dict[str, Any]]:
    done = _robota(home, "mesh", "handoffs", "--json")
    assert done.returncode == 0, done.stderr
    items: list[dict[str, Any]] = json.loads(done.stdout)
    return items


def test_a_task_pushed_idle_is_accepted_and_continues_with_its_history(
    linked: tuple[Path, Path, str, str],
) -> None:
    laptop, desk, laptop_id, desk_id = linked
    task = new_task(laptop)
    said = _robota(laptop, "task", "send", task, "HELLO", "--wait")
    assert said.returncode == 0, said.stderr

    started = _robota(laptop, "task", "send", task, "SLOW long one")
    assert started.returncode == 0, started.stderr
    refused = _robota(laptop, "task", "push", task, "--to", "desk")
    assert refused.returncode == 1, refused.stdout
    assert "cannot move while a turn is running" in refused.stderr, refused.stderr
    assert _handoffs(laptop) == []
    _until(lambda: _state(laptop, task) != "running", "the slow turn ends", TALK)

    pushed = _robota(laptop, "task", "push", task, "--to", "desk", "--json")
    assert pushed.returncode == 0, pushed.stderr
    answer = json.loads(pushed.stdout)
    assert answer["task"]["id"] == task and answer["to"] == desk_id
    assert answer["inventory"]["transferred"][1] == "2 turns"
    [mine] = _handoffs(laptop)
    assert (mine["id"], mine["task"], mine["to"]) == (answer["handoff"], task, desk_id)
    _until(lambda: bool(_handoffs(desk)), "the desk records the offer", TALK)
    [theirs] = _handoffs(desk)
    assert (theirs["id"], theirs["from"], theirs["phase"]) == (
        answer["handoff"],
        laptop_id,
        "offered",
    )

    more = _robota(laptop, "task", "send", task, "one more")
    assert more.returncode == 1, more.stdout
    assert f"task {task} is moving to device {desk_id}" in more.stderr, more.stderr
    assert _state(laptop, task) == "moving"
    again = _robota(laptop, "task", "push", task, "--to", "desk")
    assert again.returncode == 1 and "already moving" in again.stderr, again.stderr

    [offer] = [i for i in _offers(desk) if i["kind"] == "handoff"]
    assert offer == {
        "id": answer["handoff"],
        "kind": "handoff",
        "from": laptop_id,
        "name": "asker",  # the task's title (new_task), which the offer carries
        "size": offer["size"],
        "sha256": offer["sha256"],
        "expiresAt": offer["expiresAt"],
    }
    assert offer["size"] > 0 and len(offer["sha256"]) == 64

    # No terminal to ask on (as an agent's command has none): nothing is accepted.
    agent = _robota(desk, "mesh", "accept", answer["handoff"])
    assert agent.returncode != 0 and _handoffs(desk)[0]["phase"] == "offered"

    folder = desk.parent / "work"
    folder.mkdir()
    took = run_on_terminal(
        ["mesh", "accept", answer["handoff"][:8], "--dir", str(folder)],
        _env(desk),
        desk.parent,
        [Step("? [y/N]", lambda _screen: "y\n")],
        timeout=TALK,
    )
    assert took.code == 0, took.screen
    assert f"task {task} saved here from {laptop_id}, working in {folder}" in took.stdout
    assert "warning" not in took.stderr  # the source's folder was no git checkout
    _until(lambda: _state(laptop, task) == "moved", "the laptop lets the task go", TALK)
    assert _row(laptop, task)["movedTo"] == desk_id
    assert _row(desk, task)["cwd"] == str(folder)
    still = _robota(laptop, "task", "send", task, "and now")
    assert still.returncode == 1 and f"has moved to device {desk_id}" in still.stderr

    # Released, the task continues on the desk: its new agent session knows its history.
    _until(lambda: _state(desk, task) != "held", "the desk's copy is released", TALK)
    history = _robota(desk, "task", "send", task, "HISTORY", "--wait")
    assert history.returncode == 0, history.stderr
    assert history.stdout.strip() == "HISTORY: HELLO | SLOW long one | HISTORY", history.stdout


def _offers(home: Path) -> list[dict[str, Any]]:
    done = _robota(home, "mesh", "offers", "--json")
    assert done.returncode == 0, done.stderr
    items: list[dict[str, Any]] = json.loads(done.stdout)
    return items


def test_a_pushed_background_session_ends_once_the_desk_saved_its_task(
    linked: tuple[Path, Path, str, str],
) -> None:
    laptop, desk, _laptop_id, desk_id = linked
    started = _robota(laptop, "session", "start", "--background", "--restricted", "--json")
    assert started.returncode == 0, started.stderr
    session = json.loads(started.stdout)["id"]
    try:
        assert session in _robota(laptop, "session", "list", "--json").stdout
        pushed = _robota(laptop, "session", "push", session, "--to", "desk", "--json")
        assert pushed.returncode == 0, pushed.stderr
        answer = json.loads(pushed.stdout)
        task = answer["task"]["id"]

        def ended() -> bool:
            listed = _robota(laptop, "session", "list", "--json")
            return listed.returncode == 0 and session not in listed.stdout

        assert not ended()  # moving, not gone: only the desk's acknowledgement ends it
        took = run_on_terminal(
            ["mesh", "accept", answer["handoff"]],
            _env(desk),
            desk.parent,
            [Step("? [y/N]", lambda _screen: "y\n")],
            timeout=TALK,
        )
        assert took.code == 0, took.screen
        _until(lambda: _state(laptop, task) == "moved", "the laptop lets the task go", TALK)
        assert _row(laptop, task)["movedTo"] == desk_id
        _until(ended, "the session's process ends", TALK)
    finally:
        _robota(laptop, "session", "stop", session)
