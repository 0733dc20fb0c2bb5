"""What ``robota mcp serve`` is handed by its command, and what each backend answers.

The command (the CLI) loads the profile, passes the headless trust gate and knows how an
engine is composed and how ``robota task list/status --json`` read the store; it hands those
here as plain values and callables (``ServeSetup``), so this package imports no CLI or host
internals. A backend (``Backend``) is where the served tools act: the running host of the
profile (``_host_backend``), or an engine of this process's own (``_engine_backend``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from ._errors import McpError
from ._tools import RunCall, TaskNewCall

if TYPE_CHECKING:
    from robota.core.config import Config, Profile
    from robota.core.engine import Engine

__all__ = ["Backend", "Progress", "ToolRefused", "RunOutcome", "ServeSetup"]

Progress = Callable[[str], Awaitable[None]]
"""Told a short line whenever the turn moves (a tool started, text came, an approval)."""


class ToolRefused(McpError):
    """The backend refused the call (a task named nowhere, the route's own refusal); the
    message is shown to the MCP client as the tool's error."""


@dataclass(frozen=True, slots=True)
class ServeSetup:
    config: Config
    profile: Profile
    workspace: Path
    """The served workspace (the caller's working folder's)."""
    restricted: bool
    """Every task runs Restricted (``--restricted`` in an untrusted workspace)."""
    open_engine: Callable[[], Engine]
    """An engine for the profile (headless: nobody approves, ``human_approves`` false)."""
    list_tasks: Callable[[bool], list[dict[str, object]]]
    """``robota task list --json`` (``True``: every task); from any thread."""
    task_status: Callable[[str], dict[str, object]]
    """``robota task status TASK --json``; ``LookupError`` with the reason when TASK names no
    one task; from any thread."""
    trusted: Callable[[Path], bool]
    """Whether a folder outside the workspace is trusted (a task may work there)."""
    agent_env: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class RunOutcome:
    task: str
    turn: str | None
    status: str | None
    """``completed``, ``failed``, ``interrupted``; ``None`` when the wait ended first."""
    answer: str | None
    error: str | None = None
    approvals: tuple[Mapping[str, object], ...] = ()


class Backend(Protocol):
    async def new_task(self, call: TaskNewCall) -> str:
        """A new task's id; ``ToolRefused`` with the reason."""
        ...

    async def run(self, call: RunCall, progress: Progress) -> RunOutcome:
        """Run the prompt; cancelling this interrupts the turn."""
        ...

    async def stop(self, task_id: str) -> bool:
        """Interrupt the task's running turn; whether one was stopped."""
        ...
