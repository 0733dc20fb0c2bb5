"""The engine's ``restricted(cwd)`` hook as a table: a Restricted directory's session opens
with permission mode ``plan`` whatever the task says, and its turn's ``TurnBegan`` says so."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from robota.core.engine import (
    Notify,
    OpenAgentSession,
    RouteCore,
    TaskDefaults,
    TurnBegan,
    UserInput,
    Write,
)

from ._route import CODEX, CWD, KEY, Reads, ids

OTHER = Path("/work/other")


def core(restricted: Callable[[Path], bool] | None) -> RouteCore:
    made = RouteCore(
        KEY,
        {"codex": CODEX},
        TaskDefaults(agent="codex", cwd=CWD, permission_mode="bypassPermissions"),
        Reads(),
        ids=ids(),
        restricted=restricted,
    )
    made.start()
    return made


@pytest.mark.parametrize(
    ("restricted", "mode", "marked"),
    [
        (None, "bypassPermissions", False),  # no hook: never Restricted
        (lambda cwd: cwd == CWD, "plan", True),
        (lambda cwd: cwd == OTHER, "bypassPermissions", False),  # another directory's trust
        (lambda _cwd: True, "plan", True),  # a --restricted start: everything
    ],
)
def test_a_restricted_directory_opens_in_plan_and_its_turn_says_so(
    restricted: Callable[[Path], bool] | None, mode: str, marked: bool
) -> None:
    effects = core(restricted).handle(UserInput("hello"))
    (opened,) = [e for e in effects if isinstance(e, OpenAgentSession)]
    assert opened.spec.permission_mode == mode
    (write,) = [e for e in effects if isinstance(e, Write) and e.then]
    (began,) = [e.notice for e in write.then if isinstance(e, Notify)]
    assert isinstance(began, TurnBegan) and began.restricted is marked


def test_an_open_session_whose_trust_changed_gets_the_new_mode_before_the_next_turn() -> None:
    trusted = {CWD}
    route = core(lambda cwd: cwd not in trusted)
    effects = route.handle(UserInput("first"))
    (opened,) = [e for e in effects if isinstance(e, OpenAgentSession)]
    assert opened.spec.permission_mode == "bypassPermissions"
    task = route.state.task
    assert task is not None
    assert route.state.check_restriction(task) is False
    assert route.state.effects == [], "unchanged: nothing sent"
    trusted.clear()  # revoked while the session is open
    assert route.state.check_restriction(task) is True
    (reopened,) = [e for e in route.state.effects if isinstance(e, OpenAgentSession)]
    assert (reopened.task_id, reopened.spec.permission_mode) == (task.id, "plan")
    assert route.state.session_restricted[task.id] is True
