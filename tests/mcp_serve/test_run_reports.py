"""A ``robota_run`` through the profile's running host reports what one on the process's own
engine reports (each test runs both ways): the turn's real progress (its start, its tools,
its streamed answer, its end) as MCP ``notifications/progress``, the approvals the headless
policy decided in the result, and the client's cancellation interrupts the turn where it runs.
Driven by the official ``mcp`` client over stdio, on codex (App Server) and claude-agent-acp
(ACP) against the fake model."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path

import pytest
import trio

from robota.core.config import Profile

from ..support.host import agent_name, host_process, sandboxed
from ..support.model_server import FakeModel
from ..support.processes import processes_with_home_under
from ..support.robota import Robota
from ._client import client, settled

AGENTS = ["codex", "claude-agent-acp"]
WAYS = ["host", "engine"]
"""Through the profile's running host, or on ``robota mcp serve``'s own engine (none runs)."""


def backend(way: str, robota: Robota, profile: Profile) -> AbstractContextManager[object]:
    return host_process(robota, profile) if way == "host" else nullcontext()


@pytest.fixture
def model() -> Iterator[FakeModel]:
    with FakeModel(slow_deltas=400, slow_delay=0.05) as fake:
        yield fake


@pytest.mark.parametrize("way", WAYS)
@pytest.mark.parametrize("agent", AGENTS)
async def test_a_run_reports_its_progress_and_approvals(
    short_root: Path, model: FakeModel, agent: str, way: str
) -> None:
    robota, profile = sandboxed(short_root, model, agent)
    with backend(way, robota, profile):
        async with client(robota) as session:
            moves: list[str | None] = []

            async def progress(_done: float, _total: float | None, message: str | None) -> None:
                moves.append(message)

            shell = {"prompt": "SHELL: touch made.txt && echo made", "agent": agent_name(agent)}
            ran = await session.call_tool("robota_run", shell, progress_callback=progress)
            assert not ran.is_error, ran.content
            run = ran.structured_content
            # Nobody approves, through the host as on the own engine: the headless policy
            # declines, and the result says so.
            approvals = run["approvals"]
            assert [(a["decision"], a["by"]) for a in approvals] == [("decline", "policy")]
            assert approvals[0]["id"]
            # The turn's own moves, not a timer's ticks.
            assert moves[0] == "turn started", moves
            assert "approval decline by policy" in moves, moves
            assert moves[-1] == "turn completed", moves
            assert not any(m and m.startswith("running (") for m in moves), moves
            assert not (robota.root / "made.txt").exists()
            status = await session.call_tool("robota_task_status", {"task": run["task"]})
            assert status.structured_content["agent"] == agent_name(agent)  # the one asked for

            moves.clear()
            again = await session.call_tool(
                "robota_run",
                {"prompt": "remember pears", "task": run["task"]},
                progress_callback=progress,
            )
            assert again.structured_content["answer"] == "ECHO: remember pears"
            assert again.structured_content["approvals"] == []
            assert moves[0] == "turn started" and moves[-1] == "turn completed", moves
            assert any(m and m.startswith("answer: ") for m in moves), moves
    assert processes_with_home_under(short_root / "agents") == []


@pytest.mark.parametrize("way", WAYS)
@pytest.mark.parametrize("agent", AGENTS)
async def test_a_cancelled_run_interrupts_its_turn(
    short_root: Path, model: FakeModel, agent: str, way: str
) -> None:
    robota, profile = sandboxed(short_root, model, agent)
    with backend(way, robota, profile):
        async with client(robota) as session:
            task = (await session.call_tool("robota_task_new", {})).structured_content["task"]
            moves: list[str | None] = []
            with trio.move_on_after(120) as call:

                async def progress(_done: float, _total: float | None, message: str | None) -> None:
                    moves.append(message)
                    if message and message.startswith("answer: "):
                        call.cancel()  # the answer streams: the turn runs in the host

                await session.call_tool(
                    "robota_run", {"prompt": "SLOW", "task": task}, progress_callback=progress
                )
            assert call.cancelled_caught and moves[0] == "turn started", moves
            # The client's cancellation reached where the turn runs: it ends interrupted.
            status = await settled(session, task)
            assert status["last_turn"]["status"] == "interrupted"
            # The task goes on: the next run on it answers.
            after = await session.call_tool("robota_run", {"prompt": "after", "task": task})
            assert after.structured_content["answer"] == "ECHO: after"
    assert processes_with_home_under(short_root / "agents") == []
