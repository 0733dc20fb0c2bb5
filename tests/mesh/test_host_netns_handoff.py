"""A background session moved between two devices in two network namespaces (issue 30 §3), end
to end: each profile's host, its background sessions and their real agents run inside the
device's namespace with a fake model of its own, the two linked across a veth pair the test
creates. On the laptop a background session's task answers HELLO; pushed while its SLOW turn
runs, the push is refused saying a turn runs; pushed idle, the desk lists it under the task's
title and its operator takes it on the desk's terminal into a folder there; the laptop lists
it ``moved`` to the desk and the session's process ends. On the desk it continues in a
background session started on that task (``session start --background --task``) and then with
``robota -r TASK -p``, each answering with the history it had on the laptop (the fake model's
``HISTORY``). A replayed offer and one for another device are refused at the host's handoff
driver (``test_host_offer_replay``: a replay needs the source's device key on a new link).

Everything the test creates (namespaces, the veth pair, the models, hosts and sessions) is
ended in ``finally``; skipped, saying why, where namespaces cannot be created.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from ._hosts import _until
from ._netns import PORT, SUBNET, namespaces_and_veth, robota_in
from ._profiles import _env, _robota, listed
from ._talking import TALK, fake_model_in, linked_agents, linked_in_namespaces
from ._terminal import Step, run_on_terminal


def _task(home: Path, task: str) -> dict[str, Any]:
    [row] = [row for row in listed(home, "task", "list") if row["id"] == task]
    return row


def _sessions(home: Path) -> list[str]:
    return [str(row["id"]) for row in listed(home, "session", "list")]


def test_a_background_session_moves_across_namespaces_and_continues_with_its_history(
    tmp_path: Path,
) -> None:
    address = f"{SUBNET}.1:{PORT}"
    started: list[tuple[Path, str]] = []
    with (
        namespaces_and_veth(f"rh{os.getpid() % 100000}") as (laptop_ns, desk_ns),
        fake_model_in(laptop_ns, "--slow-deltas", "60", "--slow-delay", "0.5") as laptop_url,
        fake_model_in(desk_ns) as desk_url,
    ):
        laptop, desk, laptop_id, desk_id = linked_agents(
            tmp_path, (laptop_url, desk_url), address, address
        )
        with linked_in_namespaces((laptop, laptop_ns, laptop_id), (desk, desk_ns, desk_id)):
            try:
                begun = robota_in(laptop_ns, laptop, "session", "start", "--background", "--json")
                assert begun.returncode == 0, begun.stderr
                session = json.loads(begun.stdout)["id"]
                started.append((laptop, session))
                title = f"session-{session[:6]}"
                [task] = [r["id"] for r in listed(laptop, "task", "list") if r["title"] == title]

                said = _robota(laptop, "task", "send", task, "HELLO", "--wait")
                assert said.returncode == 0, said.stderr
                slow = _robota(laptop, "task", "send", task, "SLOW long one")
                assert slow.returncode == 0, slow.stderr
                _until(lambda: _task(laptop, task)["state"] == "running", "the slow turn runs")
                busy = _robota(laptop, "session", "push", session, "--to", "desk")
                assert busy.returncode == 1, busy.stdout
                assert "cannot move while a turn is running" in busy.stderr, busy.stderr
                assert listed(laptop, "mesh", "handoffs") == []
                _until(lambda: _task(laptop, task)["state"] != "running", "the turn ends", TALK)

                pushed = _robota(laptop, "session", "push", session, "--to", "desk", "--json")
                assert pushed.returncode == 0, pushed.stderr
                handoff = json.loads(pushed.stdout)["handoff"]
                _until(lambda: bool(listed(desk, "mesh", "offers")), "the desk lists the offer")
                [offer] = listed(desk, "mesh", "offers")
                assert (offer["id"], offer["kind"], offer["from"], offer["name"]) == (
                    handoff,
                    "handoff",
                    laptop_id,
                    title,
                )

                took = run_on_terminal(
                    ["mesh", "accept", handoff[:8], "--dir", str(desk.parent)],
                    _env(desk),
                    desk.parent,
                    [Step("? [y/N]", lambda _screen: "y\n")],
                    timeout=TALK,
                )
                assert took.code == 0, took.screen
                assert f"task {task} saved here from {laptop_id}" in took.stdout, took.stdout
                _until(lambda: _task(laptop, task)["state"] == "moved", "the laptop lets go", TALK)
                assert _task(laptop, task)["movedTo"] == desk_id
                _until(lambda: session not in _sessions(laptop), "the laptop's session ends", TALK)
                _until(lambda: _task(desk, task)["state"] != "held", "the desk's copy is released")

                # On the desk: a background session on that task, then print mode.
                resumed = robota_in(
                    desk_ns,
                    desk,
                    "session",
                    "start",
                    "--background",
                    "--task",
                    task,
                    "--cwd",
                    str(desk.parent),
                    "--json",
                )
                assert resumed.returncode == 0, resumed.stderr
                there = json.loads(resumed.stdout)["id"]
                started.append((desk, there))
                history = _robota(desk, "task", "send", task, "HISTORY", "--wait")
                assert history.returncode == 0, history.stderr
                assert history.stdout.strip() == "HISTORY: HELLO | SLOW long one | HISTORY"
                assert _robota(desk, "session", "stop", there).returncode == 0
                _until(lambda: there not in _sessions(desk), "the desk's session ends", TALK)

                printed = robota_in(desk_ns, desk, "-r", task, "-p", "HISTORY", timeout=TALK)
                assert printed.returncode == 0, printed.stderr
                # The session's agent conversation resumed: the history, and the turn there.
                assert printed.stdout.strip() == (
                    "HISTORY: HELLO | SLOW long one | HISTORY | HISTORY"
                ), printed.stdout
            finally:
                for home, session_id in started:
                    _robota(home, "session", "stop", session_id)
