"""When a route has nothing in flight (``RouteCore.settled``: it may passivate after a short
quiet), and what it keeps across that passivation; tables over the pure core."""

from __future__ import annotations

from collections import deque
from typing import Any

import pytest

from robota.core.agents import AgentSessionInfo, SessionEvent, SessionOpened, SessionsListed
from robota.core.engine import (
    ClaimFinal,
    FinalClaimed,
    Restored,
    RouteCore,
    TaskDefaults,
    UserInput,
    Write,
)
from robota.core.events import ApprovalRequested, TurnCompleted
from robota.core.store import CreateTask

from ._route import CODEX, CWD, KEY, WALL, Reads, ids, of, route, running_turn, task


def test_a_route_with_a_task_and_nothing_running_is_settled() -> None:
    assert route().settled
    assert route(current=task()).settled


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("turn", object()),
        ("taking", True),
        ("pending", [1]),
        ("steers", deque([("also this", None)])),
        ("listings", {"r1": object()}),
        ("resetting", object()),
        ("approvals", {"ap1": object()}),
        ("answered", {"ap1": None}),
    ],
)
def test_anything_in_flight_unsettles_the_route(field: str, value: Any) -> None:
    core = route(current=task())
    setattr(core.state, field, value)
    assert not core.settled


def test_a_turn_unsettles_the_route_until_its_final_is_claimed() -> None:
    core = route(current=task())
    running_turn(core)
    assert not core.settled
    core.handle(SessionEvent("t0", ApprovalRequested("ap1", "command", "Run ls?")))
    assert not core.settled
    done = TurnCompleted("turn-1", "completed", final_text="ok")
    completed = core.handle(SessionEvent("t0", done))
    assert not core.settled  # the final's claim is on its way
    (claim,) = of(completed, ClaimFinal)
    core.handle(FinalClaimed(claim.finished, won=True))
    assert core.settled


def test_sessions_waiting_for_an_agent_unsettle_the_route_and_its_numbers_are_kept() -> None:
    core = route(CODEX, current=task())
    core.handle(UserInput("/sessions"))
    assert not core.settled
    thread = AgentSessionInfo("thread-x", "desktop", str(CWD), WALL)
    core.handle(SessionsListed("r1", "codex", (thread,)))
    assert core.settled
    # The route passivates; the next incarnation numbers the same list for /switch N.
    reads = Reads()
    reads.tasks_by_id["t0"] = task()
    again = RouteCore(
        KEY,
        {"codex": CODEX},
        TaskDefaults(agent="codex", cwd=CWD),
        reads,
        restored=Restored(task(), kept=core.kept()),
        ids=ids(),
    )
    again.start()
    again.handle(SessionOpened("t0", "thread-0", resumed=True))
    effects = again.handle(UserInput("/switch 1"))
    (created,) = [w.op for w in of(effects, Write) if isinstance(w.op, CreateTask)]
    assert created.remote_id == "thread-x"
