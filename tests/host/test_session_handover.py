"""A background session takes a task over from the live host cleanly (issue 27 §2, one owner
per task): on real processes, a real host and codex against the fake model. The session asks
the host to let the task go (``task.release``) before it claims it: the host closes the
task's Codex thread (unloaded at once), so the session's codex resumes it with its history
(the ``HISTORY`` answer has the words the host's turn saw), where Codex refused it ("already
has an active writer") and the session answered on a blank thread; once the session ended,
the host resumes that same thread; while a turn of the task
runs at the host, the host refuses and the start fails naming it, nothing claimed. Which
owner row asks the host first is a table."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from robota.core.config import Profile
from robota.core.store import TaskOwner
from robota.host._owners import HOST_OWNER, Free, Gone, HostHolds, Mine, Owner, Theirs, takeover

from ..support.host import task_json
from ..support.model_server import FakeModel
from ..support.robota import Robota
from ..support.sessions import robota_cmd, start_on_task, workspace
from ._printing import host_log, hosted_sandbox, owner_of

ME = Owner("session:s2", 20, 200, "/run/s2.sock", "gen")


def row(owner: str, pid: int = 10) -> TaskOwner:
    return TaskOwner("t1", owner, pid, 100, "/run/x.sock", "tok", 3, 0.0)


@pytest.mark.parametrize(
    ("found", "runs", "decided"),
    [
        (None, False, Free),
        (row("session:s2", 20), True, Theirs),  # another start of the same id
        (row(HOST_OWNER), True, HostHolds),  # the live host: asked to let it go first
        (row(HOST_OWNER), False, Gone),  # an ended host: taken over
        (row("session:s1"), True, Theirs),  # another live session: refused
        (row("session:s1"), False, Gone),
        (row("tui:ab12"), True, Theirs),
    ],
)
def test_a_session_asks_only_a_live_host_to_let_its_task_go(
    found: TaskOwner | None, runs: bool, decided: type
) -> None:
    assert type(takeover(found, ME, owner_runs=runs)) is decided


def test_a_session_taking_itself_is_mine() -> None:
    mine = TaskOwner("t1", ME.owner, ME.pid, ME.process_start, ME.socket, ME.token, 1, 0.0)
    assert isinstance(takeover(mine, ME, owner_runs=True), Mine)


@pytest.fixture
def hosted_codex(short_root: Path) -> Iterator[tuple[Robota, Profile]]:
    """A sandbox whose host runs codex against a fake model whose ``SLOW`` lasts 30 s."""
    with FakeModel(slow_deltas=600, slow_delay=0.05) as model:
        yield from hosted_sandbox(short_root, model)


def _new_task(robota: Robota) -> tuple[Path, str]:
    """A workspace and a new task of it, made through the host."""
    project = workspace(robota)
    return project, task_json(robota, "new", "--dir", str(project))["task"]["id"]


def _final(sent: dict[str, object]) -> str:
    turns = sent["turns"]
    assert isinstance(turns, list) and turns, sent
    return str(turns[-1]["final"])


def test_a_session_takes_a_task_over_from_the_live_host_with_its_history(
    hosted_codex: tuple[Robota, Profile],
) -> None:
    robota, profile = hosted_codex
    project, task_id = _new_task(robota)
    first = task_json(robota, "send", task_id, "first words", "--wait")
    assert _final(first) == "ECHO: first words", first
    assert owner_of(profile, task_id) is not None
    assert owner_of(profile, task_id)[0] == HOST_OWNER  # type: ignore[index]

    code, started = start_on_task(robota, project, task_id)
    assert code == 0, started
    session_id = json.loads(started)["id"]
    try:
        owner = owner_of(profile, task_id)
        assert owner is not None and owner[0] == f"session:{session_id}", owner
        # Forwarded to the session, whose codex resumed the host's thread: its history whole.
        second = task_json(robota, "send", task_id, "HISTORY two", "--wait")
        assert _final(second) == "HISTORY: first words | HISTORY two", second
        assert second["owner"] == f"session:{session_id}"
    finally:
        robota_cmd(robota, "session", "stop", session_id)
    # The session ended: the host takes the task back and resumes the same thread (one
    # history, not the host's older one beside the session's).
    third = task_json(robota, "send", task_id, "HISTORY three", "--wait")
    assert _final(third) == "HISTORY: first words | HISTORY two | HISTORY three", third
    logs = host_log(robota)
    assert "active writer" not in logs
    assert "cannot resume thread" not in logs


def test_the_host_keeps_a_task_whose_turn_runs_and_the_start_fails_naming_it(
    hosted_codex: tuple[Robota, Profile],
) -> None:
    robota, profile = hosted_codex
    project, task_id = _new_task(robota)
    sent = task_json(robota, "send", task_id, "SLOW and steady")
    assert sent["outcome"]["kind"] == "started", sent
    held = owner_of(profile, task_id)
    try:
        code, said = start_on_task(robota, project, task_id)
        assert code == 1, said
        assert f"a turn of task {task_id} is running" in said, said
        assert owner_of(profile, task_id) == held  # nothing claimed, the host's still
    finally:
        task_json(robota, "stop", task_id)
