"""What the route core asks its shell to do, what the shell tells it back, and what it reads.

The core (``RouteCore``) decides; the shell (``ConversationRoute``) performs. Between them:

* **effects**, returned by the core for each message, in the order they are to be performed:
  ``Notify`` a front-end notice, ``Write`` a store op (with what its acknowledgement becomes,
  and what to perform in the writer's thread right after its commit), ``ClaimFinal`` the final
  answer's ledger claim, ``Tell`` / ``OpenAgentSession`` / ``ListAgentSessions`` agent
  requests, ``Running`` the running-attempts set, ``MakeDirectory``, ``Log``;
* **acknowledgements**, the messages the shell tells the route when a write it submitted
  commits or fails (``PromptQueued``, ``AttemptNotRecorded``, ``FinalClaimed``,
  ``QueuedTaken``), built by the effect's ``Ack`` from the write's outcome;
* **reads**, through ``RouteReads``: a port the shell implements over the store's reader.

Why reads are a port and writes are effects: a command needs an answer now (``/switch`` must
know the task it names before it can bind it), and the store's reader answers synchronously in
the route's thread, from committed state; a write is something the route *wants done*, which
the one store writer does later on its own thread, and whose outcome comes back as a message.
A port keeps the core free of the database (a table test hands it a dict), while returning
writes as data is what lets a test read exactly what the route would commit.

Everything here is a frozen dataclass except the port; no module of the core imports I/O.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol

from ..agents import AgentRequest, SessionSpec
from ..store import QueuedPrompt, Task, TurnAttempt, WriteOp
from ._messages import TurnFinished

__all__ = [
    "Ack",
    "AttemptNotRecorded",
    "ClaimFinal",
    "Effect",
    "FinalClaimed",
    "ListAgentSessions",
    "Log",
    "MakeDirectory",
    "Notify",
    "OpenAgentSession",
    "PromptQueued",
    "QueuedTaken",
    "RouteReads",
    "Running",
    "Tell",
    "Write",
]


# -- acknowledgements: what the shell tells the route when a write's outcome is known ---------


@dataclass(frozen=True, slots=True)
class PromptQueued:
    """A prompt was queued as ``prompt_id``, or could not be (``error``)."""

    text: str
    prompt_id: int = 0
    error: BaseException | None = None


@dataclass(frozen=True, slots=True)
class AttemptNotRecorded:
    """A turn's attempt could not be written, so its prompt was never sent."""

    attempt_id: str
    error: BaseException


@dataclass(frozen=True, slots=True)
class FinalClaimed:
    """A final answer's ledger claim committed: ``won`` means it was delivered just now."""

    finished: TurnFinished
    won: bool
    error: BaseException | None = None


@dataclass(frozen=True, slots=True)
class QueuedTaken:
    """The next queued prompt, already recorded as attempt ``attempt_id`` (or none)."""

    prompt: QueuedPrompt | None
    attempt_id: str
    task_id: str
    error: BaseException | None = None


class Ack(Protocol):
    """Turns a write's outcome (its result, or the exception it failed with) into the message
    the route is told, or ``None``: nothing to tell."""

    def message(self, outcome: object) -> object | None: ...


@dataclass(frozen=True, slots=True)
class QueueAck:
    text: str

    def message(self, outcome: object) -> PromptQueued:
        if isinstance(outcome, BaseException):
            return PromptQueued(self.text, error=outcome)
        assert isinstance(outcome, int)
        return PromptQueued(self.text, outcome)


@dataclass(frozen=True, slots=True)
class AttemptAck:
    """Only a failure is told: a committed attempt goes on with the write's ``then``."""

    attempt_id: str

    def message(self, outcome: object) -> AttemptNotRecorded | None:
        if isinstance(outcome, BaseException):
            return AttemptNotRecorded(self.attempt_id, outcome)
        return None


