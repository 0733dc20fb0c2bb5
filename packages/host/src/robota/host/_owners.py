"""One owner per task: the process that drives a task, and what another one does about it.

A task is driven by one process at a time, recorded in the store (``task_owners``, with its
generation: ``robota.core.store.ClaimTask``): the host, or the background session (a daemon is
one) that made it, or an interactive terminal that took it up (``TERMINAL_KIND``). A session
claims its task before it publishes its registration; the host claims a task the first time it
drives one through its desk (``task send | stop | queue | rename``); a terminal when it resumes
one or binds one (``_terminal_owner``).

What the host's desk does with a request for a task, by ``ownership`` (pure, a table tests it):

* ``Free`` (nobody owns it) or ``Gone`` (its owner's process ended: its pid is gone, or is
  another process start): the host claims it (a takeover names the generation it found gone,
  so of two processes racing for it one wins) and drives it as before;
* ``Mine``: drives it;
* ``Theirs`` (a live session or terminal owns it): a ``task send`` is passed to a session over
  its control socket (``session.send`` with the session's registration generation), so its
  turn runs in the session, on the session's agent, and its answer comes back as the host's
  own reply (with ``owner`` naming the session); a terminal has no socket, so there it is
  refused as any other request is (``owned``, naming the owner).

Another host is never a live owner: one host runs per profile (its lock), so a row naming a
host that is not this one is a host that ended.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import trio

from robota.core.control import (
    ControlClient,
    ControlError,
    HandlerError,
    HostRefused,
    own_process_start,
    process_start_ticks,
)
from robota.core.store import ClaimTask, TaskOwner, task_owner

from ._requests import SEND_WAIT, TaskSend
from ._session_requests import SESSION_KIND

if TYPE_CHECKING:
    from robota.core.store import StoreClient

    from ._desk_reads import DeskReads

__all__ = [
    "HOST_OWNER",
    "TERMINAL_KIND",
    "Free",
    "Gone",
    "Mine",
    "Owner",
    "Ownership",
    "TaskOwners",
    "Theirs",
    "describe",
    "ownership",
]

logger = logging.getLogger("robota.host")

HOST_OWNER = "host"
TERMINAL_KIND = "tui"
"""The interactive terminal as an owner (``tui:<hex>``, its route's key), which runs its engine
in its own process (``_terminal_owner``): it has no control socket, so what would
be passed to it is refused naming it."""
CLAIM_TIMEOUT = 10.0
FORWARD_MARGIN = 10.0
"""Seconds a forwarded ``task send --wait`` may take beyond its own wait (the session's reply
travelling back)."""


@dataclass(frozen=True, slots=True)
class Owner:
    """A process as an owner: what ``ClaimTask`` records of it."""

    owner: str
    pid: int
    process_start: int | None
    socket: str
    token: str = ""

    @classmethod
    def this_process(cls, owner: str, socket: Path, token: str = "") -> Owner:
        return cls(owner, os.getpid(), own_process_start(), str(socket), token)

    def claim(self, task_id: str, replaces: int | None = None) -> ClaimTask:
        return ClaimTask(
            task_id,
            self.owner,
            self.pid,
            self.process_start,
            self.socket,
            self.token,
            replaces=replaces,
        )

    def is_(self, row: TaskOwner) -> bool:
        return (row.owner, row.pid, row.process_start) == (
            self.owner,
            self.pid,
            self.process_start,
        )


@dataclass(frozen=True, slots=True)
class Free:
    """Nobody owns the task."""


@dataclass(frozen=True, slots=True)
class Mine:
    """This process owns it."""


@dataclass(frozen=True, slots=True)
class Theirs:
    """Another live process owns it."""

    row: TaskOwner


@dataclass(frozen=True, slots=True)
class Gone:
    """Its owner's process ended: take it over (``replaces`` its generation)."""

    row: TaskOwner


Ownership = Free | Mine | Theirs | Gone


def ownership(row: TaskOwner | None, me: Owner, *, owner_runs: bool) -> Ownership:
    """What ``me`` may do with a task whose owner row is ``row``; ``owner_runs``: that row's
    process (pid and process start) still runs."""
    if row is None:
        return Free()
    if me.is_(row):
        return Mine()
    if owner_runs and row.owner != HOST_OWNER:
        return Theirs(row)
    return Gone(row)


def runs(row: TaskOwner) -> bool:
    """Whether the owner row's process still runs: its pid, with the same process start."""
    return row.process_start is not None and process_start_ticks(row.pid) == row.process_start


def is_terminal(row: TaskOwner) -> bool:
    """Whether ``row``'s owner is an interactive terminal (``TERMINAL_KIND``)."""
    return row.owner.partition(":")[0] == TERMINAL_KIND


def describe(row: TaskOwner) -> str:
    """The owner as a person reads it: ``background session ID (pid N)``, ``host (pid N)``."""
    kind, _, name = row.owner.partition(":")
    if kind == SESSION_KIND:
        return f"background session {name} (pid {row.pid})"
    if kind == TERMINAL_KIND:
        return f"robota's terminal UI (pid {row.pid})"
    return f"{row.owner} (pid {row.pid})"


class TaskOwners:
    """The host's side of task ownership (see the module docstring)."""

    def __init__(self, me: Owner, store: StoreClient, reads: DeskReads) -> None:
        self.me = me
        self.store = store
        self.reads = reads

    async def decide(self, task_id: str) -> Ownership:
        row = await self.reads.query(lambda db: task_owner(db, task_id))
        owner_runs = row is not None and await trio.to_thread.run_sync(runs, row)
        return ownership(row, self.me, owner_runs=owner_runs)

    async def other(self, task_id: str) -> TaskOwner | None:
        """The live process other than this one that owns ``task_id``, if one does."""
        decided = await self.decide(task_id)
        return decided.row if isinstance(decided, Theirs) else None

    async def take(self, task_id: str) -> TaskOwner | None:
        """Own ``task_id`` unless another live process does; that process's row, or ``None``
        when this process owns it now."""
        decided = await self.decide(task_id)
        if isinstance(decided, Mine):
            return None
        if isinstance(decided, Theirs):
            return decided.row
        replaces = decided.row.generation if isinstance(decided, Gone) else None
        if isinstance(decided, Gone):
            logger.info(
                "task %s: its owner %s is gone; taking it over", task_id, describe(decided.row)
            )
        claimed = await self.store.write(self.me.claim(task_id, replaces), timeout=CLAIM_TIMEOUT)
        return None if self.me.is_(claimed) else claimed

    def refuse(self, row: TaskOwner, what: str) -> HandlerError:
        # A terminal is reached only at its own screen; a session also by attaching to it.
        reached = "at that terminal" if is_terminal(row) else "(robota session attach)"
        return HandlerError(
            "owned",
            f"task {row.task_id} is driven by {describe(row)}; {what} goes to that process "
            f"{reached} or after it ended",
            "task",
        )

    async def forward_send(self, row: TaskOwner, request: TaskSend) -> dict[str, object]:
        """``request`` passed to the session that owns its task; the session's reply, with
        ``owner`` naming it."""
        if is_terminal(row):  # no control socket to pass it over
            raise self.refuse(row, "task send")
        wait = SEND_WAIT if request.timeout is None else request.timeout
        fields = {
            "generation": row.token,
            "text": request.text,
            "wait": request.wait,
            "timeout": request.timeout,
        }

        def call() -> object:
            with ControlClient(Path(row.socket), timeout=wait + FORWARD_MARGIN) as client:
                return client.call("session.send", fields)

        try:
            reply = await trio.to_thread.run_sync(call)
        except HostRefused as refused:
            raise HandlerError(refused.code, f"{describe(row)}: {refused}") from None
        except ControlError as error:
            raise HandlerError(
                "unavailable", f"task {row.task_id}: {describe(row)} did not answer: {error}"
            ) from None
        if not isinstance(reply, dict):
            raise HandlerError("internal", f"{describe(row)} replied with no object")
        return {**reply, "owner": row.owner}

    async def session_state(self, row: TaskOwner) -> str | None:
        """The state the session that owns ``row``'s task reports (``session.status``:
        ``working``, ``needs-input`` while an approval waits, ``idle``); ``None`` when it does
        not answer."""

        def call() -> object:
            with ControlClient(Path(row.socket), timeout=CLAIM_TIMEOUT) as client:
                return client.call("session.status", {})

        try:
            reply = await trio.to_thread.run_sync(call)
        except ControlError as error:
            logger.info("task %s: %s did not say its state: %s", row.task_id, describe(row), error)
            return None
        state = reply.get("state") if isinstance(reply, dict) else None
        return state if isinstance(state, str) else None

    async def stop_session(self, row: TaskOwner) -> None:
        """End the session that owns ``row``'s task (``session.stop`` with its generation): a
        task moved to another device runs there, not here. A session already gone is fine."""

        def call() -> object:
            with ControlClient(Path(row.socket), timeout=CLAIM_TIMEOUT) as client:
                return client.call("session.stop", {"generation": row.token})

        try:
            await trio.to_thread.run_sync(call)
        except ControlError as error:
            logger.info("task %s: %s did not stop: %s", row.task_id, describe(row), error)
