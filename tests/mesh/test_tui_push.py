"""A task the TUI drives, pushed to another device (``robota task push TASK --to DEVICE``,
issue 30 §3) from the host of the same profile, on two linked hosts with a real agent against
the fake model and the TUI on a real terminal (tmux): the TUI notices (it reads its task's
mobility), says the task is moving and then that it moved, naming the device, lets the task go
(its owner row released) and keeps its view read-only: a prompt is answered in the terminal,
nothing reaches the task, while ``/new`` still starts a task here, which the terminal owns."""

from __future__ import annotations

import json
import os
import sqlite3
import uuid
from contextlib import closing
from pathlib import Path

from ..support.terminal import Tmux
from ..support.tui import flat, wait_for_exit
from ._profiles import ROBOTA, _env, _robota
from ._talking import TALK, linked, model
from ._terminal import Step, run_on_terminal

__all__ = ["linked", "model"]  # the fixtures, from _talking.py


def terminal_rows(home: Path) -> dict[str, tuple[str, int]]:
    """Each task a terminal owns or released on this device: its owner and pid (0: released)."""
    with closing(sqlite3.connect(home / "data" / "robota.sqlite")) as db:
        rows = db.execute(
            "SELECT task_id, owner, pid FROM task_owners WHERE owner LIKE 'tui:%'"
        ).fetchall()
    return {str(r[0]): (str(r[1]), int(r[2])) for r in rows}


def attempts(home: Path, task_id: str) -> int:
    with closing(sqlite3.connect(home / "data" / "robota.sqlite")) as db:
        (count,) = db.execute(
            "SELECT count(*) FROM turn_attempts WHERE task_id = ?", (task_id,)
        ).fetchone()
    return int(count)


def test_a_task_the_tui_drives_pushed_away_is_said_moved_let_go_and_read_only(
    linked: tuple[Path, Path, str, str],
) -> None:
    laptop, desk, _laptop_id, desk_id = linked
    folder = laptop.parent / "project"
    folder.mkdir()
    terminal = Tmux(f"robota-push-{os.getpid()}-{uuid.uuid4().hex[:8]}")
    status = laptop.parent / "tui-status"
    try:
        argv = [str(ROBOTA), "--cwd", str(folder)]
        terminal.start(argv, env=_env(laptop), cwd=laptop.parent, status=status)
        screen = terminal.wait_for(lambda s: "· idle" in s or "[t] trust" in s, "the TUI")
        if "[t] trust" in screen:
            terminal.type("t")
            terminal.keys("Enter")
        terminal.wait_for(lambda s: "new task · idle" in s, "the TUI is ready", timeout=TALK)
        terminal.wait_for(lambda _s: len(terminal_rows(laptop)) == 1, "its task is claimed")
        ((task, (owner, pid)),) = terminal_rows(laptop).items()
        terminal.type("HELLO")
        terminal.keys("Enter")
        terminal.wait_for(lambda s: f"task {task} · idle" in s, "the turn ends", timeout=TALK)
        assert pid > 0

        pushed = _robota(laptop, "task", "push", task, "--to", "desk", "--json")
        assert pushed.returncode == 0, pushed.stderr
        handoff = json.loads(pushed.stdout)["handoff"]
        moving = f"task {task} is moving to device desk ({desk_id}) (handoff {handoff})"
        terminal.wait_for(lambda s: moving in flat(s), "the TUI says it is moving", timeout=TALK)
        terminal.wait_for(lambda s: "moving to desk" in s, "and shows it")

        work = desk.parent / "work"
        work.mkdir()
        took = run_on_terminal(
            ["mesh", "accept", handoff, "--dir", str(work)],
            _env(desk),
            desk.parent,
            [Step("? [y/N]", lambda _screen: "y\n")],
            timeout=TALK,
        )
        assert took.code == 0, took.screen
        moved = (
            f"task {task} has moved to device desk ({desk_id}) (handoff {handoff}): continue it "
            "there. "
            "This terminal no longer drives it and its view is read-only (/new starts a task "
            "here, /switch opens another, /exit leaves)"
        )
        terminal.wait_for(lambda s: moved in flat(s), "the TUI says it moved", timeout=TALK)
        terminal.wait_for(lambda s: "read-only · moved to desk" in s, "and shows it")
        terminal.wait_for(lambda _s: terminal_rows(laptop)[task] == (owner, 0), "let go")

        before = attempts(laptop, task)
        terminal.type("one more")
        terminal.keys("Enter")
        refused = f"task {task} has moved to device desk ({desk_id}); continue it there (this"
        terminal.wait_for(lambda s: refused in flat(s), "the prompt is answered here")
        assert attempts(laptop, task) == before

        terminal.type("/new")
        terminal.keys("Enter")
        terminal.wait_for(lambda _s: len(terminal_rows(laptop)) == 2, "a new task, owned")
        assert terminal_rows(laptop)[task] == (owner, 0)

        terminal.keys("C-c")
        assert wait_for_exit(status) == 0
    finally:
        terminal.close()
