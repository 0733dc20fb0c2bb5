"""``robota -p -c`` / ``-r TASK`` through a warm host: a real host process, a real agent against
the fake model and the real ``robota`` script. The turn runs on the host's route that holds the
task's agent session (never a second route nor a second process opening it), a task another
live process owns goes to that owner or is refused naming it, and the output is the output of
the same run in print mode's own process."""

from __future__ import annotations

import json
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from robota.core.config import Profile
from robota.host._print_turns import own_inputs

from ..support.host import task_json
from ..support.model_server import FakeModel
from ..support.robota import Robota
from ..support.sessions import ok_json, registration, robota_cmd, workspace
from ._printing import (
    attempt_routes,
    host_log,
    host_status,
    hosted,
    hosted_sandbox,
    json_lines,
    model,
    owned_by,
    owner_of,
    run,
    signalled_mid_turn,
    wait_until_no_turn_runs,
)
from ._server import server_json

__all__ = ["hosted", "model"]  # the fixtures, from _printing.py


@pytest.mark.parametrize(
    ("sent", "route_inputs", "answered"),
    [
        ([], 5, 0),  # nothing sent yet: an idle route answered none of the terminal's
        ([3], 2, 0),  # idle after the inputs before the terminal's
        ([3], 3, 1),
        ([3, 5], 4, 1),  # another's input (4) between the terminal's two
        ([3, 5], 9, 2),
        ([1, 2, 3], 3, 3),  # a route of its own: the counts are its own
    ],
)
def test_a_shared_routes_idle_count_as_the_terminals_inputs(
    sent: list[int], route_inputs: int, answered: int
) -> None:
    assert own_inputs(sent, route_inputs) == answered


def answer(done: Any) -> Any:
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


def routes(robota: Robota, task_id: str) -> list[str]:
    """The routes the task is current on (``task status``)."""
    status: list[str] = task_json(robota, "status", task_id)["routes"]
    return status


def test_continue_and_resume_run_on_the_hosts_route_that_holds_the_task(
    hosted: tuple[Robota, Profile],
) -> None:
    robota, profile = hosted
    first = answer(run(robota, "-p", "HELLO", "--output-format", "json"))
    task_id = first["session_id"]
    (route,) = routes(robota, task_id)
    assert route.startswith("print:")
    status = host_status(robota)
    host_pid, agents = status["pid"], status["agents"]
    # The host owns the task its print run made.
    assert owner_of(profile, task_id) == ("host", host_pid, 1)

    # -c: the same route, the same agent process, the conversation the model sees goes on.
    again = answer(run(robota, "-p", "HISTORY", "-c", "--output-format", "json"))
    assert (again["session_id"], again["result"]) == (task_id, "HISTORY: HELLO | HISTORY")
    assert f"print.run: resumed task {task_id} on {route}" in host_log(robota)
    # -r by id, streamed: the task heard opened once, resumed, and the turn on the same route.
    resumed = run(robota, "-p", "HISTORY", "-r", task_id, "--output-format", "stream-json")
    assert resumed.returncode == 0, resumed.stderr
    lines = [json.loads(line) for line in resumed.stdout.splitlines()]
    started = [o for o in lines if o["type"] == "session_started"]
    assert len(started) == 1
    assert (started[0]["session_id"], started[0]["resumed"]) == (task_id, True)
    assert lines[-1]["result"] == "HISTORY: HELLO | HISTORY | HISTORY"
    assert routes(robota, task_id) == [route]
    assert attempt_routes(profile, task_id) == [route] * 3
    assert host_status(robota)["agents"] == agents, "another agent process ran a turn"

    # task send finds the same route: one route drives the task's agent session.
    sent = task_json(robota, "send", task_id, "HISTORY", "--wait")
    assert sent["route"] == route
    assert [t["final"] for t in sent["turns"]] == ["HISTORY: HELLO | HISTORY | HISTORY | HISTORY"]

    # In print mode's own process (--no-host) the task is the host's: refused, naming it,
    # and nothing ran (no second agent process on its session).
    local = run(robota, "-p", "x", "-r", task_id, "--no-host")
    assert local.returncode == 1
    assert local.stderr == (
        f"robota: task {task_id} is driven by host (pid {host_pid}); print mode does not "
        "open its agent session beside that process: `robota task send` reaches it, or run "
        "this once that process ended\n"
    )
    assert attempt_routes(profile, task_id) == [route] * 4


def test_resumed_output_through_the_host_equals_the_run_in_process(
    hosted: tuple[Robota, Profile],
) -> None:
    """Each format of a resumed run through the host, then the same runs on a task with the
    same history in print mode's own process once the host stopped (its tasks are nobody's
    then)."""
    robota, _ = hosted
    made = [run(robota, "-p", "remember", "--output-format", "json") for _ in range(2)]
    on_this, on_that = (answer(done)["session_id"] for done in made)
    formats = ("text", "json", "stream-json")
    on_host = [run(robota, "-p", "again", "-r", on_this, "--output-format", f) for f in formats]
    code, stopped = server_json(robota, "stop")
    assert code == 0, stopped
    local = [
        run(robota, "-p", "again", "-r", on_that, "--output-format", f, "--no-host")
        for f in formats
    ]
    for hosted_run, local_run in zip(on_host, local, strict=True):
        assert hosted_run.returncode == local_run.returncode == 0, hosted_run.stderr
        assert hosted_run.stderr == local_run.stderr == ""
    assert on_host[0].stdout == local[0].stdout == "ECHO: again\n"
    assert json_lines(on_host[1].stdout) == json_lines(local[1].stdout)
    assert json_lines(on_host[2].stdout) == json_lines(local[2].stdout)
    assert json.loads(on_host[2].stdout.splitlines()[0])["resumed"] is True


