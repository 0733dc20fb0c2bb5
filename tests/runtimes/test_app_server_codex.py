"""The App Server client driving the real ``codex app-server`` against the fake model."""

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
    ToolStarted,
    TurnCompleted,
    TurnStarted,
)
from robota.core.testing import wait_until
from robota.runtimes import AgentProcess, AppServerClient, Connection, SteerRejected

from ..support.agents import AgentSetup, isolated
from ..support.model_server import FakeModel


class Recorder:
    def __init__(self) -> None:
        self.events: list[tuple[str, RuntimeEvent]] = []

    def __call__(self, thread_id: str, event: RuntimeEvent) -> None:
        self.events.append((thread_id, event))

    def of(self, thread_id: str) -> list[RuntimeEvent]:
        return [e for t, e in self.events if t == thread_id]

    def completed(self, thread_id: str, turn_id: str) -> TurnCompleted | None:
        for event in self.of(thread_id):
            if isinstance(event, TurnCompleted) and event.turn_id == turn_id:
                return event
        return None

    async def turn_end(self, thread_id: str, turn_id: str, timeout: float = 30) -> TurnCompleted:
        await wait_until(lambda: self.completed(thread_id, turn_id) is not None, timeout=timeout)
        done = self.completed(thread_id, turn_id)
        assert done is not None
        return done


@pytest.fixture
def model() -> Iterator[FakeModel]:
    with FakeModel(slow_deltas=100, slow_delay=0.05) as fake:
        yield fake
    assert fake.errors == []


@pytest.fixture
def setup(tmp_path: Path, model: FakeModel) -> AgentSetup:
    return isolated("codex", tmp_path, model.url)


@asynccontextmanager
async def codex(setup: AgentSetup, recorder: Recorder) -> AsyncIterator[AppServerClient]:
    agent = await AgentProcess.start(
        "codex", [setup.command, *setup.args], env=setup.env, cwd=setup.cwd
    )
    assert agent.process.stdin is not None and agent.process.stdout is not None
    connection = Connection(
        agent.process.stdin, agent.process.stdout, name="codex", jsonrpc_field=False
    )
    client = AppServerClient(connection, recorder)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(agent.drain_stderr)
        await nursery.start(connection.run)
        try:
            await client.initialize(nursery)
            yield client
        finally:
            await agent.shutdown()
            client.close("codex stopped")
            nursery.cancel_scope.cancel()


async def test_text_turn_streams_and_names_the_final_answer(setup: AgentSetup) -> None:
    recorder = Recorder()
    async with codex(setup, recorder) as client:
        assert client.version == "0.171.0"
        thread = await client.start_thread(cwd=str(setup.cwd))
        turn_id = await client.start_turn(thread.id, "hello there")
        done = await recorder.turn_end(thread.id, turn_id)
    assert done.status == "completed"
    assert done.final_text == "ECHO: hello there"
    events = recorder.of(thread.id)
    assert isinstance(events[0], TurnStarted) and events[0].turn_id == turn_id
    streamed = "".join(e.text for e in events if isinstance(e, TextDelta))
    assert streamed == "ECHO: hello there"
    assert done.usage is not None and done.usage.total_tokens


@pytest.mark.parametrize(
    ("decision", "tool_status"), [("accept", "completed"), ("decline", "declined")]
)
async def test_command_approval_is_an_event_and_the_decision_reaches_codex(
    setup: AgentSetup, model: FakeModel, decision: str, tool_status: str
) -> None:
    recorder = Recorder()
    async with codex(setup, recorder) as client:
        thread = await client.start_thread(cwd=str(setup.cwd), permission_mode="default")
        turn_id = await client.start_turn(thread.id, "SHELL: touch made-by-tool.txt && echo done")
        await wait_until(
            lambda: any(isinstance(e, ApprovalRequested) for e in recorder.of(thread.id)),
            timeout=30,
        )
        approval = next(e for e in recorder.of(thread.id) if isinstance(e, ApprovalRequested))
        assert approval.kind == "command"
        assert "touch made-by-tool.txt" in approval.title
        assert client.decide(approval.approval_id, decision)  # type: ignore[arg-type]
        assert not client.decide(approval.approval_id, "accept"), "answered twice"
        done = await recorder.turn_end(thread.id, turn_id)
    assert done.status == "completed"
    events = recorder.of(thread.id)
    assert ApprovalResolved(approval.approval_id, decision) in events  # type: ignore[arg-type]
    tool = next(e for e in events if isinstance(e, ToolCompleted) and e.tool_id == approval.tool_id)
    assert tool.status == tool_status
    assert (setup.cwd / "made-by-tool.txt").exists() == (decision == "accept")
    assert any(isinstance(e, ToolStarted) and e.kind == "command" for e in events)


