"""``robota -p`` through a warm host (``print.run``): a real host process, a real agent against
the fake model, and the real ``robota`` script, compared with the same run in its own process
(``--no-host``)."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from pathlib import Path

import pytest

from robota.core.config import Profile
from robota.host import print_placement

from ..support.host import BOUND, sandboxed
from ..support.model_server import FakeModel
from ..support.processes import kill_processes_with_home_under
from ..support.robota import Robota
from ..support.sessions import ok_json, robota_cmd, workspace
from ._printing import (
    host_log,
    hosted,
    json_lines,
    known_routes,
    model,
    run,
    signalled_mid_turn,
    unqueued,
    wait_until_no_turn_runs,
)

__all__ = ["hosted", "model"]  # the fixtures, from _printing.py


@pytest.mark.parametrize(
    ("untrusted", "restricted", "project_applies", "uses_task", "placement"),
    [
        (False, False, False, False, "host"),
        (False, False, True, False, "local"),
        (False, True, False, False, "local"),
        (False, True, True, False, "local"),
        (True, False, False, False, "refused"),
        (True, False, True, False, "refused"),
        (True, True, False, False, "host"),
        (True, True, True, False, "host"),
        (False, False, False, True, "local"),
        (True, True, False, True, "local"),
        (True, False, False, True, "refused"),
    ],
)
def test_where_print_modes_turns_run(
    untrusted: bool, restricted: bool, project_applies: bool, uses_task: bool, placement: str
) -> None:
    where = print_placement(
        untrusted=untrusted,
        restricted=restricted,
        project_applies=project_applies,
        uses_task=uses_task,
    )
    assert where == placement


@pytest.mark.parametrize(
    ("untrusted", "restricted", "project_applies", "placement"),
    [
        # A daemon started --restricted runs every directory Restricted, with no project's
        # settings: it runs a --restricted print as print mode's own process would, only that.
        (False, False, False, "local"),
        (False, True, False, "host"),
        (True, True, False, "host"),
        (True, False, False, "refused"),
        (False, True, True, "local"),
    ],
)
def test_where_print_modes_turns_run_on_a_restricted_daemon(
    untrusted: bool, restricted: bool, project_applies: bool, placement: str
) -> None:
    where = print_placement(
        untrusted=untrusted,
        restricted=restricted,
        project_applies=project_applies,
        forced=True,
    )
    assert where == placement


def both(
    robota: Robota, *args: str, stdin: str | list[str] | None = None, cwd: Path | None = None
) -> tuple[subprocess.CompletedProcess[str], subprocess.CompletedProcess[str]]:
    """The run through the host (checked to be: the host knows one more route) and the same
    run in its own process."""
    before = known_routes(robota)
    hosted = run(robota, *args, stdin=stdin, cwd=cwd)
    assert known_routes(robota) == before + 1, "the run did not go through the host"
    local = run(robota, *args, "--no-host", stdin=stdin, cwd=cwd)
    assert known_routes(robota) == before + 1, "--no-host went through the host"
    return hosted, local


def test_each_format_through_the_host_equals_the_run_in_process(
    hosted: tuple[Robota, Profile],
) -> None:
    robota, _ = hosted
    on_host, local = both(robota, "-p", "hello there")
    assert (on_host.returncode, on_host.stdout, on_host.stderr) == (0, "ECHO: hello there\n", "")
    assert (local.returncode, local.stdout, local.stderr) == (0, "ECHO: hello there\n", "")

    on_host, local = both(robota, "-p", "second", "--output-format", "json")
    assert on_host.returncode == local.returncode == 0, on_host.stderr
    assert json_lines(on_host.stdout) == json_lines(local.stdout)
    assert json.loads(on_host.stdout)["result"] == "ECHO: second"

    shell = ("-p", "SHELL: echo streamed", "--output-format", "stream-json")
    on_host, local = both(robota, *shell, "--permission-mode", "bypassPermissions")
    assert on_host.returncode == local.returncode == 0, on_host.stderr
    assert json_lines(on_host.stdout) == json_lines(local.stdout)
    types = [o["type"] for o in json_lines(on_host.stdout)]
    assert types[0] == "session_started" and types[-1] == "result"
    assert {"tool_started", "tool_completed"} <= set(types)

    # Nobody approves on a print route, in the host as in its own process.
    on_host, local = both(robota, "-p", "SHELL: echo no", "--output-format", "stream-json")
    assert on_host.returncode == local.returncode == 0, on_host.stderr
    assert json_lines(on_host.stdout) == json_lines(local.stdout)
    assert any(o["type"] == "approval_resolved" for o in json_lines(on_host.stdout))

    # A failed turn: exit 1 and the same words on stderr.
    on_host, local = both(robota, "-p", "FAIL400")
    assert (on_host.returncode, on_host.stdout, on_host.stderr) == (
        local.returncode,
        local.stdout,
        local.stderr,
    )
    assert on_host.returncode == 1 and "fake invalid request" in on_host.stderr

    lines = ['{"type": "user", "text": "one"}\n', '{"type": "user", "text": "two"}\n']
    stream_in = ("-p", "--input-format", "stream-json", "--output-format", "stream-json")
    on_host, local = both(robota, *stream_in, stdin=lines)
    assert on_host.returncode == local.returncode == 0, on_host.stderr
    # The second line goes in once the first turn printed its result (``converse``): sent
    # together, it steers or queues behind the first turn as timing has it (tests/cli/test_print
    # steers on purpose). Whether a line is queued before or after the session opened is a race
    # in either process (its prompt id is each process's own): the same notices, and a
    # ``queued`` line, wherever one fell, only ever the second line's.
    (hosted_lines, hosted_queued), (local_lines, local_queued) = map(
        unqueued, (on_host.stdout, local.stdout)
    )
    assert hosted_lines == local_lines
    assert all(o["text"] == "two" for o in hosted_queued + local_queued), (
        hosted_queued,
        local_queued,
    )
    results = [o["result"] for o in json_lines(on_host.stdout) if o["type"] == "result"]
    assert results == ["ECHO: one", "ECHO: two"]


def test_tasks_usage_errors_and_trust_through_the_host(
    hosted: tuple[Robota, Profile],
) -> None:
    robota, _ = hosted
    first = run(robota, "-p", "remember", "--name", "kept", "--output-format", "json")
    assert first.returncode == 0, first.stderr
    task = json.loads(first.stdout)["session_id"]

    # -c and -r take the task print mode would take; the host runs them on the route that
    # holds it (no new print route: tests/host/test_print_host_resume.py), and forks one
    # itself.
    for args in (("-c",), ("-r", "kept"), ("-r", task)):
        before = known_routes(robota)
        again = run(robota, "-p", "again", *args, "--output-format", "json")
        assert again.returncode == 0, again.stderr
        assert json.loads(again.stdout)["session_id"] == task
        assert known_routes(robota) == before
    on_host, local = both(
        robota, "-p", "fork", "-r", task, "--fork-session", "--output-format", "json"
    )
    assert on_host.returncode == local.returncode == 0, on_host.stderr
    assert json_lines(on_host.stdout) == json_lines(local.stdout)
    assert json.loads(on_host.stdout)["session_id"] != task

    # Usage errors: the same exit code and message either way, and nothing left on the host.
    for args in (("-c", "-r", task), ("--fork-session",), ("--agent", "nope"), ("-r", "zzz")):
        before = known_routes(robota)
        on_host = run(robota, "-p", "x", *args)
        local = run(robota, "-p", "x", *args, "--no-host")
        assert (on_host.returncode, on_host.stderr) == (local.returncode, local.stderr)
        assert on_host.returncode == 2 and on_host.stderr.startswith("robota: ")
        assert known_routes(robota) == before

    # An untrusted workspace: refused (exit 2, print mode's message) unless --restricted.
    untrusted = robota.root / "elsewhere"
    untrusted.mkdir()
    on_host = run(robota, "-p", "x", "--cwd", str(untrusted))
    local = run(robota, "-p", "x", "--cwd", str(untrusted), "--no-host")
    assert (on_host.returncode, on_host.stderr) == (2, local.stderr)
    assert "robota trust --yes" in on_host.stderr
    on_host, local = both(
        robota, "-p", "hi", "--cwd", str(untrusted), "--restricted", "--output-format", "json"
    )
    assert on_host.returncode == local.returncode == 0, on_host.stderr
    assert json_lines(on_host.stdout) == json_lines(local.stdout)
    streamed = run(
        robota, "-p", "hi", "--cwd", "elsewhere", "--restricted", "--output-format", "stream-json"
    )
    assert streamed.returncode == 0, streamed.stderr
    assert "restricted" in [o["type"] for o in json_lines(streamed.stdout)]

    # --restricted where the workspace is trusted: the host's engine would not run it so, so
    # print mode runs it in its own process; so does a run from inside a robota turn.
    before = known_routes(robota)
    kept_local = run(robota, "-p", "hi", "--restricted", "--output-format", "json")
    assert kept_local.returncode == 0, kept_local.stderr
    inside = run(robota, "-p", "nested", env={"ROBOTA_TASK_ID": task})
    assert (inside.returncode, inside.stdout) == (0, "ECHO: nested\n"), inside.stderr
    assert known_routes(robota) == before


@pytest.mark.parametrize(("sent", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, None)])
def test_ctrl_c_or_sigterm_interrupts_the_hosts_turn_and_the_host_goes_on(
    hosted: tuple[Robota, Profile], sent: signal.Signals, code: int | None
) -> None:
    robota, _ = hosted
    returncode, stderr = signalled_mid_turn(robota, sent, "-p", "SLOW: 200")
    if code is not None:
        assert returncode == code, stderr
    wait_until_no_turn_runs(robota)
    after = run(robota, "-p", "still there")
    assert (after.returncode, after.stdout) == (0, "ECHO: still there\n"), after.stderr


def test_a_run_takes_the_session_opened_ahead_with_nothing_of_the_run_before(
    hosted: tuple[Robota, Profile], model: FakeModel
) -> None:
    """The host keeps a session opened ahead for print mode's next run in the same folder with
    the same settings (``robota.runtimes``' ``_spare_sessions``): the second run takes it, its
    own conversation (the model hears nothing of the first), and its output is as ever."""
    robota, _ = hosted
    stream = ("--output-format", "stream-json")
    first = run(robota, "-p", "the first secret", *stream)
    assert first.returncode == 0, first.stderr
    deadline = time.monotonic() + BOUND
    while host_log(robota).count("a session opened ahead in") < 1:
        assert time.monotonic() < deadline, "no session was opened ahead"
        time.sleep(0.1)
    model.clear()
    second = run(robota, "-p", "the second", *stream)
    assert second.returncode == 0, second.stderr
    assert host_log(robota).count("takes a session opened ahead") == 1
    started = [
        next(o for o in map(json.loads, out.stdout.splitlines()) if o["type"] == "session_started")
        for out in (first, second)
    ]
    assert started[0]["session_id"] != started[1]["session_id"]
    assert started[0]["agent_session_id"] != started[1]["agent_session_id"]
    assert json.loads(second.stdout.splitlines()[-1])["result"] == "ECHO: the second"
    bodies = [json.dumps(r.body) for r in model.model_requests()]
    assert bodies and all("the first secret" not in body for body in bodies)

    # Other settings (here another permission mode) never get it: a session of their own.
    other = run(robota, "-p", "third", "--permission-mode", "acceptEdits")
    assert (other.returncode, other.stdout) == (0, "ECHO: third\n"), other.stderr
    assert host_log(robota).count("takes a session opened ahead") == 1


def test_print_mode_hands_its_turn_to_the_workspaces_daemon(
    short_root: Path, model: FakeModel
) -> None:
    """With no host but this workspace's daemon (``robota daemon start``), print mode runs its
    turn there, as it would through a host: the same output as in its own process."""
    robota, _ = sandboxed(short_root, model, "codex")
    project = workspace(robota)
    try:
        assert ok_json(robota, "daemon", "start", cwd=project)["started"] is True
        here = ("--cwd", str(project))
        on_daemon, local = both(robota, "-p", "hello daemon", *here, cwd=project)
        assert (on_daemon.returncode, on_daemon.stdout, on_daemon.stderr) == (
            0,
            "ECHO: hello daemon\n",
            "",
        )
        assert (local.returncode, local.stdout) == (0, "ECHO: hello daemon\n"), local.stderr
        as_json = ("--output-format", "stream-json")
        on_daemon, local = both(robota, "-p", "again", *here, *as_json, cwd=project)
        assert on_daemon.returncode == local.returncode == 0, on_daemon.stderr
        assert json_lines(on_daemon.stdout) == json_lines(local.stdout)
        # Another workspace's daemon is not this one's: print mode runs in its own process.
        elsewhere = workspace(robota, "elsewhere")
        before = known_routes(robota)
        alone = run(robota, "-p", "alone", "--cwd", str(elsewhere), cwd=elsewhere)
        assert (alone.returncode, alone.stdout) == (0, "ECHO: alone\n"), alone.stderr
        assert known_routes(robota) == before
    finally:
        robota_cmd(robota, "daemon", "stop", cwd=project)
        kill_processes_with_home_under(short_root)