def test_a_task_a_background_session_owns_is_refused_naming_it_until_it_ended(
    hosted: tuple[Robota, Profile],
) -> None:
    robota, profile = hosted
    started = ok_json(robota, "session", "start", "--background", "--cwd", str(workspace(robota)))
    session_id = started["id"]
    owner, found = f"session:{session_id}", registration(profile, session_id)
    (task_id,) = owned_by(profile, owner)
    assert owner_of(profile, task_id) == (owner, found.pid, 1)
    said = f"task {task_id} is driven by background session {session_id} (pid {found.pid})"
    for where in ((), ("--no-host",)):
        refused = run(robota, "-p", "x", "-r", task_id, *where)
        assert refused.returncode == 1
        assert refused.stderr.startswith(f"robota: {said}")
        assert refused.stdout == ""
    assert routes(robota, task_id) == [owner]
    assert attempt_routes(profile, task_id) == []

    # Once the session ended, the host takes the task over and opens its session on the
    # task's own route.
    assert robota_cmd(robota, "session", "stop", session_id).returncode == 0
    taken = answer(run(robota, "-p", "HISTORY", "-r", task_id, "--output-format", "json"))
    assert (taken["session_id"], taken["result"]) == (task_id, "HISTORY: HISTORY")
    assert routes(robota, task_id)[0] == f"cli:{task_id}"
    assert owner_of(profile, task_id) == ("host", host_status(robota)["pid"], 2)


def test_a_task_the_workspaces_daemon_owns_runs_on_the_daemon(
    hosted: tuple[Robota, Profile],
) -> None:
    """The host refuses the daemon's task (``owned``); print mode asks the workspace's daemon
    next, which runs the turn on its session's own route."""
    robota, profile = hosted
    project = workspace(robota)
    daemon = ok_json(robota, "daemon", "start", cwd=project)
    try:
        owner = f"session:{daemon['id']}"
        (task_id,) = owned_by(profile, owner)
        here = ("--cwd", str(project))
        first = answer(
            run(robota, "-p", "HISTORY", "-r", task_id, *here, "--output-format", "json")
        )
        assert (first["session_id"], first["result"]) == (task_id, "HISTORY: HISTORY")
        assert f"print.run: resumed task {task_id} on {owner}" in host_log(robota)
        assert routes(robota, task_id) == [owner]
        assert attempt_routes(profile, task_id) == [owner]
        # Its own process never opens it beside the daemon.
        local = run(robota, "-p", "x", "-r", task_id, *here, "--no-host")
        assert local.returncode == 1
        assert f"driven by background session {daemon['id']}" in local.stderr
    finally:
        robota_cmd(robota, "daemon", "stop", cwd=project)


@pytest.mark.parametrize(("sent", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, None)])
def test_ctrl_c_or_sigterm_interrupts_a_resumed_turn_on_the_route_that_holds_it(
    hosted: tuple[Robota, Profile], sent: signal.Signals, code: int | None
) -> None:
    """As for a new task: the terminal's turn on the host's route is interrupted, the host
    goes on, and the task with it (its next turn on the same route hears the whole history)."""
    robota, profile = hosted
    task_id = answer(run(robota, "-p", "first", "--output-format", "json"))["session_id"]
    (route,) = routes(robota, task_id)
    returncode, stderr = signalled_mid_turn(robota, sent, "-p", "SLOW: 200", "-r", task_id)
    if code is not None:
        assert returncode == code, stderr
    wait_until_no_turn_runs(robota)
    after = answer(run(robota, "-p", "HISTORY", "-c", "--output-format", "json"))
    assert (after["session_id"], after["result"]) == (
        task_id,
        "HISTORY: first | SLOW: 200 | HISTORY",
    )
    assert attempt_routes(profile, task_id) == [route] * 3


@pytest.fixture
def hosted_acp(short_root: Path, model: FakeModel) -> Iterator[tuple[Robota, Profile]]:
    """``hosted`` with an ACP agent, codex-acp."""
    yield from hosted_sandbox(short_root, model, "codex-acp")


def test_an_acp_task_resumes_on_the_host_and_after_the_host_restarted(
    hosted_acp: tuple[Robota, Profile],
) -> None:
    """An ACP agent (codex-acp): ``-c`` on the print route that holds the task; after a new host
    started, the task is on none of its routes, so it is taken over and bound to its ``cli:``
    route, where its session is loaded (``session/load``) with the conversation so far."""
    robota, profile = hosted_acp
    task_id = answer(run(robota, "-p", "HELLO", "--output-format", "json"))["session_id"]
    (route,) = routes(robota, task_id)
    again = answer(run(robota, "-p", "HISTORY", "-c", "--output-format", "json"))
    assert (again["session_id"], again["result"]) == (task_id, "HISTORY: HELLO | HISTORY")
    assert attempt_routes(profile, task_id) == [route] * 2

    for command in ("stop", "start"):
        code, said = server_json(robota, command)
        assert code == 0, said
    resumed = run(robota, "-p", "HISTORY", "-r", task_id, "--output-format", "stream-json")
    assert resumed.returncode == 0, resumed.stderr
    lines = [json.loads(line) for line in resumed.stdout.splitlines()]
    assert [o["resumed"] for o in lines if o["type"] == "session_started"] == [True]
    assert lines[-1]["result"] == "HISTORY: HELLO | HISTORY | HISTORY"
    assert attempt_routes(profile, task_id) == [route, route, f"cli:{task_id}"]
    assert owner_of(profile, task_id) == ("host", host_status(robota)["pid"], 2)
