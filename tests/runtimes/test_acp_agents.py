"""The ACP client driving real ACP agents against the fake model.

Core matrix (always): codex-acp, claude-agent-acp. Wide matrix (CI too): gemini, qwen, opencode.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
import trio

from robota.core.events import (
    ApprovalRequested,
    ApprovalResolved,
    RuntimeEvent,
    TextDelta,
    ToolCompleted,
    TurnCompleted,
    TurnStarted,
)
from robota.core.testing import wait_until
from robota.runtimes import (
    AcpClient,
    AgentProcess,
    Connection,
    ImagesUnsupported,
    SessionBusy,
    ShutdownTimings,
    SteerUnsupported,
)

from ..support.agents import AgentSetup, isolated
from ..support.model_server import FakeModel

CORE = ["codex-acp", "claude-agent-acp"]
WIDE = ["gemini", "qwen", "opencode"]
ALL = CORE + WIDE
LOADS = ["codex-acp", "claude-agent-acp", "qwen", "opencode"]  # gemini 0.61's load is broken
# codex-acp offers one way to refuse, "abort" (kind reject_once), and it ends the turn.
DECLINE_ENDS_TURN = {"codex-acp"}


class Recorder:
    def __init__(self) -> None:
        self.events: list[tuple[str, RuntimeEvent]] = []

    def __call__(self, session_id: str, event: RuntimeEvent) -> None:
        self.events.append((session_id, event))

    def of(self, session_id: str) -> list[RuntimeEvent]:
        return [e for s, e in self.events if s == session_id]

    def completed(self, session_id: str, turn_id: str) -> TurnCompleted | None:
        for event in self.of(session_id):
            if isinstance(event, TurnCompleted) and event.turn_id == turn_id:
                return event
        return None

    async def turn_end(self, session_id: str, turn_id: str, timeout: float = 60) -> TurnCompleted:
        await wait_until(lambda: self.completed(session_id, turn_id) is not None, timeout=timeout)
        done = self.completed(session_id, turn_id)
        assert done is not None
        return done

    async def approval(self, session_id: str, timeout: float = 60) -> ApprovalRequested:
        def first() -> ApprovalRequested | None:
            return next((e for e in self.of(session_id) if isinstance(e, ApprovalRequested)), None)

        await wait_until(lambda: first() is not None, timeout=timeout)
        found = first()
        assert found is not None
        return found


@pytest.fixture
def model() -> Iterator[FakeModel]:
    with FakeModel(slow_deltas=100, slow_delay=0.05) as fake:
        yield fake
    assert fake.errors == []


@asynccontextmanager
async def agent(setup: AgentSetup, recorder: Recorder) -> AsyncIterator[AcpClient]:
    process = await AgentProcess.start(
        setup.name,
        [setup.command, *setup.args],
        env=setup.env,
        cwd=setup.cwd,
        timings=ShutdownTimings(eof_grace=0.5, term_grace=2.0),
    )
    assert process.process.stdin is not None and process.process.stdout is not None
    connection = Connection(
        process.process.stdin, process.process.stdout, name=setup.name, jsonrpc_field=True
    )
    client = AcpClient(connection, recorder)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(process.drain_stderr)
        await nursery.start(connection.run)
        try:
            await client.initialize(nursery)
            yield client
        finally:
            await process.shutdown()
            client.close("agent stopped")
            nursery.cancel_scope.cancel()


@pytest.mark.parametrize("name", ALL)
async def test_text_turn(name: str, tmp_path: Path, model: FakeModel) -> None:
    setup = isolated(name, tmp_path, model.url)
    recorder = Recorder()
    async with agent(setup, recorder) as client:
        session = await client.new_session(setup.cwd)
        turn_id = await client.prompt(session.id, "hello from robota")
        with pytest.raises(SessionBusy):
            await client.prompt(session.id, "a second prompt while the first runs")
        with pytest.raises(SteerUnsupported):
            await client.steer(session.id, "more")
        done = await recorder.turn_end(session.id, turn_id)
    assert done.status == "completed", done
    assert done.final_text is not None and "ECHO: hello from robota" in done.final_text
    events = recorder.of(session.id)
    assert events[0] == TurnStarted(turn_id)
    assert any(isinstance(e, TextDelta) for e in events)


@pytest.mark.parametrize("name", ALL)
@pytest.mark.parametrize("decision", ["accept", "decline"])
async def test_tool_turn_with_approval(
    name: str, decision: str, tmp_path: Path, model: FakeModel
) -> None:
    setup = isolated(name, tmp_path, model.url, ask=True)
    recorder = Recorder()
    async with agent(setup, recorder) as client:
        session = await client.new_session(setup.cwd)
        turn_id = await client.prompt(session.id, "SHELL: touch tool-made.txt && echo made")
        approval = await recorder.approval(session.id)
        assert client.decide(approval.approval_id, decision)  # type: ignore[arg-type]
        done = await recorder.turn_end(session.id, turn_id)
    ends = decision == "decline" and name in DECLINE_ENDS_TURN
    assert done.status == ("interrupted" if ends else "completed"), done
    assert ApprovalResolved(approval.approval_id, decision) in recorder.of(session.id)  # type: ignore[arg-type]
    assert (setup.cwd / "tool-made.txt").exists() == (decision == "accept")
    tool = next(
        e
        for e in recorder.of(session.id)
        if isinstance(e, ToolCompleted) and e.tool_id == approval.tool_id
    )
    assert tool.status == ("declined" if decision == "decline" else "completed")


@pytest.mark.parametrize("name", ALL)
async def test_cancel_mid_stream(
    name: str, tmp_path: Path, model: FakeModel, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A stream of 30 s, not the default 3: on a loaded machine an agent may take seconds to
    # pass the cancel on, and a stream that ended first would be a completed turn.
    monkeypatch.setattr(model, "slow_deltas", 600)
    setup = isolated(name, tmp_path, model.url)
    recorder = Recorder()
    async with agent(setup, recorder) as client:
        session = await client.new_session(setup.cwd)
        turn_id = await client.prompt(session.id, "SLOW please")
        await wait_until(
            lambda: any(isinstance(e, TextDelta) for e in recorder.of(session.id)), timeout=60
        )
        await client.cancel(session.id)
        done = await recorder.turn_end(session.id, turn_id, timeout=15)
        assert done.status == "interrupted", done
        follow = await client.prompt(session.id, "after cancel")
        again = await recorder.turn_end(session.id, follow)
    assert again.status == "completed"


@pytest.mark.parametrize("name", LOADS)
async def test_load_in_a_new_process_reaches_the_model_with_the_history(
    name: str, tmp_path: Path, model: FakeModel
) -> None:
    # The catalog keeps codex-acp from prefixing answers with "Model metadata ... not found".
    setup = isolated(name, tmp_path, model.url, model_catalog=True)
    recorder = Recorder()
    async with agent(setup, recorder) as client:
        session = await client.new_session(setup.cwd)
        first = await client.prompt(session.id, "remember PINEAPPLE")
        await recorder.turn_end(session.id, first)
    async with agent(setup, recorder) as client:
        loaded = await client.load_session(session.id, setup.cwd)
        assert loaded is not None
        turn_id = await client.prompt(session.id, "HISTORY please")
        done = await recorder.turn_end(session.id, turn_id)
    assert done.final_text is not None
    assert "remember PINEAPPLE" in done.final_text and "HISTORY please" in done.final_text


@pytest.mark.parametrize("name", ALL)
async def test_model_400_is_a_failed_turn_classified_invalid_request(
    name: str, tmp_path: Path, model: FakeModel
) -> None:
    setup = isolated(name, tmp_path, model.url)
    recorder = Recorder()
    async with agent(setup, recorder) as client:
        session = await client.new_session(setup.cwd)
        turn_id = await client.prompt(session.id, "FAIL400 now")
        done = await recorder.turn_end(session.id, turn_id)
    assert done.status == "failed", done
    assert done.error is not None
    assert (done.error.category, done.error.retryable) == ("invalid_request", False), done.error


async def test_images_are_refused_before_sending_when_not_advertised(
    tmp_path: Path, model: FakeModel
) -> None:
    setup = isolated("claude-agent-acp", tmp_path, model.url)
    recorder = Recorder()
    async with agent(setup, recorder) as client:
        session = await client.new_session(setup.cwd)
        client.capabilities = {**client.capabilities, "promptCapabilities": {"image": False}}
        with pytest.raises(ImagesUnsupported):
            await client.prompt(session.id, "look", [("image/png", "iVBORw0KGgo=")])
        assert client.active_turn(session.id) is None
