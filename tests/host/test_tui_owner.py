"""One owner per task in the interactive terminal (issue 27 §2): ``robota -c`` / ``-r TASK`` on
a real terminal (tmux), a real host, a real background session and a real agent against the
fake model. The TUI runs its engine in its own process, so a task a live host or session
drives is refused, naming it and where the task can be reached (exit 1), and nothing runs on
it; a task whose owner is gone is taken over (generation bumped) and is the terminal's while it
runs: print mode, ``task send`` and the host refuse it in turn, naming the terminal. Inside the
app the same rule holds: the task a fresh TUI makes and one ``/new`` makes are the terminal's,
``/switch`` to the host's task is refused as ``-r`` is, and the task switched away from is let
go, for the host to take over with its history."""

from __future__ import annotations

import shlex
from contextlib import closing
from pathlib import Path

import pytest

from robota.core.config import Profile
from robota.core.store import open_reader
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


def terminal_rows(profile: Profile) -> dict[str, tuple[str, int, int]]:
    """Each task a terminal owns or released: its owner, pid (0: released) and generation."""
    with closing(open_reader(profile.data_dir / "robota.sqlite")) as db:
        rows = db.execute(
            "SELECT task_id, owner, pid, generation FROM task_owners WHERE owner LIKE 'tui:%'"
        ).fetchall()
    return {str(r[0]): (str(r[1]), int(r[2]), int(r[3])) for r in rows}


def switch_refused(terminal: Tmux, task_id: str, said: str, way: str) -> None:
    """``/switch TASK`` typed in the TUI, refused with the words ``-r TASK`` gets."""
    terminal.type(f"/switch {task_id}")
    terminal.keys("Enter")
    refused = (
        f"task {task_id} is driven by {said}; the terminal does not open its agent session "
        f"beside that process: {way}"
    )
    terminal.wait_for(lambda s: refused in flat(s), "the switch is refused")


def test_the_tuis_own_tasks_are_claimed_and_a_switch_to_a_held_task_is_refused(
    hosted: tuple[Robota, Profile], terminal: Tmux
) -> None:
    """A fresh TUI owns the task it makes (before its first turn even), ``/switch`` to a task
    the live host drives is refused as ``-r`` is and opens nothing, and ``/new`` owns the task
    it makes and lets the one before go: the host then takes that one over (generation 2) with
    its history whole (the terminal's agent unloaded it), and a ``/switch`` back to it is
    refused naming the host in turn."""
    robota, profile = hosted
    made = run(robota, "-p", "HELLO", "--output-format", "json")
    assert made.returncode == 0, made.stderr
    host_task = owned_by(profile, "host")[0]
    host_pid = host_status(robota)["pid"]
    by_host = f"host (pid {host_pid})"

    status = robota.root / "tui-status"
    project = workspace(robota)  # where a background session on its task would start
    argv = [str(ROBOTA), "--cwd", str(project)]
    terminal.start(argv, env=robota.env, cwd=robota.root, status=status)
    first, owner, tui_pid = fresh_task_owned(terminal, robota, profile)

    way = f"`robota task send {host_task}` reaches it, or resume it here once the host stopped"
    switch_refused(terminal, host_task, by_host, way)
    assert f"task {first} · idle" in terminal.screen()  # still on its own task
    assert owner_of(profile, host_task) == ("host", host_pid, 1)
    assert owner not in attempt_routes(profile, host_task)

    second = new_task_owned(terminal, profile, first)
    assert terminal_rows(profile) == {first: (owner, 0, 1), second: (owner, tui_pid, 1)}

    # The task let go is anyone's: the host takes it over (generation 2), its history whole.
    taken = run(robota, "-p", "HISTORY", "-r", first)
    assert (taken.returncode, taken.stdout) == (0, "HISTORY: HISTORY | HISTORY\n"), taken.stderr
    assert owner_of(profile, first) == ("host", host_pid, 2)
    way = f"`robota task send {first}` reaches it, or resume it here once the host stopped"
    switch_refused(terminal, first, by_host, way)
    assert f"task {second} · idle" in terminal.screen()

    terminal.keys("C-c")
    assert wait_for_exit(status) == 0


def fresh_task_owned(terminal: Tmux, robota: Robota, profile: Profile) -> tuple[str, str, int]:
    """The fresh TUI's task is the terminal's from its start, and stays so through its first
    turn (the others refuse it naming the terminal); the task, the owner and its pid."""
    terminal.wait_for(lambda s: "new task · idle" in s, "the TUI is ready")
    terminal.wait_for(lambda _s: len(terminal_rows(profile)) == 1, "its task is claimed")
    ((first, (owner, tui_pid, generation)),) = terminal_rows(profile).items()
    assert (owner.startswith("tui:"), generation) == (True, 1)
    terminal.type("HISTORY")
    terminal.keys("Enter")
    terminal.wait_for(lambda s: f"task {first} · idle" in s, "the first turn ends")
    refused_while_the_terminal_holds_it(robota, first, tui_pid)
    assert attempt_routes(profile, first) == [owner]
    return first, owner, tui_pid


def new_task_owned(terminal: Tmux, profile: Profile, first: str) -> str:
    """``/new`` then a turn: the new task, the terminal's, which ran it."""
    terminal.type("/new")
    terminal.keys("Enter")
    terminal.wait_for(lambda _s: len(terminal_rows(profile)) == 2, "the new task is claimed")
    (second,) = (t for t in terminal_rows(profile) if t != first)
    terminal.type("HISTORY")
    terminal.keys("Enter")
    terminal.wait_for(lambda s: f"task {second} · idle" in s, "the new task's turn ends")
    assert attempt_routes(profile, second) == [terminal_rows(profile)[second][0]]
    return second
