"""The route core's tables: a task, a dict-backed read port, counters for ids and clocks, a
route core built from them, and the effects of a kind."""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from robota.core import replace
from robota.core.agents import (
    SessionEvent,
    SessionOpened,
)
from robota.core.engine import (
    AgentEntry,
    Effect,
    IdsAndClocks,
    Restored,
    RouteCore,
    TaskDefaults,
    UserInput,
)
from robota.core.events import TurnStarted
from robota.core.store import (
    QueuedPrompt,
    Task,
    TurnAttempt,
)
from robota.runtimes import acp, app_server


class Nowhere:
    """The core never tells an address itself: its shell does."""

    def tell(self, message: object) -> None:
        raise AssertionError(f"the core told {message!r}")


STEERS = app_server.capabilities


KEY = "console:test"

CWD = Path("/work/project")

WALL = 1_700_000_000.0

CODEX = AgentEntry("codex", "app-server", Nowhere(), STEERS)

QUEUES = acp.capabilities
GEMINI = AgentEntry("gemini", "acp", Nowhere(), QUEUES)


def attempt(attempt_id: str, task_id: str = "t0", **changes: Any) -> TurnAttempt:
    base = TurnAttempt(
        id=attempt_id,
        task_id=task_id,
        route_key=KEY,
        status="completed",
        prompt=f"prompt of {attempt_id}",
        images=(),
        anchor_message_id=None,
        remote_turn_id=f"turn-{attempt_id}",
        retry_count=0,
        recovery_count=0,
        error=None,
        heartbeat_at=None,
        created_at=WALL - 40,
        updated_at=WALL - 30,
        final_text=f"answer of {attempt_id}",
        finished_at=WALL - 30,
        remote_session_id="thread-0",
    )
    return replace(base, **changes)


def task(task_id: str = "t0", agent: str = "codex", **changes: Any) -> Task:
    base = Task(
        id=task_id,
        agent=agent,
        cwd=str(CWD),
        runtime_kind="app-server" if agent == "codex" else "acp",
        remote_id="thread-0",
        title=None,
        model=None,
        effort=None,
        permission_mode="default",
        provider=None,
        forked_from=None,
        fork_turn_id=None,
        developer_instructions=None,
        last_turn_id=None,
        last_turn_status=None,
        created_at=WALL - 100,
        updated_at=WALL - 50,
    )
    return replace(base, **changes)


@dataclass
class Reads:
    """The read port over dicts."""

    tasks_by_id: dict[str, Task] = field(default_factory=dict)
    pending: list[QueuedPrompt] = field(default_factory=list)
    attempts: list[TurnAttempt] = field(default_factory=list)
    dirs: set[Path] = field(default_factory=lambda: {CWD})
    refusals: dict[str, str] = field(default_factory=dict)
    transcripts: dict[str, list[dict[str, object]]] = field(default_factory=dict)
    """Each task's imported transcript not yet primed (``transcript_to_prime``)."""
    """Each task's ``immobile`` answer (a task a handoff moves)."""

    def task(self, task_id: str) -> Task | None:
        return self.tasks_by_id.get(task_id)

    def find_task(self, text: str) -> Sequence[Task]:
        return [t for t in self.tasks_by_id.values() if t.id.startswith(text) or t.title == text]

    def tasks(self, *, limit: int, search: str | None) -> Sequence[Task]:
        found = [t for t in self.tasks_by_id.values() if not search or search in (t.title or "")]
        return sorted(found, key=lambda t: t.updated_at, reverse=True)[:limit]

    def task_with_remote(self, agent: str, remote_id: str) -> Task | None:
        found = (
            t for t in self.tasks_by_id.values() if (t.agent, t.remote_id) == (agent, remote_id)
        )
        return next(found, None)

    def bound_sessions(self, session_ids: Sequence[str]) -> set[tuple[str, str]]:
        return {
            (t.agent, t.remote_id)
            for t in self.tasks_by_id.values()
            if t.remote_id is not None and t.remote_id in session_ids
        }

    def pending_prompts(self) -> Sequence[QueuedPrompt]:
        return list(self.pending)

    def head_attempt(self, task: Task) -> TurnAttempt | None:
        done = [a for a in self.attempts if a.task_id == task.id and a.status == "completed"]
        if task.head_attempt_id is not None:
            done = [a for a in done if a.id == task.head_attempt_id]
        return done[-1] if done else None

    def find_turn_attempt(self, task_id: str, ref: str) -> Sequence[TurnAttempt]:
        return [
            a
            for a in self.attempts
            if a.task_id == task_id and (a.id.startswith(ref) or a.remote_turn_id == ref)
        ]

    def turn_attempts(
        self, task_id: str, *, status: str | None, limit: int
    ) -> Sequence[TurnAttempt]:
        found = [a for a in self.attempts if a.task_id == task_id and status in (None, a.status)]
        return found[::-1][:limit]

    def is_dir(self, path: Path) -> bool:
        return path in self.dirs

    def transcript_to_prime(self, task_id: str) -> Sequence[Mapping[str, object]] | None:
        return self.transcripts.get(task_id)

    def immobile(self, task_id: str) -> str | None:
        return self.refusals.get(task_id)


def ids() -> IdsAndClocks:
    attempts, tasks_, refs = (itertools.count(1) for _ in range(3))
    ticks = itertools.count(0, 0.25)  # each reading of the monotonic clock is 250 ms later
    return IdsAndClocks(
        attempt_id=lambda: f"a{next(attempts)}",
        task_id=lambda: f"t{next(tasks_)}",
        ref=lambda: f"r{next(refs)}",
        monotonic=lambda: next(ticks),
        wall=lambda: WALL,
    )


def route(
    *agents: AgentEntry,
    current: Task | None = None,
    reads: Reads | None = None,
    pending: tuple[int, ...] = (),
    running: TurnAttempt | None = None,
    workspace: Path | None = None,
) -> RouteCore:
    entries = agents or (CODEX,)
    defaults = TaskDefaults(agent=entries[0].name, cwd=CWD, workspace=workspace)
    port = reads if reads is not None else Reads()
    if current is not None:
        port.tasks_by_id.setdefault(current.id, current)
    core = RouteCore(
        KEY,
        {a.name: a for a in entries},
        defaults,
        port,
        restored=Restored(current, pending, running),
        ids=ids(),
    )
    core.start()
    return core


def of(effects: Sequence[Effect], kind: type[Any]) -> list[Any]:
    return [e for e in effects if isinstance(e, kind)]


def running_turn(core: RouteCore, text: str = "work", *, steers: bool = True) -> None:
    """Start a turn on the current task and have the agent start it (turn id ``turn-1``)."""
    state = core.state
    assert state.task is not None
    core.handle(
        SessionOpened(
            state.task.id,
            state.task.remote_id or "thread-0",
            resumed=True,
            capabilities={"steer": steers},
        )
    )
    core.handle(UserInput(text))
    assert state.turn is not None
    core.handle(SessionEvent(state.task.id, TurnStarted("turn-1")))
