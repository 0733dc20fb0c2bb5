"""The interactive terminal as a task's owner (one owner per task, docs/architecture/host.md §9).

The TUI runs its engine and agents in its own process, so it follows the rule print mode's own
process follows: it never opens the agent session of a task another live process (the host, a
background session, the daemon, another terminal) drives. Unlike print mode it owns the task it
drives while it runs, as ``tui:<hex>`` (its route's key) with no control socket, so the host,
a background session and print mode refuse that task in turn, naming the terminal.

Where the terminal takes a task:

* at its start (``-c``, ``-r``, the picker; not a fork, which is a new task):
  ``terminal_takes`` claims it before the route is told, or says why not
  (``terminal_refusal``, naming the owner and where the task is reached) and the TUI exits 1;
* in the app, on its engine's route (``TerminalOwning``, the engine's ``TaskOwning``): the
  route asks ``refusal`` where it takes up an existing task (``/switch``, ``UseTask``) and
  where it gives its current task input, so ``/switch`` to a task a live process drives is
  refused with the words ``-r`` gets, and the session is not opened; and every task the route
  binds (one ``/new``, a fork or an adopted agent session made, one switched to) is claimed
  where it is bound (``TerminalClaim``: one write that also releases what the terminal held
  before, ``ReleaseTask``).

Who counts as a live owner is ``terminal_ownership`` (pure, a table tests it): unlike the host,
the terminal treats a live host as an owner like any other (the host's desk may hold the
task's session on a route of its own). A process between ``refusal``'s read and the claim's
write that takes the task wins (the claim is a compare-and-swap on the row's generation); the
route's next input to it is then refused naming that process.

A task moved to another device while the terminal shows it (``robota task push``) is noticed
by the app, which reads ``task_mobility`` every few seconds (``_tui``): the terminal says so,
releases the task (``terminal_lets_go``) and keeps its view read-only.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING

import trio

from robota.core.control import own_process_start
from robota.core.store import ClaimTask, ReleaseTask, TaskOwner, task_owner

from ._owners import HOST_OWNER, Free, Gone, Mine, Owner, Ownership, Theirs, describe, runs
from ._session_requests import SESSION_KIND

if TYPE_CHECKING:
    from robota.core.engine import Engine
    from robota.core.store import Database, StoreClient

__all__ = [
    "TerminalClaim",
    "TerminalOwning",
    "terminal_lets_go",
    "terminal_ownership",
    "terminal_refusal",
    "terminal_takes",
]

logger = logging.getLogger("robota.host")

CLAIM_TIMEOUT = 10.0


def terminal_owner(route_key: str) -> Owner:
    """This process as the terminal whose route is ``route_key`` (no socket: nothing is
    passed to a terminal, what would be is refused naming it)."""
    return Owner(route_key, os.getpid(), own_process_start(), "")


def terminal_ownership(row: TaskOwner | None, me: Owner, *, owner_runs: bool) -> Ownership:
    """What the terminal ``me`` may do with a task whose owner row is ``row``; ``owner_runs``:
    that row's process still runs. A live host owns its task here (``ownership`` is the host's
    own view, where another host is always gone)."""
    if row is None:
        return Free()
    if me.is_(row):
        return Mine()
    if owner_runs:
        return Theirs(row)
    return Gone(row)


def terminal_refusal(task_id: str, owner: str, said: str) -> str:
    """Why the terminal does not take up ``task_id``, which ``owner`` (a live process, as
    ``describe`` says it: ``said``) drives, and where the task can be reached instead."""
    kind, _, name = owner.partition(":")
    if kind == SESSION_KIND:
        way = f"`robota session attach {name}` is the way in"
    elif owner == HOST_OWNER:
        way = f"`robota task send {task_id}` reaches it, or resume it here once the host stopped"
    else:
        way = "resume it here once that process ended"
    return (
        f"task {task_id} is driven by {said}; the terminal does not open its agent session "
        f"beside that process: {way}"
    )


def _decide(db: Database, me: Owner, task_id: str) -> tuple[Ownership, TaskOwner | None]:
    row = task_owner(db, task_id)
    alive = row is not None and not me.is_(row) and runs(row)
    return terminal_ownership(row, me, owner_runs=alive), row


async def terminal_takes(engine: Engine, task_id: str, route_key: str) -> str | None:
    """The terminal (its route ``route_key``, this process) owns ``task_id`` from now on:
    claimed when nobody owns it, taken over (``replaces`` the row's generation) when its owner
    is gone; else, a live process owning it (or winning the race for it), why not
    (``terminal_refusal``)."""
    me = terminal_owner(route_key)

    def read() -> Ownership:
        with engine.context.readers.reading() as db:
            return _decide(db, me, task_id)[0]

    decided = await trio.to_thread.run_sync(read)
    if isinstance(decided, Mine):
        return None
    if isinstance(decided, Theirs):
        return terminal_refusal(task_id, decided.row.owner, describe(decided.row))
    replaces = decided.row.generation if isinstance(decided, Gone) else None
    claimed = await engine.store.write(me.claim(task_id, replaces), timeout=CLAIM_TIMEOUT)
    if me.is_(claimed):
        return None
    return terminal_refusal(task_id, claimed.owner, describe(claimed))


def terminal_lets_go(engine: Engine, task_id: str, route_key: str) -> bool:
    """Blocking (a worker thread's): the terminal no longer owns ``task_id`` (it moved to
    another device: ``ReleaseTask``); whether it did."""
    me = terminal_owner(route_key)
    release = ReleaseTask(task_id, me.owner, me.pid, me.process_start)
    return engine.store.write_sync(release, timeout=CLAIM_TIMEOUT)


@dataclass(frozen=True, slots=True)
class TerminalClaim:
    """The terminal ``owner`` (its route key, pid and process start) drives ``task_id`` now: it
    releases every other task it holds and claims this one, in one transaction, unless a live
    process owns it; the row after (the terminal's, or that process's)."""

    task_id: str
    owner: str
    pid: int
    process_start: int | None

    def apply(self, db: Database, /) -> TaskOwner | None:
        me = Owner(self.owner, self.pid, self.process_start, "")
        held = db.execute(
            "SELECT task_id FROM task_owners WHERE owner = ? AND pid = ? AND task_id != ?",
            (self.owner, self.pid, self.task_id),
        ).fetchall()
        for (other,) in held:
            ReleaseTask(other, self.owner, self.pid, self.process_start).apply(db)
        decided, row = _decide(db, me, self.task_id)
        if isinstance(decided, Mine | Theirs):
            return row
        replaces = decided.row.generation if isinstance(decided, Gone) else None
        claim = ClaimTask(
            self.task_id, self.owner, self.pid, self.process_start, "", replaces=replaces
        )
        return claim.apply(db)


class TerminalOwning:
    """The terminal engine's one owner per task (``robota.core.engine.TaskOwning``; the
    module docstring): each of its routes (the TUI has one) owns as ``Owner(route key)``."""

    def __init__(self) -> None:
        self.pid = os.getpid()
        self.process_start = own_process_start()

    def _me(self, route_key: str) -> Owner:
        return Owner(route_key, self.pid, self.process_start, "")

    def refusal(self, db: Database, route_key: str, task_id: str) -> str | None:
        decided, _row = _decide(db, self._me(route_key), task_id)
        if isinstance(decided, Theirs):
            return terminal_refusal(task_id, decided.row.owner, describe(decided.row))
        return None

    def bound(self, store: StoreClient, route_key: str, task_id: str) -> None:
        me = self._me(route_key)
        claim = TerminalClaim(task_id, me.owner, me.pid, me.process_start)

        def claimed(outcome: TaskOwner | BaseException | None) -> None:
            if isinstance(outcome, BaseException):
                logger.warning("task %s: the terminal's claim failed: %s", task_id, outcome)
            elif outcome is not None and not me.is_(outcome):
                logger.warning("task %s: %s took it first", task_id, describe(outcome))

        store.submit(claim, claimed)
