"""One face for both protocol clients, so the process service never asks which one it drives.

A ``SessionDriver`` wraps an ``AppServerClient`` (``_app_server_driver``) or an ``AcpClient``
(``_acp_driver``) on one connection and offers what the process service needs: open (or resume)
a session from a ``SessionSpec``, start, steer and interrupt turns, answer approvals, close.
Protocol differences become outcomes the session table understands: ``SteerRefused`` for an ACP
steer or a steer that lost the race with the turn's end, ``PromptRefused`` for a busy session or
images the agent cannot take.

Each driver lives in its own module with its client, above this one (it imports this face's
types, never the other way round), and ``_agent.driver_factory``'s factory loads it when the
first process of that protocol starts: a ``robota -p`` with Codex never imports the ACP client,
its file and terminal host, or its event map, and the other way round
(tests/cli/test_import_budget.py).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Literal, Protocol

import trio

from robota.core import AgentError
from robota.core.agents import AgentSessionInfo, SessionSpec
from robota.core.events import ApprovalDecision, RuntimeEvent

from ._approvals import DecidedBy
from ._jsonrpc import Connection

__all__ = [
    "DriverFactory",
    "EventSink",
    "PromptRefused",
    "SessionDriver",
    "SessionRefused",
    "SteerRefusedError",
]

EventSink = Callable[[str, RuntimeEvent], None]


class SteerRefusedError(AgentError):
    """The text did not reach a running turn."""

    def __init__(self, reason: Literal["ended", "unsupported"], message: str) -> None:
        self.reason: Literal["ended", "unsupported"] = reason
        super().__init__(message)


class PromptRefused(AgentError):
    """The prompt was not sent."""

    def __init__(self, reason: Literal["busy", "images_unsupported"], message: str) -> None:
        self.reason: Literal["busy", "images_unsupported"] = reason
        super().__init__(message)


class SessionRefused(AgentError):
    """The agent cannot open the session as asked (say, a fork on an agent that has none)."""


class SessionDriver(Protocol):
    version: str | None

    @property
    def capabilities(self) -> Mapping[str, object]: ...

    async def initialize(self, nursery: trio.Nursery) -> str | None: ...

    async def open(self, spec: SessionSpec, resume_id: str | None) -> tuple[str, bool]:
        """Open a session; resume ``resume_id`` when given and possible. Returns the session
        id and whether it was resumed."""
        ...

    def claim(self, session_id: str, spec: SessionSpec) -> None:
        """A session opened ahead (``_spare_sessions``) now belongs to ``spec``'s task: what
        ``open`` would have tied to the task is tied now."""
        ...

    async def start_turn(
        self, session_id: str, text: str, images: Sequence[Path], spec: SessionSpec
    ) -> str:
        """Start a turn; where the protocol takes them per turn, ``spec``'s model and effort
        apply from this turn on (App Server); elsewhere they apply when a session opens."""
        ...

    async def steer(self, session_id: str, expected_turn_id: str, text: str) -> str: ...

    async def interrupt(self, session_id: str) -> None: ...

    def decide(
        self, approval_id: str, decision: ApprovalDecision, *, by: DecidedBy = "user"
    ) -> bool: ...

    async def close_session(self, session_id: str) -> None: ...

    async def list_sessions(self, *, search: str | None, limit: int) -> list[AgentSessionInfo]:
        """The agent's own sessions, most recent first; ``SessionRefused`` when it has no list
        robota reads."""
        ...

    def close(self, reason: str) -> None: ...


DriverFactory = Callable[[Connection, EventSink], SessionDriver]
