"""The agent's session table keeps a session's running turn whatever order its start's answer
and its events come in: a fast turn's ``TurnStarted`` and ``TurnCompleted`` can overtake the
job that started it, whose ``TurnAccepted`` then reports a turn already over (the MCP
benchmark's next prompt was refused "a turn is running")."""

from __future__ import annotations

from pathlib import Path

import pytest

from robota.core.agents import OpenSession, SessionSpec, StartTurn, TurnAccepted, TurnRefused
from robota.core.events import TurnCompleted, TurnStarted
from robota.runtimes._agent_jobs import Notice, Prompt, Update
from robota.runtimes._session_table import SessionTable

STARTED = Update("k", TurnStarted("t1"))
ENDED = Update("k", TurnCompleted("t1", "completed"))
ACCEPTED = Notice(TurnAccepted("k", "t1"))


@pytest.mark.parametrize(
    ("reports", "busy"),
    [
        ([ACCEPTED, STARTED, ENDED], False),
        ([STARTED, ACCEPTED, ENDED], False),
        ([STARTED, ENDED, ACCEPTED], False),  # the acceptance came after the turn's end
        ([ACCEPTED, STARTED], True),
        ([STARTED], True),
        ([ACCEPTED], True),
    ],
)
def test_the_next_prompt_finds_the_session_busy_only_while_its_turn_runs(
    reports: list[object], busy: bool
) -> None:
    jobs: list[object] = []
    delivered: list[object] = []
    table = SessionTable("agent", jobs.append)
    table.receive(OpenSession("k", SessionSpec(Path("/tmp")), delivered.append))
    table.receive(StartTurn("k", "first"))
    for report in reports:
        table.receive(report)
    jobs.clear()
    table.receive(StartTurn("k", "second"))
    refused = [n for n in delivered if isinstance(n, TurnRefused)]
    assert bool(refused) is busy, delivered
    assert any(isinstance(job, Prompt) for job in jobs) is not busy, jobs
