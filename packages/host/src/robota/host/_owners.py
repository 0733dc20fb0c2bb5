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

A background session started on an existing task (``session start --task``) takes it over
from an ended owner, or from the live host once the host let it go (``takeover``, pure, a
table tests it: ``HostHolds``): the host's agent may hold the task's agent session open, and
an agent lets one process write a conversation (Codex refuses to resume a thread another
process holds loaded). So the session asks the host over its control socket (``task.release``,
``ask_host_to_let_go``); the host refuses (``busy``, naming what, and the session's start fails
claiming nothing) while a turn of the task runs, a prompt of it is queued or an approval waits
on it on one of its routes (``robota.core.engine.let_go_refusal``, decided in each route's own
actor), and otherwise closes the task's agent session on every route of its own that holds it,
waits until its agent closed it (``CloseSession.closed``), writes that it no longer owns the
task (``ReleaseTask``: its row names no process, so the session's claim replaces it) and
answers; the session then claims the task and its agent resumes it with its whole history. A
host that is not there (its socket gone: it is stopping) leaves the task to be taken over as
from an ended owner; one that answers nothing in time refuses the start. Should the host drive
the task again between its answer and the session's claim, the claim finds the host's newer
generation and the start is refused naming the host.
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
    NoHostRunning,
    own_process_start,
    process_start_ticks,
)
from robota.core.store import ClaimTask, ReleaseTask, TaskOwner, task_owner

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
    "HostHolds",
    "Mine",
    "Owner",
    "Ownership",
    "TaskOwners",
    "Theirs",
    "ask_host_to_let_go",
    "describe",
    "ownership",
    "takeover",
]

logger = logging.getLogger("robota.host")

HOST_OWNER = "host"
TERMINAL_KIND = "tui"
"""The interactive terminal as an owner (``tui:<hex>``, its route's key), which runs its engine
in its own process (``_terminal_owner``): it has no control socket, so what would
be passed to it is refused naming it."""
CLAIM_TIMEOUT = 10.0
RELEASE_WAIT = 90.0
"""Seconds a session waits for the host to let a task go (its routes' and agents' close)."""
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


@dataclass(frozen=True, slots=True)
class HostHolds:
    """The live host owns the task: asked to let it go (``task.release``) before it is taken."""

    row: TaskOwner


def takeover(row: TaskOwner | None, me: Owner, *, owner_runs: bool) -> Ownership | HostHolds:
    """What a background session starting on a task does (pure, a table tests it): as
    ``ownership`` says, but a task the live host owns is first let go by the host
    (``HostHolds``), whose agent may hold the task's agent session open."""
    decided = ownership(row, me, owner_runs=owner_runs)
    if isinstance(decided, Gone) and owner_runs and decided.row.owner == HOST_OWNER:
        return HostHolds(decided.row)
    return decided


async def ask_owner(
    row: TaskOwner, request: str, fields: dict[str, object], timeout: float
) -> object:
    """``request`` with ``fields`` over the control socket of ``row``'s process; its reply
    (``ControlError`` when it refused or did not answer)."""

    def call() -> object:
        with ControlClient(Path(row.socket), timeout=timeout) as client:
            return client.call(request, fields)

    return await trio.to_thread.run_sync(call)


async def ask_host_to_let_go(row: TaskOwner) -> None:
    """Ask the host ``row`` names to let its task go (``task.release``); ``HandlerError`` when
    it refused (a turn of the task runs there, ...) or answered nothing in time. A host that is
    not there (its socket gone: it is ending) leaves the task to be taken over as from an
    ended owner."""

    try:
        await ask_owner(row, "task.release", {"task": row.task_id}, RELEASE_WAIT)
    except HostRefused as refused:
        said = f"task {row.task_id} stays with {describe(row)}: {refused.message}"
        raise HandlerError(refused.code, said) from None
    except NoHostRunning as error:
        said = describe(row)
        logger.info("task %s: %s is not there (%s); taking it over", row.task_id, said, error)
    except ControlError as error:  # it runs but did not answer: taking over could split it
        said = f"task {row.task_id}: {describe(row)} did not let it go: {error}"
        raise HandlerError("unavailable", said) from None


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

    async def let_go(self, task_id: str) -> None:
        """This host no longer owns ``task_id`` (``task.release``): its row kept, naming no
        process, for the session taking it over to replace (``Gone``)."""
        me = self.me
        release = ReleaseTask(task_id, me.owner, me.pid, me.process_start)
        await self.store.write(release, timeout=CLAIM_TIMEOUT)

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
        try:
            await ask_owner(row, "session.stop", {"generation": row.token}, CLAIM_TIMEOUT)
        except ControlError as error:
            logger.info("task %s: %s did not stop: %s", row.task_id, describe(row), error)
