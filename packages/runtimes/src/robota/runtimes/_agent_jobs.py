"""The messages between an agent's two halves: jobs for the process, reports for the actor.

The actor (a pykka thread, holding the session table) and the process service (a trio task,
owning the agent process) share nothing but these small frozen dataclasses. Jobs carry what a
*new* process would need to carry them out (the session's spec and the agent's last known
session id), because a job may outlive the process it was meant for: it then runs in the next
one, which first resumes the session.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from robota.core.agents import (
    AgentFailure,
    AgentSessionInfo,
    SessionSpec,
    Steered,
    SteerRefused,
    TurnAccepted,
    TurnRefused,
)
from robota.core.events import ApprovalDecision, RuntimeEvent

from ._approvals import DecidedBy

__all__ = [
    "Bind",
    "Decide",
    "Interrupt",
    "Job",
    "ListJob",
    "Listed",
    "Notice",
    "Opened",
    "ProcessDown",
    "ProcessUp",
    "Prompt",
    "Release",
    "Steer",
    "Update",
]

# -- jobs: actor to process ----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Bind:
    """Open the session in the current process (resuming ``resume_id`` when given)."""

    key: str
    spec: SessionSpec
    resume_id: str | None


@dataclass(frozen=True, slots=True)
class Prompt:
    key: str
    spec: SessionSpec
    resume_id: str | None
    text: str
    images: tuple[Path, ...]


@dataclass(frozen=True, slots=True)
class Steer:
    key: str
    expected_turn_id: str
    text: str


@dataclass(frozen=True, slots=True)
class Interrupt:
    key: str


@dataclass(frozen=True, slots=True)
class Decide:
    key: str
    approval_id: str
    decision: ApprovalDecision
    by: DecidedBy = "user"


@dataclass(frozen=True, slots=True)
class Release:
    key: str


@dataclass(frozen=True, slots=True)
class ListJob:
    """List the agent's sessions; answered ``Listed``. ``key`` is the listing's own queue key,
    so a slow listing never holds up a session's jobs."""

    ref: str
    search: str | None
    limit: int

    @property
    def key(self) -> str:
        return f"list:{self.ref}"


Job = Bind | Prompt | Steer | Interrupt | Decide | Release | ListJob

# -- reports: process to actor -------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ProcessUp:
    generation: int
    version: str | None
    capabilities: Mapping[str, object] = field(compare=False)


@dataclass(frozen=True, slots=True)
class ProcessDown:
    generation: int
    reason: str


@dataclass(frozen=True, slots=True)
class Opened:
    generation: int
    key: str
    session_id: str
    resumed: bool


@dataclass(frozen=True, slots=True)
class Update:
    """A runtime event of the session bound to ``key``."""

    key: str
    event: RuntimeEvent


@dataclass(frozen=True, slots=True)
class Listed:
    ref: str
    sessions: tuple[AgentSessionInfo, ...]
    error: str | None = None


@dataclass(frozen=True, slots=True)
class Notice:
    """An answer to a job, already in the words routes understand."""

    notice: TurnAccepted | TurnRefused | Steered | SteerRefused | AgentFailure
