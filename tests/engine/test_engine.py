"""The engine as one tree: routes, store and a real ACP agent process (the fault agent).

These tests run the whole engine in-process against a real SQLite file and a real agent
subprocess; killing the engine means cancelling its tree in the middle of a turn, then starting
a new engine on the same database.
"""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

import trio

from robota.core.engine import (
    InputQueued,
    RouteIdle,
    RouteReply,
    TaskOpened,
    TurnBegan,
    TurnFinished,
    TurnUpdate,
    UserInput,
    recovery_prompt,
)
from robota.core.events import TurnStarted
from robota.core.store import Database, open_reader, task_turn_attempts
from robota.core.testing import Recording, crash, wait_until

from ._engine import ROUTE, connected, make_engine, of, running, until


async def until_running(notices: Recording) -> None:
    """Until the agent started the route's turn."""
    await wait_until(
        lambda: bool(of(notices, TurnUpdate, lambda u: isinstance(u.event, TurnStarted))),
        timeout=20,
    )


async def test_a_prompt_opens_a_task_and_the_answer_comes_once(tmp_path: Path) -> None:
    async with connected(tmp_path) as (engine, notices):
        engine.tell(ROUTE, UserInput("hello"))
        [finished] = await until(notices, TurnFinished)
        await until(notices, RouteIdle)
    assert (finished.status, finished.final_text) == ("completed", "echo: hello")
    [opened] = of(notices, TaskOpened)
    assert opened.task_id == finished.task_id and opened.resumed is False
    kinds = [type(n).__name__ for n in notices.messages]
    assert kinds.index("TurnBegan") < kinds.index("TurnUpdate") < kinds.index("TurnFinished")
    with closing(open_reader(tmp_path / "robota.db")) as db:
        [attempt] = task_turn_attempts(db, finished.task_id)
    assert (attempt.status, attempt.final_text, attempt.prompt) == (
        "completed",
        "echo: hello",
        "hello",
    )


async def test_an_unknown_command_never_reaches_the_agent(tmp_path: Path) -> None:
    async with connected(tmp_path) as (engine, notices):
        engine.tell(ROUTE, UserInput("/frobnicate now"))
        engine.tell(ROUTE, UserInput("/s"))  # ambiguous: /sessions, /status, /stop, /switch
        engine.tell(ROUTE, UserInput("/status"))
        await until(notices, RouteReply, 3)
    replies = [r.text for r in of(notices, RouteReply)]
    assert "unknown command /frobnicate" in replies[0]
    assert "ambiguous" in replies[1] and "/status" in replies[1]
    assert replies[2].startswith("no task yet")
    assert not of(notices, TurnBegan)
    assert not (tmp_path / "pids").exists(), "no agent process was started"


async def test_input_during_an_acp_turn_is_queued_and_runs_in_order(tmp_path: Path) -> None:
    async with connected(tmp_path) as (engine, notices):
        engine.tell(ROUTE, UserInput("HANG until stopped"))
        await until_running(notices)
        engine.tell(ROUTE, UserInput("first"))
        engine.tell(ROUTE, UserInput("/nosteer second"))
        await until(notices, InputQueued, 2)
        engine.tell(ROUTE, UserInput("/stop"))
        finished = await until(notices, TurnFinished, 3)
    assert [(f.status, f.final_text) for f in finished] == [
        ("interrupted", None),
        ("completed", "echo: first"),
        ("completed", "echo: second"),
    ]
    assert [q.ahead for q in of(notices, InputQueued)] == [0, 1]
    assert_began_first(notices)


def assert_began_first(notices: Recording) -> None:
    """Each turn's ``TurnBegan`` reached the front end before any of that turn's updates (a
    front end draws the turn from it; updates before it have nowhere to go)."""
    began: set[str] = set()
    for notice in notices.messages:
        if isinstance(notice, TurnBegan):
            began.add(notice.attempt_id)
        elif isinstance(notice, TurnUpdate | TurnFinished):
            assert notice.attempt_id in began, f"{notice!r} before its TurnBegan"


