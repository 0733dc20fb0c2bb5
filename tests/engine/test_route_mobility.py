"""A task a handoff moves, moved or holds takes no input on its route: prompts, steers, queued
prompts and a binding are refused with the reason; commands and a new task still pass. A task
that arrived primes its first agent session with its transcript, unless its runtime restores
the history itself (a capability, never the agent's kind)."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from robota.core import replace
from robota.core.agents import StartTurn
from robota.core.engine import Notify, RouteReply, Tell, UserInput, UseTask, Write
from robota.core.engine._route_turns import primer
from robota.core.store import (
    EnqueuePrompt,
    InsertTurnAttempt,
    MarkPrimed,
    TaskMobility,
    Together,
    mobility_refusal,
)

from ._route import CODEX, Reads, of, route, running_turn, task

MOVING = "task t0 is moving"


def _replies(effects: Sequence[object]) -> list[str]:
    return [
        e.notice.text for e in effects if isinstance(e, Notify) and isinstance(e.notice, RouteReply)
    ]


@pytest.mark.parametrize(
    ("text", "refused"),
    [
        ("do the thing", True),  # a prompt
        ("/new fresh start", False),  # a new task is not the moving one
        ("/queue", False),  # a command
    ],
)
def test_input_to_a_moving_task_is_refused_saying_so(text: str, refused: bool) -> None:
    core = route(current=task(), reads=Reads(refusals={"t0": MOVING}))
    effects = list(core.handle(UserInput(text)))
    writes = [e.op for e in of(effects, Write)]
    started = [op for op in writes if isinstance(op, InsertTurnAttempt | EnqueuePrompt)]
    if refused:
        assert _replies(effects) == [MOVING]
        assert started == [] and of(effects, Tell) == []
    else:
        assert MOVING not in _replies(effects)


def test_a_task_that_moves_mid_session_refuses_steers_and_queued_prompts() -> None:
    reads = Reads()
    core = route(current=task(), reads=reads)
    running_turn(core)
    reads.refusals["t0"] = MOVING
    effects = list(core.handle(UserInput("steer or queue me")))
    assert _replies(effects) == [MOVING]
    assert of(effects, Tell) == [] and of(effects, Write) == []


def test_a_moved_task_is_not_bound_and_its_session_not_opened() -> None:
    reads = Reads(refusals={"t0": "task t0 has moved"})
    reads.tasks_by_id["t0"] = task()
    core = route(reads=reads)
    effects = list(core.handle(UseTask("t0")))
    assert _replies(effects) == ["task t0 has moved"]
    assert of(effects, Tell) == [] and core.state.task is None


@pytest.mark.parametrize(
    ("state", "says"),
    [
        (None, None),
        ("moving", "task t0 is moving to device D (handoff h1); it takes no input"),
        ("moved", "task t0 has moved to device D; continue it there"),
        ("held", "task t0 is held: device D has not released it yet (handoff h1)"),
    ],
)
def test_mobility_refusal_names_state_and_device(state: str | None, says: str | None) -> None:
    mobility = TaskMobility(state, "D", "h1") if state is not None else None  # type: ignore[arg-type]
    refusal = mobility_refusal("t0", mobility)
    if says is None:
        assert refusal is None
    else:
        assert refusal is not None and refusal.startswith(says)


ARRIVED = [{"prompt": "HELLO", "answer": "hi"}, {"prompt": "more", "answer": "done"}]


@pytest.mark.parametrize(
    ("transcript", "remote_id", "native", "primed"),
    [
        (ARRIVED, None, False, True),  # arrived, its first session: primed
        (None, None, False, False),  # a task like any other, or one primed already
        (ARRIVED, "thread-9", False, True),  # the session opened to take the prompt
        (ARRIVED, None, True, False),  # the runtime restores the history itself
    ],
)
def test_a_task_that_arrived_primes_its_first_session_with_its_transcript(
    transcript: list[dict[str, object]] | None, remote_id: str | None, native: bool, primed: bool
) -> None:
    reads = Reads(transcripts={"t0": transcript} if transcript is not None else {})
    agent = replace(CODEX, capabilities=replace(CODEX.capabilities, import_history=native))
    core = route(agent, current=task(remote_id=remote_id), reads=reads)
    effects = list(core.handle(UserInput("HISTORY")))
    [write] = of(effects, Write)
    ops = write.op.ops if isinstance(write.op, Together) else (write.op,)
    assert (MarkPrimed("t0") in ops) is primed
    [sent] = [e.request for e in write.then if isinstance(e, Tell)]
    assert isinstance(sent, StartTurn)
    if primed:
        assert sent.text == primer(ARRIVED) + "HISTORY"
        assert "HELLO" in sent.text and "done" in sent.text
    else:
        assert sent.text == "HISTORY"
    [insert] = [op for op in ops if isinstance(op, InsertTurnAttempt)]
    assert insert.prompt == "HISTORY"  # what the user typed is the turn's prompt
