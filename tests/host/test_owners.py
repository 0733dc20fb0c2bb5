"""One owner per task (``robota.host._owners``): what the host does with a task, by its owner
row, as a table. The real processes' side is in test_sessions.py."""

from __future__ import annotations

import pytest

from robota.core.store import TaskOwner
from robota.host._owners import Free, Gone, Mine, Owner, Ownership, Theirs, describe, ownership

ME = Owner("host", 100, 1000, "/run/host.sock")


def row(owner: str, pid: int, start: int | None, generation: int = 1) -> TaskOwner:
    return TaskOwner("t1", owner, pid, start, "/run/x.sock", "g", generation, 1.0)


SESSION = row("session:abc", 200, 2000)
OLD_HOST = row("host", 90, 900, 3)
REUSED = row("host", 100, 999)


@pytest.mark.parametrize(
    ("found", "owner_runs", "decided"),
    [
        (None, False, Free()),
        (row("host", 100, 1000), True, Mine()),
        # A live session keeps its task; a session that ended gives it up.
        (SESSION, True, Theirs(SESSION)),
        (SESSION, False, Gone(SESSION)),
        # Another host is never a live owner (one host per profile): it ended.
        (OLD_HOST, True, Gone(OLD_HOST)),
        (OLD_HOST, False, Gone(OLD_HOST)),
        # This pid with another process start: an earlier process under a reused pid.
        (REUSED, False, Gone(REUSED)),
    ],
)
def test_what_the_host_does_with_a_task_by_its_owner(
    found: TaskOwner | None, owner_runs: bool, decided: Ownership
) -> None:
    assert ownership(found, ME, owner_runs=owner_runs) == decided


@pytest.mark.parametrize(
    ("found", "said"),
    [(SESSION, "background session abc (pid 200)"), (OLD_HOST, "host (pid 90)")],
)
def test_an_owner_is_named_as_a_person_reads_it(found: TaskOwner, said: str) -> None:
    assert describe(found) == said
