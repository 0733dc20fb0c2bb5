"""One owner per task in the interactive terminal (issue 27 §2): ``robota -c`` / ``-r TASK`` on
a real terminal (tmux), a real host, a real background session and a real agent against the
fake model. The TUI runs its engine in its own process, so a task a live host or session
drives is refused, naming it and where the task can be reached (exit 1), and nothing runs on
it; a task whose owner is gone is taken over (generation bumped) and is the terminal's while it
runs: print mode, ``task send`` and the host refuse it in turn, naming the terminal."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from robota.core.config import Profile
from robota.host import terminal_refusal

from ..support.robota import ROBOTA, Robota
from ..support.sessions import ok_json, registration, robota_cmd, workspace
from ..support.terminal import Tmux
from ..support.tui import flat, terminal, wait_for_exit
from ._printing import attempt_routes, host_status, hosted, model, owned_by, owner_of, run

__all__ = ["hosted", "model", "terminal"]  # the fixtures, from _printing.py and tests/support

TASK = "0123abcd"


@pytest.mark.parametrize(
    ("owner", "said", "way"),
    [
        ("host", "host (pid 7)", f"`robota task send {TASK}` reaches it, or resume it here once"),
        ("session:s1", "background session s1 (pid 7)", "`robota session attach s1` is the way"),
        ("tui:ab12", "robota's terminal UI (pid 7)", "resume it here once that process ended"),
    ],
)
def test_the_terminals_refusal_names_the_owner_and_where_the_task_is_reached(
    owner: str, said: str, way: str
) -> None:
    refused = terminal_refusal(TASK, owner, said)
    assert refused.startswith(f"task {TASK} is driven by {said}; the terminal does not open ")
    assert way in refused


def test_the_tui_refuses_a_task_a_live_host_or_session_drives_and_takes_it_over_once_gone(
    hosted: tuple[Robota, Profile], terminal: Tmux
) -> None:
    robota, profile = hosted
    made = run(robota, "-p", "HELLO", "--output-format", "json")
    assert made.returncode == 0, made.stderr
    host_task = owned_by(profile, "host")[0]
    host_pid = host_status(robota)["pid"]

    # -c finds the host's task: refused, naming the host and task send; nothing ran on it.
    code, screen = refused_run(terminal, robota, "-c")
    assert code == 1
    assert (
        f"robota: task {host_task} is driven by host (pid {host_pid}); the terminal does not "
        f"open its agent session beside that process: `robota task send {host_task}` reaches "
        "it, or resume it here once the host stopped"
    ) in screen
    assert owner_of(profile, host_task) == ("host", host_pid, 1)
    assert len(attempt_routes(profile, host_task)) == 1

    # A background session's task: refused, naming the session and its attach.
    started = ok_json(robota, "session", "start", "--background", "--cwd", str(workspace(robota)))
    session_id = started["id"]
    (task_id,) = owned_by(profile, f"session:{session_id}")
    pid = registration(profile, session_id).pid
    terminal.close()
    second = Tmux(f"{terminal.name}-2")
    try:
        code, screen = refused_run(second, robota, "-r", task_id)
    finally:
        second.close()
    assert code == 1
    assert (
        f"robota: task {task_id} is driven by background session {session_id} (pid {pid}); "
        f"the terminal does not open its agent session beside that process: `robota session "
        f"attach {session_id}` is the way in"
    ) in screen
    assert attempt_routes(profile, task_id) == []

    # Once the session ended, the terminal takes the task over (generation 2) and runs it.
    assert robota_cmd(robota, "session", "stop", session_id).returncode == 0
    third = Tmux(f"{terminal.name}-3")
    status = robota.root / "tui-status"
    try:
        third.start([str(ROBOTA), "-r", task_id], env=robota.env, cwd=robota.root, status=status)
        # (Opened, not resumed: the session made the task and never ran a turn on it.)
        third.wait_for(lambda s: f"task {task_id} opened" in s and "· idle" in s, "it opens")
        third.type("HISTORY")
        third.keys("Enter")
        third.wait_for(lambda s: "HISTORY: HISTORY" in s and "· idle" in s, "the answer")
        owner, tui_pid, generation = owner_of(profile, task_id) or ("", 0, 0)
        assert (owner.startswith("tui:"), generation) == (True, 2)
        refused_while_the_terminal_holds_it(robota, task_id, tui_pid)
        assert attempt_routes(profile, task_id) == [owner]

        third.keys("C-c")
        assert wait_for_exit(status) == 0
    finally:
        third.close()

    # The terminal gone, the host takes the task over in turn (generation 3), its history
    # whole.
    taken = run(robota, "-p", "HISTORY", "-r", task_id)
    assert (taken.returncode, taken.stdout) == (0, "HISTORY: HISTORY | HISTORY\n"), taken.stderr
    assert owner_of(profile, task_id) == ("host", host_pid, 3)


def refused_while_the_terminal_holds_it(robota: Robota, task_id: str, pid: int) -> None:
    """While the TUI runs the task is the terminal's: print mode (through the host and in its
    own process), task send and a background session on it are refused, naming it."""
    said = f"task {task_id} is driven by robota's terminal UI (pid {pid})"
    for where in ((), ("--no-host",)):
        refused = run(robota, "-p", "x", "-r", task_id, *where)
        assert refused.returncode == 1
        assert refused.stderr.startswith(f"robota: {said}")
    sent = robota_cmd(robota, "task", "send", task_id, "x", "--wait")
    assert sent.returncode != 0
    assert said in sent.stderr
    project = robota.root / "project"
    session = ("session", "start", "--background", "--task", task_id, "--cwd", str(project))
    started = robota_cmd(robota, *session)
    assert started.returncode != 0
    assert "see " in started.stderr  # the session said why in its log
    assert said in Path(started.stderr.rsplit("see ", 1)[1].strip()).read_text()


def refused_run(terminal: Tmux, robota: Robota, *args: str) -> tuple[int, str]:
    """``robota *args`` on ``terminal``; its exit status and what the terminal shows once it
    left (the shell around it waits for Enter, so its last words stay on the screen)."""
    status = robota.root / f"status-{terminal.name}"
    script = f'{shlex.join([str(ROBOTA), *args])}; code=$?; echo "left: $code"; read _; exit $code'
    terminal.start(["/bin/sh", "-c", script], env=robota.env, cwd=robota.root, status=status)
    screen = terminal.wait_for(lambda s: "left: " in s, "robota leaves", timeout=120)
    terminal.keys("Enter")
    return wait_for_exit(status), flat(screen)
