"""What a push reads and decides (robota.host._mesh_push): what keeps a task from moving, by
table; the task as one read of a real store sees it (settings, completed turns in order, its
queue, a running turn) and the task a background session owns; the folder as git sees it
(origin, HEAD, what stays behind); and the refusal a sealed busy task gets."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from robota.core.store import (
    BindRouteTask,
    ClaimTask,
    CreateTask,
    EnqueuePrompt,
    FinishTurnAttempt,
    InsertTurnAttempt,
    open_reader,
    write_once,
)
from robota.core.store import task as load_task
from robota.host._mesh_push import git_checkout, push_busy, session_task, task_snapshot
from robota.host._mesh_take import checkout_warnings
from robota.mesh import HandoffBusy, SourceCheckout, seal


@pytest.mark.parametrize(
    ("turn", "queued", "approval", "busy"),
    [
        (False, 0, False, None),
        (True, 0, False, "turn-running"),
        (False, 2, False, "prompt-queued"),
        (True, 1, False, "turn-running"),
        (True, 0, True, "approval-waiting"),
        (True, 3, True, "approval-waiting"),
    ],
)
def test_what_keeps_a_task_from_moving(turn: bool, queued: int, approval: bool, busy: Any) -> None:
    assert push_busy(turn_running=turn, queued=queued, approval_waiting=approval) == busy


@pytest.mark.parametrize("busy", ["turn-running", "prompt-queued", "approval-waiting"])
def test_a_busy_task_is_refused_naming_why(busy: Any) -> None:
    with pytest.raises(HandoffBusy) as refused:
        seal({"id": "t1"}, [], [], SourceCheckout("/p"), busy=busy)
    assert busy.split("-")[0] in str(refused.value)


def _snapshot(path: Path) -> Any:
    def read(db: Any) -> Any:
        task = load_task(db, "t1")
        assert task is not None
        return task_snapshot(db, task)

    return _read(path, read)


def _read(path: Path, query: Any) -> Any:
    db = open_reader(path)
    try:
        return query(db)
    finally:
        db.close()


def test_the_snapshot_is_the_task_its_turns_in_order_and_its_queue(tmp_path: Path) -> None:
    path = tmp_path / "robota.db"
    write_once(path, CreateTask("t1", "codex", "/p", "acp", title="build", model="m", at=1.0))
    write_once(path, BindRouteTask("cli:r1", "t1", at=1.0))
    for n, (prompt, answer) in enumerate([("HELLO", "hi"), ("again", "yes")], start=1):
        write_once(path, InsertTurnAttempt(f"a{n}", "t1", "cli:r1", prompt, at=float(n + 1)))
        write_once(path, FinishTurnAttempt(f"a{n}", "completed", final_text=answer, at=n + 1.5))
    snapshot = _snapshot(path)
    assert snapshot.task["id"] == "t1" and snapshot.task["title"] == "build"
    assert snapshot.task["agent"] == "codex" and snapshot.task["model"] == "m"
    assert list(snapshot.turns) == [
        {"prompt": "HELLO", "answer": "hi"},
        {"prompt": "again", "answer": "yes"},
    ]
    assert list(snapshot.queue) == [] and not snapshot.turn_running

    write_once(path, InsertTurnAttempt("a3", "t1", "cli:r1", "long job", at=9.0))
    write_once(path, EnqueuePrompt("cli:r1", "after it", task_id="t1"))
    snapshot = _snapshot(path)
    assert snapshot.turn_running and list(snapshot.queue) == ["after it"]
    assert len(snapshot.turns) == 2  # the running turn is not history yet


def test_a_background_sessions_task_is_the_one_it_claimed(tmp_path: Path) -> None:
    path = tmp_path / "robota.db"
    write_once(path, CreateTask("t1", "codex", "/p", "acp", at=1.0))
    write_once(path, ClaimTask("t1", "session:s-abc", 1, 2, "/sock", "gen"))
    assert _read(path, lambda db: session_task(db, "s-abc")) == "t1"
    assert _read(path, lambda db: session_task(db, "s-other")) is None


def _git(cwd: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(cwd), *args], capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


def test_the_folder_as_git_sees_it_names_what_stays_behind(tmp_path: Path) -> None:
    assert git_checkout(str(tmp_path)) == SourceCheckout(str(tmp_path))
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "remote", "add", "origin", "https://example.org/me/p.git")
    (tmp_path / "kept.py").write_text("a\n")
    _git(tmp_path, "add", "kept.py")
    _git(tmp_path, "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-qm", "one")
    (tmp_path / "kept.py").write_text("b\n")
    (tmp_path / "new.txt").write_text("n\n")
    checkout = git_checkout(str(tmp_path))
    assert checkout.origin == "https://example.org/me/p.git"
    assert checkout.head == _git(tmp_path, "rev-parse", "HEAD")
    assert checkout.uncommitted == ("kept.py", "new.txt")


@pytest.mark.parametrize(
    ("origin", "head", "local", "warned"),
    [
        (None, None, SourceCheckout("/w"), []),  # the source's was no checkout
        ("o", "h" * 40, SourceCheckout("/w", "o", "h" * 40), []),
        ("o", "h" * 40, SourceCheckout("/w"), ["/w is not a git checkout; the source's was (o)"]),
        ("o", "h" * 40, SourceCheckout("/w", "x", "h" * 40), ["/w: origin x, the source's o"]),
        (
            "o",
            "a" * 40,
            SourceCheckout("/w", None, "b" * 40),
            ["/w: origin none, the source's o", f"/w: HEAD {'b' * 12}, the source's {'a' * 12}"],
        ),
    ],
)
def test_the_destination_is_warned_when_its_folder_is_not_the_sources_checkout(
    origin: str | None, head: str | None, local: SourceCheckout, warned: list[str]
) -> None:
    assert checkout_warnings({"origin": origin, "head": head}, local) == warned