async def test_interrupt_mid_stream_ends_the_turn_interrupted(setup: AgentSetup) -> None:
    recorder = Recorder()
    async with codex(setup, recorder) as client:
        thread = await client.start_thread(cwd=str(setup.cwd))
        turn_id = await client.start_turn(thread.id, "SLOW please")
        await wait_until(
            lambda: any(isinstance(e, TextDelta) for e in recorder.of(thread.id)), timeout=30
        )
        await client.interrupt(thread.id, turn_id)
        done = await recorder.turn_end(thread.id, turn_id, timeout=10)
    assert done.status == "interrupted"
    assert done.final_text is None


async def test_steer_reaches_the_model_within_the_same_turn(
    setup: AgentSetup, model: FakeModel
) -> None:
    recorder = Recorder()
    async with codex(setup, recorder) as client:
        thread = await client.start_thread(cwd=str(setup.cwd))
        turn_id = await client.start_turn(thread.id, "SLOW first")
        await wait_until(
            lambda: any(isinstance(e, TextDelta) for e in recorder.of(thread.id)), timeout=30
        )
        assert await client.steer(thread.id, turn_id, "HISTORY now") == turn_id
        done = await recorder.turn_end(thread.id, turn_id)
        assert done.status == "completed"
        assert done.final_text == "HISTORY: SLOW first | HISTORY now"
        with pytest.raises(SteerRejected):
            await client.steer(thread.id, turn_id, "too late")


async def test_fork_and_resume_carry_the_conversation(setup: AgentSetup) -> None:
    recorder = Recorder()
    async with codex(setup, recorder) as client:
        thread = await client.start_thread(cwd=str(setup.cwd))
        first = await client.start_turn(thread.id, "remember PINEAPPLE")
        await recorder.turn_end(thread.id, first)
        fork = await client.fork_thread(thread.id)
        assert fork.id != thread.id
        forked_turn = await client.start_turn(fork.id, "HISTORY on the fork")
        forked = await recorder.turn_end(fork.id, forked_turn)
    assert forked.final_text == "HISTORY: remember PINEAPPLE | HISTORY on the fork"

    async with codex(setup, recorder) as client:  # a new process
        resumed = await client.resume_thread(thread.id)
        assert resumed.id == thread.id
        turn_id = await client.start_turn(thread.id, "HISTORY after resume")
        done = await recorder.turn_end(thread.id, turn_id)
    assert done.final_text == "HISTORY: remember PINEAPPLE | HISTORY after resume"


@pytest.mark.parametrize(
    ("prompt", "category", "retryable"),
    [
        ("FAIL400 now", "invalid_request", False),
        ("FAIL500 now", "upstream_5xx", True),
        ("CUTSTREAM now", "stream_interrupted", True),
    ],
)
async def test_model_failures_end_as_failed_turns_with_the_right_class(
    setup: AgentSetup, prompt: str, category: str, retryable: bool
) -> None:
    recorder = Recorder()
    async with codex(setup, recorder) as client:
        thread = await client.start_thread(cwd=str(setup.cwd))
        turn_id = await client.start_turn(thread.id, prompt)
        done = await recorder.turn_end(thread.id, turn_id)
    assert done.status == "failed"
    assert done.error is not None
    assert (done.error.category, done.error.retryable) == (category, retryable), done.error


async def test_the_process_going_away_fails_the_turn_and_cancels_approvals(
    setup: AgentSetup,
) -> None:
    recorder = Recorder()
    async with codex(setup, recorder) as client:
        thread = await client.start_thread(cwd=str(setup.cwd), permission_mode="default")
        turn_id = await client.start_turn(thread.id, "SHELL: touch never.txt")
        await wait_until(
            lambda: any(isinstance(e, ApprovalRequested) for e in recorder.of(thread.id)),
            timeout=30,
        )
    # Leaving the block killed the process: the approval resolved to cancel, the turn failed.
    events = recorder.of(thread.id)
    approval = next(e for e in events if isinstance(e, ApprovalRequested))
    assert ApprovalResolved(approval.approval_id, "cancel", by="runtime") in events
    done = recorder.completed(thread.id, turn_id)
    assert done is not None and done.status == "failed"
    assert done.error is not None and done.error.category == "agent_exited"