async def test_a_killed_engine_continues_its_turn_and_keeps_the_queue(tmp_path: Path) -> None:
    first_run = Recording()
    engine = make_engine(tmp_path, recover=lambda key: key == ROUTE)
    engine.connect(ROUTE, first_run.add)
    async with running(engine) as kill:
        engine.tell(ROUTE, UserInput("HANG over the crash"))
        await until_running(first_run)
        engine.tell(ROUTE, UserInput("queued one"))
        engine.tell(ROUTE, UserInput("queued two"))
        await until(first_run, InputQueued, 2)
        kill.cancel()
    assert not of(first_run, TurnFinished)
    [cut_short] = of(first_run, TurnBegan)

    second_run = Recording()
    engine = make_engine(tmp_path, recover=lambda key: key == ROUTE)
    engine.connect(ROUTE, second_run.add)
    async with running(engine):
        finished = await until(second_run, TurnFinished, 3)
        await until(second_run, RouteIdle)
    recovery = of(second_run, TurnBegan)[0]
    assert recovery.recovery and "HANG over the crash" in recovery.prompt
    assert "inspect what was already done" in recovery.prompt
    assert [f.final_text for f in finished][1:] == ["echo: queued one", "echo: queued two"]
    assert finished[0].final_text is not None and "robota restarted" in finished[0].final_text
    assert len({f.attempt_id for f in finished}) == 3
    assert cut_short.attempt_id not in {f.attempt_id for f in finished}
    with closing(open_reader(tmp_path / "robota.db")) as db:
        attempts = {a.id: a for a in task_turn_attempts(db, cut_short.task_id)}
    assert attempts[cut_short.attempt_id].status == "interrupted"
    assert sorted(a.status for a in attempts.values()) == ["completed"] * 3 + ["interrupted"]

    third_run = Recording()
    engine = make_engine(tmp_path, recover=lambda key: key == ROUTE)
    engine.connect(ROUTE, third_run.add)
    async with running(engine):
        await trio.sleep(0.5)
    assert not of(third_run, TurnFinished), "a restart after recovery delivers nothing again"


async def test_a_route_that_crashes_mid_turn_takes_the_turn_back(tmp_path: Path) -> None:
    async with connected(tmp_path) as (engine, notices):
        engine.tell(ROUTE, UserInput("HANG through a route crash"))
        await until_running(notices)
        address = engine.directory.address(ROUTE)
        assert address is not None
        crash(address, "the route's own bug")
        engine.tell(ROUTE, UserInput("/stop"))
        [stopped] = await until(notices, TurnFinished)
        engine.tell(ROUTE, UserInput("after"))
        finished = await until(notices, TurnFinished, 2)
    assert stopped.status == "interrupted"
    assert [f.final_text for f in finished][1:] == ["echo: after"]
    assert not [r for r in of(notices, RouteReply) if "no turn is running" in r.text]
    assert len({f.attempt_id for f in finished}) == 2


async def test_a_start_that_only_delivers_a_final_then_says_idle(tmp_path: Path) -> None:
    async with connected(tmp_path) as (engine, notices):
        engine.tell(ROUTE, UserInput("hello"))
        [first] = await until(notices, TurnFinished)
    # As if the run had died between recording the turn's end and claiming its final.
    db = Database(sqlite3.connect(tmp_path / "robota.db"))
    with closing(db.conn):
        db.execute("DELETE FROM final_deliveries WHERE turn_id = ?", (first.attempt_id,))
        db.conn.commit()
    again = Recording()
    engine = make_engine(tmp_path, recover=lambda key: key == ROUTE)
    engine.connect(ROUTE, again.add)
    async with running(engine):
        await until(again, RouteIdle)
    assert [(f.attempt_id, f.final_text) for f in of(again, TurnFinished)] == [
        (first.attempt_id, "echo: hello")
    ]
    assert not of(again, TurnBegan)


def test_the_recovery_note_is_said_once_however_often_robota_restarted() -> None:
    once = recovery_prompt("do it")
    assert recovery_prompt(once) == once and once.endswith("\n\ndo it")


async def test_idle_notices_count_the_inputs_taken_before_them(tmp_path: Path) -> None:
    """A front end that sent N inputs knows an idle notice with fewer is an old one."""
    async with connected(tmp_path) as (engine, notices):
        engine.tell(ROUTE, UserInput("/status"))  # answered at once: idle after 1
        engine.tell(ROUTE, UserInput("hello"))  # a turn: idle after 2, once it ended
        engine.tell(ROUTE, UserInput("/frobnicate"))  # refused during the turn: not idle
        await wait_until(lambda: any(i.inputs == 3 for i in of(notices, RouteIdle)), timeout=20)
    idle = [(n.inputs, kinds) for n, kinds in _idle_context(notices.messages)]
    assert idle[0] == (1, []) and idle[-1][0] == 3
    assert "TurnFinished" in idle[-1][1], "the last idle notice follows the turn's end"


def _idle_context(messages: list[object]) -> list[tuple[RouteIdle, list[str]]]:
    """Each idle notice with the kinds of notices since the previous one."""
    found: list[tuple[RouteIdle, list[str]]] = []
    since: list[str] = []
    for message in messages:
        if isinstance(message, RouteIdle):
            found.append((message, since))
            since = []
        elif not isinstance(message, RouteReply):
            since.append(type(message).__name__)
    return found
