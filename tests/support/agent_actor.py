"""Driving one agent actor as a route would: a launch of ``fault_agent.py`` (the ACP agent that
misbehaves on request) or of a real installed agent, its process ids, and ``Chat``, which
speaks ``robota.core.agents`` messages to it and collects what comes back."""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, TypeVar

from robota.core import AgentHost, AgentLaunch, ChildSpec
from robota.core.agents import (
    OpenSession,
    SessionEvent,
    SessionSpec,
    StartTurn,
    TurnAccepted,
)
from robota.core.events import (
    TextDelta,
    TurnCompleted,
)
from robota.core.testing import FAST_BACKOFF, Recording, supervised, wait_until
from robota.runtimes import ShutdownTimings, acp, agent_host

from .agents import AgentSetup

FAULT_AGENT = Path(__file__).resolve().with_name("fault_agent.py")


T = TypeVar("T")


def fault_launch(tmp_path: Path, **env: str) -> AgentLaunch:
    return AgentLaunch(
        name="fault",
        kind="acp",
        command=sys.executable,
        args=(str(FAULT_AGENT),),
        env={
            "FAULT_AGENT_PIDS": str(tmp_path / "pids"),
            "FAULT_AGENT_STATE": str(tmp_path / "state"),
            **env,
        },
        home=tmp_path / "home",
        config_path=tmp_path / "config.yaml",
    )


def pids(tmp_path: Path) -> list[int]:
    path = tmp_path / "pids"
    return [int(line) for line in path.read_text().split()] if path.exists() else []


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie is dead for our purpose; only /proc tells them apart.
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return False
    return "\nState:\tZ" not in status


class Chat:
    """One session of the agent, seen as a route sees it: requests out, notices in."""

    def __init__(self, host: AgentHost, key: str, cwd: Path) -> None:
        self.host = host
        self.key = key
        self.cwd = cwd
        self.notices = Recording()
        self._seen = 0

    def open(self, **spec: Any) -> None:
        self.host.address.tell(OpenSession(self.key, SessionSpec(self.cwd, **spec), self.add))

    def add(self, notice: object) -> None:
        self.notices.add(notice)

    def prompt(self, text: str) -> None:
        self.host.address.tell(StartTurn(self.key, text))

    async def next(
        self, kind: type[T], where: Callable[[T], bool] = lambda _: True, timeout: float = 15.0
    ) -> T:
        """The next notice of ``kind`` (events unwrapped) after the last one returned."""

        def find() -> T | None:
            for index in range(self._seen, len(self.notices.messages)):
                notice = self.notices.messages[index]
                item = notice.event if isinstance(notice, SessionEvent) else notice
                if isinstance(item, kind) and where(item):
                    self._seen = index + 1
                    return item
            return None

        found: list[T] = []

        def ready() -> bool:
            item = find()
            if item is not None:
                found.append(item)
            return bool(found)

        await wait_until(
            ready,
            timeout=timeout,
            what=lambda: f"no {kind.__name__} in {self.notices.messages[self._seen :]!r}"[:2000],
        )
        return found[0]

    def text(self) -> str:
        return "".join(
            n.event.text
            for n in self.notices.messages
            if isinstance(n, SessionEvent) and isinstance(n.event, TextDelta)
        )

    async def turn(self, text: str) -> TurnCompleted:
        self.prompt(text)
        await self.next(TurnAccepted)
        return await self.next(TurnCompleted)


@asynccontextmanager
async def agent(
    launch: AgentLaunch, *, handshake_timeout: float = 10.0
) -> AsyncIterator[AgentHost]:
    host = acp.host(launch, backoff=FAST_BACKOFF, handshake_timeout=handshake_timeout)
    async with supervised([ChildSpec("agent", lambda: host.service, shutdown=15.0)]):
        yield host


def real_host(setup: AgentSetup, tmp_path: Path) -> AgentHost:
    """The agent host robota builds for ``setup``, with short shutdown grace for tests."""
    launch = AgentLaunch(
        name=setup.name,
        kind="app-server" if setup.name == "codex" else "acp",
        command=setup.command,
        args=setup.args,
        home=tmp_path / "robota-home",
        config_path=tmp_path / "robota-home" / "config.yaml",
        cwd=setup.cwd,
    )
    return agent_host(
        launch,
        acp=setup.name != "codex",
        backoff=FAST_BACKOFF,
        environ=setup.env,
        timings=ShutdownTimings(eof_grace=0.5, term_grace=2.0),
    )
