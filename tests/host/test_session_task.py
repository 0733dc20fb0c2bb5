"""``robota session start --background --task TASK``: a background session on an existing task,
on real processes with a real ACP agent against the fake model. The task continues in it (its
history answered by its agent); a task working in another workspace and one a live session
drives are refused, the start failing and the session saying why; the spawned ``session run``
carries the task, and a refusal is found however deep in the tree's exception groups (tables).
(A task a handoff holds or moved is refused by the route, ``UseTask``: the engine's tests.)"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from robota.core.config import Profile
from robota.core.control import ControlClient, HandlerError
from robota.core.store import CreateTask, write_once
from robota.host import SessionSpec
from robota.host._session_run import refusal
from robota.host._sessions import session_argv

from ..support.host import BOUND, sandboxed, short_root
from ..support.model_server import FakeModel
from ..support.processes import kill_processes_with_home_under
from ..support.robota import Robota
from ..support.sessions import AGENT, ok_json, registration, robota_cmd, workspace
from ..support.sessions import start_on_task as _start

__all__ = ["short_root"]  # the fixture, from tests/support/host.py


@pytest.fixture
def sandbox(short_root: Path) -> Iterator[tuple[Robota, Profile]]:
    """A sandbox with the real agent against a fake model; its sessions ended afterwards."""
    with FakeModel() as model:
        try:
            yield sandboxed(short_root, model, AGENT)
        finally:
            kill_processes_with_home_under(short_root)


@pytest.mark.parametrize(
    ("task", "tail"),
    [(None, ["--cwd", "/w"]), ("t-build", ["--cwd", "/w", "--task", "t-build"])],
)
def test_the_spawned_session_carries_the_task(task: str | None, tail: list[str]) -> None:
    spec = SessionSpec("0123456789ab", "s", AGENT, Path("/w"), Path("/w"), task=task)
    argv = session_argv(spec)
    head = ["session", "run", "--id", "0123456789ab", "--name", "s", "--agent", AGENT]
    assert argv[-1] == f"from robota.cli import main; main({[*head, *tail]!r})"


@pytest.mark.parametrize(
    ("failed", "said"),
    [
        (HandlerError("owned", "task t1 is driven by x"), "task t1 is driven by x"),
        (ExceptionGroup("tree", [HandlerError("refused", "why")]), "why"),
        (
            ExceptionGroup("a", [ValueError(), ExceptionGroup("b", [HandlerError("r", "deep")])]),
            "deep",
        ),
        (ExceptionGroup("tree", [ValueError("boom")]), None),
        (RuntimeError("boom"), None),
    ],
)
def test_a_refusal_is_found_in_the_trees_failure(failed: BaseException, said: str | None) -> None:
    assert refusal(failed) == said


def _ask(profile: Profile, session_id: str, text: str) -> str:
    """``text`` to the session's task, its answer waited for (``session.send``), as JSON."""
    found = registration(profile, session_id)
    with ControlClient(Path(found.socket), timeout=BOUND) as client:
        fields = {"generation": found.generation, "text": text, "wait": True}
        return json.dumps(client.call("session.send", fields))


def _db(profile: Profile) -> Path:
    return profile.home / "data" / "robota.sqlite"


def test_a_session_continues_a_task_of_its_workspace_and_refuses_others(
    sandbox: tuple[Robota, Profile],
) -> None:
    robota, profile = sandbox
    project, elsewhere = workspace(robota), workspace(robota, "elsewhere")
    first = ok_json(robota, "session", "start", "--background", "--cwd", str(project))["id"]
    try:
        assert "ECHO: hello there" in _ask(profile, first, "hello there")
        [owned] = [t for t in ok_json(robota, "task", "list") if t["title"].startswith("session-")]

        # Another live session drives it: refused, naming that session.
        code, why = _start(robota, project, owned["id"])
        assert code == 1 and f"is driven by background session {first}" in why, why

        # A task of another workspace: refused, naming its folder.
        write_once(_db(profile), CreateTask("t-far", AGENT, str(elsewhere), "acp", title="far"))
        code, why = _start(robota, project, "t-far")
        assert code == 1 and f"task t-far works in {elsewhere}" in why, why
    finally:
        robota_cmd(robota, "session", "stop", first)

    # Its session ended: another continues the task, with its history.
    code, started = _start(robota, project, owned["id"])
    assert code == 0, started
    second = json.loads(started)["id"]
    try:
        answer = _ask(profile, second, "HISTORY")
        assert "HISTORY: hello there | HISTORY" in answer, answer
    finally:
        robota_cmd(robota, "session", "stop", second)
