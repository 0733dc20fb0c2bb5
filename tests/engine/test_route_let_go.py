"""A route lets go of its task's agent session (``LetTaskGo``) for another process to resume it:
refused, naming what, while something of the task is under way on the route (a table); else
the session is closed at its agent (whether or not this incarnation opened it) and the answer
comes when the agent closed it, the task staying current and its next prompt opening the
session again; a task not current on the route is let go at once."""

from __future__ import annotations

import pytest

from robota.core.agents import CloseSession, OpenSession, SessionSpec
from robota.core.engine import Answer, LetTaskGo, OpenAgentSession, Tell, UserInput, let_go_refusal
from robota.runtimes._session_table import SessionTable

from ._route import CWD, of, route, running_turn, task


@pytest.mark.parametrize(
    ("turn", "queued", "approvals", "busy", "said"),
    [
        (False, 0, 0, False, None),
        (True, 0, 0, False, "a turn of task t0 is running"),
        (True, 2, 1, True, "a turn of task t0 is running"),
        (False, 0, 1, False, "an approval waits on task t0"),
        (False, 3, 2, False, "2 approvals wait on task t0"),
        (False, 1, 0, False, "a prompt is queued on task t0"),
        (False, 2, 0, True, "2 prompts are queued on task t0"),
        (False, 0, 0, True, "task t0 is busy (a prompt is being taken, or its agent is asked)"),
    ],
)
def test_what_keeps_a_route_from_letting_a_task_go(
    turn: bool, queued: int, approvals: int, busy: bool, said: str | None
) -> None:
    assert let_go_refusal("t0", turn=turn, queued=queued, approvals=approvals, busy=busy) == said


def test_an_idle_route_closes_the_session_and_answers_once_the_agent_closed_it() -> None:
    core = route(current=task())
    core.handle(UserInput("hello"))  # opens the session, runs a turn...
    core.state.turn = None  # ...which ended
    assert "t0" in core.state.opened
    answers: list[str | None] = []
    effects = core.handle(LetTaskGo("t0", answers.append))
    [tell] = of(effects, Tell)
    assert tell.agent == "codex" and tell.request == CloseSession("t0")
    assert answers == [] and "t0" not in core.state.opened
    closed = tell.request.closed
    assert closed is not None
    closed()  # the agent closed it
    assert answers == [None]
    # Still current: its next prompt opens its session again (resumed by its agent).
    assert core.state.task is not None and core.state.task.id == "t0"
    again = core.handle(UserInput("more"))
    assert [o.task_id for o in of(again, OpenAgentSession)] == ["t0"]


def test_a_session_a_passivated_route_left_open_is_closed_too() -> None:
    core = route(current=task())  # a fresh incarnation: it opened nothing itself
    answers: list[str | None] = []
    [tell] = of(core.handle(LetTaskGo("t0", answers.append)), Tell)
    assert tell.request == CloseSession("t0")


def test_a_running_turn_is_not_cut_off() -> None:
    core = route(current=task())
    running_turn(core)
    answers: list[str | None] = []
    effects = core.handle(LetTaskGo("t0", answers.append))
    assert of(effects, Tell) == []
    [answered] = of(effects, Answer)
    answered.answer(answered.value)
    assert answers == ["a turn of task t0 is running"]
    assert "t0" in core.state.opened


def test_a_task_not_current_here_is_let_go_at_once() -> None:
    core = route(current=task())
    answers: list[str | None] = []
    effects = core.handle(LetTaskGo("other", answers.append))
    assert of(effects, Tell) == []
    [answered] = of(effects, Answer)
    assert answered.value is None


def test_the_agents_session_table_answers_a_close_of_no_session_at_once() -> None:
    jobs: list[object] = []
    table = SessionTable("codex", jobs.append)
    closed: list[str] = []
    table.receive(CloseSession("nothing-open", lambda: closed.append("now")))
    assert closed == ["now"] and jobs == []
    table.receive(OpenSession("t0", SessionSpec(CWD, task_id="t0"), lambda _notice: None))
    table.receive(CloseSession("t0", lambda: closed.append("after")))
    assert closed == ["now"]  # its process closes it, then calls it
    assert [type(job).__name__ for job in jobs] == ["Bind", "Release"]
