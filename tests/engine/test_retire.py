"""A quiet route retired (issue 28 s.3, ``_retire``): the engine forgets it and releases its
agent session once it is passive, only when nothing of it is under way, and its next prompt
resumes the same agent session from the store, as after a restart. The decision by table;
the engine with a real store and the fault agent (its ``HISTORY`` survives ``session/load``)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from robota.core.engine import (
    Engine,
    EngineAgent,
    Interrupt,
    TaskDefaults,
    TaskOpened,
    TurnBegan,
    TurnFinished,
    UserInput,
)
from robota.core.engine._retire import keeps_something, may_retire
from robota.core.engine._route_state import Kept
from robota.core.events import ApprovalRequested
from robota.core.testing import FAST_BACKOFF, Recording, wait_until
from robota.runtimes import agent_host

from ..support.agent_actor import fault_launch
from ._engine import of, running, until

KEY = "chat:quiet"
APPROVAL = ApprovalRequested("a1", "command", "run ls")


@pytest.mark.parametrize(
    ("kept", "something"),
    [
        (None, False),
        (Kept(), False),
        (Kept(inputs=7), False),
        (Kept(surfaces=(("tui:1", True),)), True),
        (Kept(attended=True), True),
        (Kept(approvals=(APPROVAL,)), True),
        (Kept(answered=(("a1", "accept"),)), True),
        (Kept(resolved=(("a1", None),)), True),
    ],
)
def test_what_a_route_keeps_beyond_its_count(kept: Kept | None, something: bool) -> None:
    assert keeps_something(kept) is something


@pytest.mark.parametrize(
    ("kept", "loose_ends", "held", "retire"),
    [
        (Kept(inputs=3), frozenset(), False, True),
        (None, frozenset(), False, True),
        (Kept(inputs=3), frozenset({"running"}), False, False),
        (Kept(inputs=3), frozenset({"queued"}), False, False),
        (Kept(inputs=3), frozenset({"inbox"}), False, False),
        (Kept(inputs=3), frozenset({"shared"}), False, False),
        (Kept(approvals=(APPROVAL,)), frozenset(), False, False),
        (Kept(inputs=3), frozenset(), True, False),
    ],
)
def test_may_this_route_be_retired(
    kept: Kept | None, loose_ends: frozenset[str], held: bool, retire: bool
) -> None:
    assert may_retire(kept, loose_ends, held=held) is retire


def retiring_engine(tmp_path: Path, **options: Any) -> Engine:
    state = tmp_path / "agent-state"
    state.mkdir()
    launch = fault_launch(tmp_path, FAULT_AGENT_STATE=str(state))
    host = agent_host(launch, acp=True, backoff=FAST_BACKOFF)
    return Engine(
        tmp_path / "robota.db",
        [EngineAgent("acp", host)],
        TaskDefaults(agent="fault", cwd=tmp_path),
        backoff=FAST_BACKOFF,
        quiet_after=0.2,
        **options,
    )


@asynccontextmanager
async def spoken(
    tmp_path: Path, text: str, heard: type[object] = TurnFinished, **options: Any
) -> AsyncIterator[tuple[Engine, Recording]]:
    """A running engine whose route ``KEY`` was told ``text`` and said ``heard``."""
    engine = retiring_engine(tmp_path, **options)
    notices = Recording()
    engine.connect(KEY, notices.add)
    async with running(engine):
        engine.tell(KEY, UserInput(text))
        await until(notices, heard)
        yield engine, notices


async def test_a_retired_route_is_forgotten_and_its_next_turn_resumes_its_session(
    tmp_path: Path,
) -> None:
    async with spoken(tmp_path, "remember kiwi") as (engine, notices):
        engine.retire(KEY, lambda: False)  # active still: forgotten once it passivates
        await wait_until(lambda: engine.directory.known == 0, timeout=20)
        assert engine.directory.passivations == 1

        engine.tell(KEY, UserInput("HISTORY"))
        await until(notices, TurnFinished, 2)
    first, again = of(notices, TaskOpened)
    assert (first.resumed, again.resumed) == (False, True), "opened again with session/load"
    assert (again.task_id, again.remote_id) == (first.task_id, first.remote_id)
    history = of(notices, TurnFinished)[1].final_text or ""
    assert "remember kiwi" in history, history


async def test_a_held_route_is_not_forgotten(tmp_path: Path) -> None:
    async with spoken(tmp_path, "hello") as (engine, notices):
        engine.retire(KEY, lambda: True)
        await wait_until(lambda: engine.directory.passivations == 1, timeout=20)
        assert engine.directory.known == 1
        engine.tell(KEY, UserInput("again"))
        await until(notices, TurnFinished, 2)
    assert len(of(notices, TaskOpened)) == 1, "its session stayed open"


async def test_a_route_passivated_with_its_turn_running_is_not_forgotten(tmp_path: Path) -> None:
    async with spoken(tmp_path, "HANG", TurnBegan, idle_after=0.3) as (engine, notices):
        engine.retire(KEY, lambda: False)
        await wait_until(lambda: engine.directory.passivations >= 1, timeout=20)
        assert engine.directory.known == 1, "a turn runs: the route stays known"
        engine.tell(KEY, Interrupt())
        [finished] = await until(notices, TurnFinished)
        assert finished.status == "interrupted"
    assert len(of(notices, TaskOpened)) == 1
