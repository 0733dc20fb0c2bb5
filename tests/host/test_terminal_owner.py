"""The interactive terminal as a task's owner (``robota.host._terminal_owner``), as tables:
who counts as a live owner for the terminal, what its route's refusal says, and what the claim
written where its route binds a task leaves in the store. The real processes' side is in
test_tui_owner.py."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest

from robota.core.control import own_process_start
from robota.core.store import ClaimTask, Database, TaskOwner, migrate, task_owner
from robota.host import TerminalClaim, TerminalOwning, terminal_ownership, terminal_refusal
from robota.host._owners import Free, Gone, Mine, Owner, Ownership, Theirs

ME = Owner("tui:ab12", 100, 1000, "")


def row(owner: str, pid: int, start: int | None, generation: int = 1) -> TaskOwner:
    return TaskOwner("t1", owner, pid, start, "", "", generation, 1.0)


HOST = row("host", 90, 900, 3)
SESSION = row("session:s1", 200, 2000)
OTHER_TUI = row("tui:cd34", 300, 3000)
RELEASED = row("tui:ab12", 0, None, 2)


@pytest.mark.parametrize(
    ("found", "owner_runs", "decided"),
    [
        (None, False, Free()),
        (row("tui:ab12", 100, 1000), True, Mine()),
        # A live host owns its task for the terminal (not so for the host's own desk).
        (HOST, True, Theirs(HOST)),
        (HOST, False, Gone(HOST)),
        (SESSION, True, Theirs(SESSION)),
        (SESSION, False, Gone(SESSION)),
        (OTHER_TUI, True, Theirs(OTHER_TUI)),
        # What this terminal released is taken over as from an ended owner.
        (RELEASED, False, Gone(RELEASED)),
        # The same route key under another process start: an earlier run, ended.
        (row("tui:ab12", 100, 999), False, Gone(row("tui:ab12", 100, 999))),
    ],
)
def test_what_the_terminal_does_with_a_task_by_its_owner(
    found: TaskOwner | None, owner_runs: bool, decided: Ownership
) -> None:
    assert terminal_ownership(found, ME, owner_runs=owner_runs) == decided


def _db(tmp_path: Path) -> Database:
    db = Database(sqlite3.connect(tmp_path / "s.sqlite", isolation_level=None))
    migrate(db)
    return db


ROUTE = "tui:ab12"
LIVE = (os.getpid(), own_process_start())
"""This test's process: an owner whose process runs (under another owner name)."""
GONE = (2**22 + 7, 12345)
"""A pid no process has (above the largest pid Linux allows, 2^22)."""


def _claim(owner: str, pid_start: tuple[int, int | None], task: str = "t1") -> ClaimTask:
    return ClaimTask(task, owner, pid_start[0], pid_start[1], "", at=1.0)


@pytest.mark.parametrize(
    ("before", "owner", "generation"),
    [
        # Free: the terminal's, generation 1.
        ([], ROUTE, 1),
        # Its owner ended: taken over, one generation more.
        ([_claim("session:s1", GONE)], ROUTE, 2),
        # A live process (a host here) drives it: left to it.
        ([_claim("host", LIVE)], "host", 1),
        # Already the terminal's: nothing changes.
        ([_claim(ROUTE, LIVE)], ROUTE, 1),
    ],
)
def test_the_claim_where_the_terminal_binds_a_task(
    tmp_path: Path, before: list[ClaimTask], owner: str, generation: int
) -> None:
    db = _db(tmp_path)
    for claim in before:
        claim.apply(db)
    after = TerminalClaim("t1", ROUTE, *LIVE).apply(db)
    assert after is not None
    assert (after.owner, after.generation) == (owner, generation)
    assert task_owner(db, "t1") == after


def test_binding_another_task_releases_the_one_the_terminal_held(tmp_path: Path) -> None:
    db = _db(tmp_path)
    TerminalClaim("t0", ROUTE, *LIVE).apply(db)
    _claim("tui:other", GONE, "t9").apply(db)  # another terminal's task stays as it is
    TerminalClaim("t1", ROUTE, *LIVE).apply(db)
    released = task_owner(db, "t0")
    assert released is not None
    assert (released.owner, released.pid, released.process_start) == (ROUTE, 0, None)
    owned = task_owner(db, "t1")
    assert owned is not None and (owned.owner, owned.pid) == (ROUTE, os.getpid())
    assert task_owner(db, "t9") == TaskOwner("t9", "tui:other", *GONE, "", "", 1, 1.0)
    # Back to the first task: taken over from its release, one generation more.
    again = TerminalClaim("t0", ROUTE, *LIVE).apply(db)
    assert again is not None and (again.owner, again.generation) == (ROUTE, 2)


def test_the_routes_refusal_names_a_live_owner_as_the_start_does(tmp_path: Path) -> None:
    db = _db(tmp_path)
    _claim("host", LIVE).apply(db)
    _claim(ROUTE, LIVE, "t2").apply(db)
    _claim("session:s1", GONE, "t3").apply(db)
    owning = TerminalOwning()
    said = f"host (pid {os.getpid()})"
    assert owning.refusal(db, ROUTE, "t1") == terminal_refusal("t1", "host", said)
    assert owning.refusal(db, ROUTE, "t2") is None  # its own
    assert owning.refusal(db, ROUTE, "t3") is None  # its owner ended
    assert owning.refusal(db, ROUTE, "t4") is None  # nobody's
