"""The agent actor driving real agents: a turn, the agent killed mid-turn, the session resumed.

One App Server agent (codex) and the ACP agents of the core matrix, each against the fake model,
through the same ``robota.core.agents`` messages a route sends. The kill is a real SIGKILL of
the agent process during a slow stream; the fake model's ``HISTORY`` answer proves that the new
process resumed the conversation rather than starting a blank one.
"""

from __future__ import annotations

import os
import signal
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

from robota.core import AgentHost, ChildSpec
from robota.core.agents import SessionOpened, TurnAccepted
from robota.core.events import TextDelta, TurnCompleted
from robota.core.testing import supervised, wait_until

from ..support.agent_actor import Chat, alive, real_host
from ..support.agents import AgentSetup, isolated
from ..support.model_server import FakeModel

AGENTS = ["codex", "codex-acp", "claude-agent-acp"]


@pytest.fixture
def model() -> Iterator[FakeModel]:
    with FakeModel(slow_deltas=200, slow_delay=0.05) as fake:
        yield fake


@asynccontextmanager
async def real_agent(setup: AgentSetup, tmp_path: Path) -> AsyncIterator[AgentHost]:
    host = real_host(setup, tmp_path)
    async with supervised([ChildSpec("agent", lambda: host.service, shutdown=15.0)]):
        yield host


def agent_children(command: str) -> list[int]:
    """Pids of this test process's children running ``command`` (the agent leaders)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        if ppid == os.getpid() and any(os.fsencode(command) in part for part in cmdline):
            found.append(int(entry.name))
    return found


@pytest.mark.parametrize("name", AGENTS)
async def test_a_killed_agent_fails_its_turn_and_the_next_process_resumes_the_session(
    name: str, tmp_path: Path, model: FakeModel
) -> None:
    setup = isolated(name, tmp_path, model.url, model_catalog=True)
    async with real_agent(setup, tmp_path) as host:
        chat = Chat(host, "route", setup.cwd)
        chat.open()
        first = await chat.next(SessionOpened, timeout=60)
        done = await chat.turn("remember PINEAPPLE")
        assert done.status == "completed", done
        chat.prompt("SLOW count to two hundred")
        await chat.next(TurnAccepted, timeout=60)
        await chat.next(TextDelta, lambda d: "slow" in d.text, timeout=60)
        (pid,) = agent_children(setup.command)
        os.kill(pid, signal.SIGKILL)
        failed = await chat.next(TurnCompleted, timeout=30)
        assert failed.status == "failed"
        assert failed.error is not None and failed.error.category == "agent_exited"
        assert "exit code -9" in failed.error.message
        chat.prompt("HISTORY after the crash")
        reopened = await chat.next(SessionOpened, timeout=60)
        assert (reopened.session_id, reopened.resumed, reopened.restarted) == (
            first.session_id,
            True,
            True,
        )
        answer = await chat.next(TurnCompleted, timeout=60)
        assert answer.status == "completed", answer
        assert answer.final_text is not None
        assert answer.final_text.startswith("HISTORY: remember PINEAPPLE | ")
        assert answer.final_text.endswith("HISTORY after the crash")
        (second,) = agent_children(setup.command)
        assert second != pid
    await wait_until(lambda: not alive(second))
    assert agent_children(setup.command) == []
