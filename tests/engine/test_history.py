"""``/sessions``, ``/switch`` and resetting to a turn, against real Codex and the fake model.

The fake model answers a prompt starting with HISTORY with every user prompt it was sent, so
the answer shows which conversation a turn continued: a thread another client started (here a
session opened straight at the agent, outside any route, as Codex Desktop or the CLI would in
the same CODEX_HOME), or the branch a reset made.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, closing
from pathlib import Path

import pytest
import trio

from robota.core import ChildSpec
from robota.core.agents import ListSessions, SessionOpened, SessionsListed
from robota.core.engine import (
    Engine,
    EngineAgent,
    RouteReply,
    TaskDefaults,
    TaskOpened,
    TurnFinished,
    UserInput,
)
from robota.core.events import TurnCompleted
from robota.core.store import open_reader, task_turn_attempts
from robota.core.testing import FAST_BACKOFF, Recording, supervised, wait_until
from robota.runtimes import agent_host

from ..support.agent_actor import Chat, fault_launch, real_host
from ..support.agents import AgentSetup, isolated
from ..support.model_server import FakeModel
from ._engine import connected, of, running, until

ROUTE = "console:history"


@pytest.fixture
def model() -> Iterator[FakeModel]:
    with FakeModel() as fake:
        yield fake


def codex_engine(setup: AgentSetup, tmp_path: Path) -> tuple[Engine, EngineAgent]:
    agent = EngineAgent("app-server", real_host(setup, tmp_path))
    engine = Engine(
        tmp_path / "robota.db",
        [agent],
        TaskDefaults(agent="codex", cwd=setup.cwd, permission_mode="bypassPermissions"),
        backoff=FAST_BACKOFF,
    )
    return engine, agent


@asynccontextmanager
async def codex(tmp_path: Path, model: FakeModel) -> AsyncIterator[tuple[Engine, Chat, Recording]]:
    setup = isolated("codex", tmp_path, model.url, model_catalog=True)
    engine, agent = codex_engine(setup, tmp_path)
    notices = Recording()
    engine.connect(ROUTE, notices.add)
    async with running(engine):
        yield engine, Chat(agent.host, "outside", setup.cwd), notices


async def turn(engine: Engine, notices: Recording, text: str) -> TurnFinished:
    count = len(of(notices, TurnFinished))
    engine.tell(ROUTE, UserInput(text))
    finished = (await until(notices, TurnFinished, count + 1, timeout=90))[count]
    assert finished.status == "completed", finished
    return finished


async def reply(engine: Engine, notices: Recording, text: str) -> RouteReply:
    count = len(of(notices, RouteReply))
    engine.tell(ROUTE, UserInput(text))
    return (await until(notices, RouteReply, count + 1, timeout=60))[count]


async def test_sessions_lists_threads_other_clients_started_and_switch_resumes_one(
    tmp_path: Path, model: FakeModel
) -> None:
    async with codex(tmp_path, model) as (engine, outside, notices):
        own = await turn(engine, notices, "remember APPLE")
        await trio.sleep(1.1)  # Codex stamps threads in whole seconds: be newer, not tied
        outside.open()
        opened = await outside.next(SessionOpened, timeout=60)
        outside.prompt("remember PEAR")
        await outside.next(TurnCompleted, timeout=60)

        listing = (await reply(engine, notices, "/sessions")).text
        lines = listing.splitlines()
        assert lines[0].startswith(f"1. {opened.session_id} ") and "external" in lines[0]
        assert "remember PEAR" in lines[0]
        assert lines[1].startswith(f"2. {own.task_id} ") and "<- current" in lines[1]
        assert sum(line[:3] in ("1. ", "2. ", "3. ") for line in lines) == 2, listing

        searched = (await reply(engine, notices, "/sessions PEAR")).text
        assert opened.session_id in searched and own.task_id not in searched

        switched = (await reply(engine, notices, "/switch 1")).text
        assert "switched to task" in switched and opened.session_id in switched
        [_, adopted] = await until(notices, TaskOpened, 2, timeout=60)
        assert (adopted.remote_id, adopted.resumed) == (opened.session_id, True)
        answer = await turn(engine, notices, "HISTORY please")
        assert answer.task_id == adopted.task_id != own.task_id
        assert answer.final_text == "HISTORY: remember PEAR | HISTORY please"

        again = (await reply(engine, notices, "/sessions")).text
        assert "external" not in again, "an adopted thread is listed as robota's task"
        assert again.count(opened.session_id) == 0 and adopted.task_id in again


async def test_reset_forks_the_thread_at_a_turn_and_keeps_the_task(
    tmp_path: Path, model: FakeModel
) -> None:
    async with codex(tmp_path, model) as (engine, _outside, notices):
        first = await turn(engine, notices, "remember ONE")
        await turn(engine, notices, "remember TWO")
        await turn(engine, notices, "remember THREE")
        [opened] = of(notices, TaskOpened)

        listed = (await reply(engine, notices, "/turns")).text.splitlines()
        assert "never reverts local files" in listed[0]
        assert "remember THREE" in listed[1] and listed[1].endswith("<- current")
        assert "remember ONE" in listed[3] and f"/turns reset {first.attempt_id[:8]}" in listed[3]

        done = (await reply(engine, notices, f"/turns reset {first.attempt_id[:8]}")).text
        assert done.startswith(f"reset to turn {first.attempt_id[:8]}"), done
        assert "remember ONE" in done and str(first.remote_turn_id) in done
        answer = await turn(engine, notices, "HISTORY now")
        assert answer.task_id == first.task_id, "the task keeps its id"
        assert answer.final_text == "HISTORY: remember ONE | HISTORY now"

        listed = (await reply(engine, notices, "/turns")).text.splitlines()
        assert "HISTORY now" in listed[1] and listed[1].endswith("<- current")
        assert sum("remember" in line for line in listed) == 3, "later turns stay listed"

        refused = (await reply(engine, notices, "/turns reset nosuchturn")).text
        assert "is no turn of this task" in refused
        shown = (await reply(engine, notices, f"/turns show {first.attempt_id[:8]}")).text
        assert shown.startswith(f"turn {first.attempt_id[:8]} (completed)\n> remember ONE")
        assert shown.endswith(f"\n\n{first.final_text}")

    with closing(open_reader(tmp_path / "robota.db")) as db:
        attempts = {a.prompt: a for a in task_turn_attempts(db, first.task_id)}
        audit = db.execute(
            "SELECT payload_json FROM audit_events WHERE event_type = 'session_reset_to_turn'"
        ).fetchall()
        task_row = db.execute(
            "SELECT remote_id, head_attempt_id FROM tasks WHERE id = ?", (first.task_id,)
        ).fetchone()
    assert attempts["HISTORY now"].parent_id == first.attempt_id
    assert attempts["remember THREE"].parent_id == attempts["remember TWO"].id
    assert attempts["remember ONE"].remote_session_id == opened.remote_id
    assert attempts["HISTORY now"].remote_session_id == task_row[0] != opened.remote_id
    assert task_row[1] == attempts["HISTORY now"].id
    assert len(audit) == 1 and first.attempt_id in audit[0][0]


async def test_reset_and_listing_on_an_acp_agent_say_why_not(tmp_path: Path) -> None:
    async with connected(tmp_path, ROUTE) as (engine, notices):
        engine.tell(ROUTE, UserInput("hello"))
        [finished] = await until(notices, TurnFinished)
        engine.tell(ROUTE, UserInput(f"/turns reset {finished.attempt_id[:8]}"))
        engine.tell(ROUTE, UserInput("/sessions"))
        replies = await until(notices, RouteReply, 2)
    assert "reset needs an App Server agent" in replies[0].text
    assert replies[1].text.startswith(f"1. {finished.task_id} "), replies[1].text


async def test_an_acp_agent_answers_a_listing_with_an_error(tmp_path: Path) -> None:
    """The agents layer: ``ListSessions`` always gets an answer, here the refusal."""
    host = agent_host(fault_launch(tmp_path), acp=True, backoff=FAST_BACKOFF)
    answers = Recording()
    async with supervised([ChildSpec("agent", lambda: host.service, shutdown=15.0)]):
        host.address.tell(ListSessions("r1", answers.add))
        await wait_until(lambda: bool(answers.messages), timeout=20)
    [listed] = answers.messages
    assert isinstance(listed, SessionsListed)
    assert (listed.ref, listed.agent, listed.sessions) == ("r1", "fault", ())
    assert listed.error is not None and "no session list" in listed.error


async def test_model_and_effort_changes_reach_the_next_app_server_turn(
    tmp_path: Path, model: FakeModel
) -> None:
    async with codex(tmp_path, model) as (engine, _outside, notices):
        await turn(engine, notices, "remember ONE")
        before = model.requests[-1].body
        said = (await reply(engine, notices, "/thinking high")).text
        assert said.endswith("(from the next turn, and in forks)"), said
        await reply(engine, notices, "/model fake-model-2")
        await turn(engine, notices, "remember TWO")
        after = model.requests[-1].body
    assert after["model"] == "fake-model-2" != before["model"]
    assert after["reasoning"]["effort"] == "high"
