"""What every route of one engine shares: the store, the agents, the front ends, the defaults.

One ``EngineContext`` is built per engine and handed to each route actor it activates. Its parts
are thread-safe: routes run on their own threads and front ends connect from theirs.
"""

from __future__ import annotations

import logging
import os
import random
import secrets
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from .._capabilities import AgentCapabilities
from ..agents import PermissionMode
from ..kernel import Mailbox
from ..store import ReaderPool, StoreClient
from ._messages import TaskOpened

__all__ = [
    "AgentEntry",
    "EngineContext",
    "Outputs",
    "RunningAttempts",
    "TaskDefaults",
    "new_attempt_id",
    "new_task_id",
]

logger = logging.getLogger("robota.core.engine")


@dataclass(frozen=True, slots=True)
class AgentEntry:
    """A configured agent as routes reach it."""

    name: str
    kind: str
    """The runtime plugin's kind (stored with tasks, shown; never decided on)."""
    address: Mailbox
    capabilities: AgentCapabilities = field(default_factory=AgentCapabilities)
    """What the agent's runtime plugin declares it can do; its sessions refine it."""


@dataclass(frozen=True, slots=True)
class TaskDefaults:
    agent: str
    cwd: Path
    permission_mode: PermissionMode = "default"
    model: str | None = None
    workspace: Path | None = None
    """Where projectless tasks (``/new --nodir``) get a per-date folder."""


class Outputs:
    """Which front end hears which route: ``deliver`` callables by route key.

    A route with no front end connected drops what it says (and logs it at debug): its state is
    in the store, and the front end that connects later reads it from there.

    Every notice passes here, so this is also where each agent's protocol-reported version is
    remembered, from the ``TaskOpened`` of any route (``Engine.agent_version``: what a host's
    status and a team's notes show), whoever listens to that route.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_route: dict[str, Callable[[object], None]] = {}
        self.agent_versions: dict[str, str] = {}

    def connect(self, route_key: str, deliver: Callable[[object], None]) -> None:
        with self._lock:
            self._by_route[route_key] = deliver

    def disconnect(self, route_key: str) -> None:
        with self._lock:
            self._by_route.pop(route_key, None)

    def deliver(self, route_key: str, notice: object) -> None:
        if isinstance(notice, TaskOpened) and notice.agent_version:
            self.agent_versions[notice.agent] = notice.agent_version
        with self._lock:
            deliver = self._by_route.get(route_key)
        if deliver is None:
            logger.debug("route %s: no front end for %s", route_key, type(notice).__name__)
            return
        try:
            deliver(notice)
        except Exception:
            logger.exception("route %s: the front end's deliver raised", route_key)


class RunningAttempts:
    """The turn attempts running in this engine: for the heartbeat that keeps them fresh, and
    for a route that crashed or passivated mid-turn to take its turn back."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._ids: set[str] = set()

    def add(self, attempt_id: str) -> None:
        with self._lock:
            self._ids.add(attempt_id)

    def discard(self, attempt_id: str) -> None:
        with self._lock:
            self._ids.discard(attempt_id)

    def __contains__(self, attempt_id: object) -> bool:
        with self._lock:
            return attempt_id in self._ids

    def snapshot(self) -> list[str]:
        with self._lock:
            return sorted(self._ids)


@dataclass(frozen=True, eq=False)
class EngineContext:
    store: StoreClient
    db_path: Path
    agents: Mapping[str, AgentEntry]
    defaults: TaskDefaults
    outputs: Outputs
    route: Callable[[str, object], None]
    """Tell a route (activating it when passive): what agents deliver through."""
    readers: ReaderPool
    """The store readers every route borrows for its reads (one each would cost a host with
    100 active routes 14 MB)."""
    human_approves: bool | Callable[[str], bool] = True
    """Whether a person answers the approvals of a route's sessions (else policy declines),
    for every route or by route key (a host: chats yes, its unattended ``cli:`` routes no)."""
    restricted: Callable[[Path], bool] | None = None
    """Whether a session opened in a directory runs Restricted (permission mode ``plan``
    whatever the task says; the turn's ``TurnBegan.restricted`` says so): the workspace
    trust decision, asked by the route each time it opens a session. ``None``: never."""
    clock: Callable[[], float] = time.time
    running: RunningAttempts = field(default_factory=RunningAttempts)
    write_timeout: float = 10.0


def new_task_id() -> str:
    """A task's id: 12 hex digits, short enough to type, random enough not to collide."""
    return secrets.token_hex(6)


_ATTEMPT_IDS = random.Random(os.urandom(32))
"""Turn ids need to be unique, not secret (they are no credentials), and the operating system's
generator costs a system call per id (17 µs on this machine, on every turn's critical path):
seeded once from it, this one is a fraction of a microsecond and as unlikely to collide."""


def new_attempt_id() -> str:
    """A turn attempt's id: 32 hex digits, as a random UUID's would be."""
    return f"{_ATTEMPT_IDS.getrandbits(128):032x}"