@dataclass(frozen=True, slots=True)
class TakeAck:
    attempt_id: str
    task_id: str

    def message(self, outcome: object) -> QueuedTaken:
        if isinstance(outcome, BaseException):
            return QueuedTaken(None, self.attempt_id, self.task_id, outcome)
        assert outcome is None or isinstance(outcome, QueuedPrompt)
        return QueuedTaken(outcome, self.attempt_id, self.task_id)


# -- effects ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Notify:
    """Tell the route's front end ``notice``."""

    notice: object


@dataclass(frozen=True, slots=True)
class Write:
    """Submit ``op`` to the store writer. ``ack`` makes the route's message of its outcome
    (``None``: nobody waits, a failure is logged); ``then`` is performed in the writer's
    thread right after a successful commit, with no hop through the route's inbox: it holds
    only effects that are safe from any thread (``Running``, ``Notify``, ``Tell``)."""

    op: WriteOp[Any]
    ack: Ack | None = None
    then: tuple[Effect, ...] = ()


@dataclass(frozen=True, slots=True)
class ClaimFinal:
    """Claim ``finished`` in the final-delivery ledger. In the writer's thread after the
    commit: say ``before`` (whatever the claim's outcome), then ``finished`` if the claim won;
    then tell the route ``FinalClaimed``."""

    finished: TurnFinished
    before: tuple[object, ...] = ()


@dataclass(frozen=True, slots=True)
class Tell:
    """Send ``request`` to the agent configured as ``agent``."""

    agent: str
    request: AgentRequest


@dataclass(frozen=True, slots=True)
class OpenAgentSession:
    """Open (or re-spec) task ``task_id``'s session at ``agent``, its notices to this route."""

    agent: str
    task_id: str
    spec: SessionSpec


@dataclass(frozen=True, slots=True)
class ListAgentSessions:
    """Ask ``agent`` for its sessions; it answers this route with ``SessionsListed(ref)``."""

    agent: str
    ref: str
    search: str | None = None
    limit: int = 50


@dataclass(frozen=True, slots=True)
class Running:
    """Add ``attempt_id`` to the engine's running attempts (``running``), or take it out."""

    attempt_id: str
    running: bool


@dataclass(frozen=True, slots=True)
class MakeDirectory:
    """Create ``path`` (and its parents) if it does not exist yet."""

    path: Path


@dataclass(frozen=True, slots=True)
class Log:
    level: Literal["debug", "info", "warning", "error"]
    text: str


Effect = (
    Notify
    | Write
    | ClaimFinal
    | Tell
    | OpenAgentSession
    | ListAgentSessions
    | Running
    | MakeDirectory
    | Log
)


# -- reads ---------------------------------------------------------------------------------------


class RouteReads(Protocol):
    """What the core reads: committed store state, and whether a directory exists. Called in
    the route's thread; every method answers at once (see the module docstring)."""

    def task(self, task_id: str) -> Task | None: ...

    def find_task(self, text: str) -> Sequence[Task]:
        """Tasks whose id starts with, or whose title is, ``text``."""
        ...

    def tasks(self, *, limit: int, search: str | None) -> Sequence[Task]: ...

    def task_with_remote(self, agent: str, remote_id: str) -> Task | None: ...

    def bound_sessions(self, session_ids: Sequence[str]) -> set[tuple[str, str]]:
        """``(agent, session id)`` of those of ``session_ids`` a task is bound to."""
        ...

    def pending_prompts(self) -> Sequence[QueuedPrompt]:
        """This route's queued prompts, in the order they will run."""
        ...

    def head_attempt(self, task: Task) -> TurnAttempt | None: ...

    def find_turn_attempt(self, task_id: str, ref: str) -> Sequence[TurnAttempt]: ...

    def turn_attempts(
        self, task_id: str, *, status: str | None, limit: int
    ) -> Sequence[TurnAttempt]: ...

    def is_dir(self, path: Path) -> bool: ...
