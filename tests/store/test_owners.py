"""Which process owns a task (``robota.core.store._owners``): ``ClaimTask`` as a table of the
row before, the claim, and the row after."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from robota.core.store import ClaimTask, Database, ReleaseTask, TaskOwner, migrate, task_owner

HOST = ClaimTask("t1", "host", 100, 1000, "/run/host.sock", at=1.0)
SESSION = ClaimTask("t1", "session:abc", 200, 2000, "/run/abc.sock", token="g", at=2.0)


def owner_row(claim: ClaimTask, generation: int) -> TaskOwner:
    return TaskOwner(
        claim.task_id,
        claim.owner,
        claim.pid,
        claim.process_start,
        claim.socket,
        claim.token,
        generation,
        claim.at or 0.0,
    )


TAKEOVER = ClaimTask("t1", "host", 100, 1000, "/run/host.sock", replaces=1, at=3.0)


@pytest.mark.parametrize(
    ("before", "claim", "after"),
    [
        # Nobody owns it: the first claim takes it, generation 1.
        ([], SESSION, owner_row(SESSION, 1)),
        # The owner claims again: nothing changes.
        (
            [SESSION],
            ClaimTask("t1", "session:abc", 200, 2000, "/x", at=9.0),
            owner_row(SESSION, 1),
        ),
        # Another process, naming no generation it found gone: the owner stays.
        ([SESSION], HOST, owner_row(SESSION, 1)),
        # Another process that found generation 1 gone: it takes over, generation 2.
        ([SESSION], TAKEOVER, owner_row(TAKEOVER, 2)),
        # A late takeover (the generation it found gone is no longer the row's): refused.
        (
            [SESSION, TAKEOVER],
            ClaimTask("t1", "session:def", 300, 3000, "/d", replaces=1, at=4.0),
            owner_row(TAKEOVER, 2),
        ),
        # The same pid with another process start is another process (a reused pid).
        (
            [HOST],
            ClaimTask("t1", "host", 100, 1001, "/run/host.sock", at=5.0),
            owner_row(HOST, 1),
        ),
    ],
)
def test_a_claim_takes_a_free_task_and_a_gone_owners_only(
    tmp_path: Path, before: list[ClaimTask], claim: ClaimTask, after: TaskOwner
) -> None:
    db = Database(sqlite3.connect(tmp_path / "s.sqlite", isolation_level=None))
    migrate(db)
    for earlier in before:
        earlier.apply(db)
    assert claim.apply(db) == after
    assert task_owner(db, "t1") == after
    assert task_owner(db, "t2") is None


RELEASE = ("t1", "session:abc", 200, 2000)


@pytest.mark.parametrize(
    ("release", "released", "after"),
    [
        # The owner lets go: the row keeps its owner and generation, its process unnamed.
        (RELEASE, True, TaskOwner("t1", "session:abc", 0, None, "/run/abc.sock", "g", 1, 2.0)),
        # Anyone else (another owner, pid or process start) changes nothing.
        (("t1", "session:def", 200, 2000), False, owner_row(SESSION, 1)),
        (("t1", "session:abc", 201, 2000), False, owner_row(SESSION, 1)),
        (("t1", "session:abc", 200, 2001), False, owner_row(SESSION, 1)),
        (("t2", "session:abc", 200, 2000), False, owner_row(SESSION, 1)),
    ],
)
def test_a_release_lets_go_of_the_owners_own_task_only(
    tmp_path: Path, release: tuple[str, str, int, int], released: bool, after: TaskOwner
) -> None:
    db = Database(sqlite3.connect(tmp_path / "s.sqlite", isolation_level=None))
    migrate(db)
    SESSION.apply(db)
    assert ReleaseTask(*release).apply(db) is released
    assert task_owner(db, "t1") == after


def test_a_released_task_is_taken_over_as_from_a_gone_owner(tmp_path: Path) -> None:
    """The generation still grows by one on every change of owner: the next claimer names the
    generation it found released, as it would an ended owner's."""
    db = Database(sqlite3.connect(tmp_path / "s.sqlite", isolation_level=None))
    migrate(db)
    SESSION.apply(db)
    ReleaseTask(*RELEASE).apply(db)
    assert HOST.apply(db).owner == "session:abc"  # naming no generation: not taken
    assert TAKEOVER.apply(db) == owner_row(TAKEOVER, 2)
