"""The door across a restart, on a real store: a new door and actor on the same file take the
queue back with its texts (migration 6), each request runs once and in order; the busy
placeholder while the operator's turn holds a write back; the notes' model and context bar."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from robota.core.store import (
    BindRouteTask,
    CreateTask,
    Database,
    LoadTeamRequests,
    StoreClient,
)
from robota.core.teams import GroupNote, StartRequest, TeamActor, TeamDoor, ThreadReply

from ._door import ADMIN, TEAM, Recorded, message

ONE_SLOT = dataclasses.replace(TEAM, slots=1)


class _Attempt:
    """A turn attempt on ``route`` as the engine leaves it (the columns the door reads)."""

    def __init__(self, id: str, task: str, route: str, status: str, usage: str | None = None):
        self.row = (id, task, route, status, usage)

    def apply(self, db: Database, /) -> None:
        db.execute(
            "INSERT INTO turn_attempts (id, task_id, route_key, status, prompt, usage_json,"
            " created_at, updated_at) VALUES (?, ?, ?, ?, 'p', ?, 1.0, 1.0)",
            self.row,
        )


Open = Callable[..., tuple[TeamDoor, Recorded]]


@pytest.fixture
def open_door(store: tuple[Path, StoreClient]) -> Iterator[Open]:
    """A door and its actor on the shared store, attached; ``close`` is the host stopping."""
    running: list[TeamDoor] = []

    def open_(team=ONE_SLOT, clock: Callable[[], float] = lambda: 1000.0):  # type: ignore[no-untyped-def]
        door = TeamDoor(team, store[1], agent="codex", clock=clock)
        door.bind(TeamActor.start(team, store[1], door.deliver))
        recorded = Recorded()
        door.attach(recorded, owner=None, prefix="!")
        running.append(door)
        return door, recorded

    yield open_
    for door in running:
        door.stop()


def starts(recorded: Recorded) -> list[str]:
    return [e.text for e in recorded.effects if isinstance(e, StartRequest)]


def close(door: TeamDoor) -> None:
    door.detach()
    door.stop()


def test_a_queue_of_two_runs_after_a_restart_once_and_in_order(
    open_door: Open, store: tuple[Path, StoreClient]
) -> None:
    door, recorded = open_door()
    for n, sender in enumerate(["ou_a", "ou_b", "ou_c"], 1):
        door.handle(message(n, f"question {n}", sender))
    effects = recorded.wait_for(4)  # the online note, one start, two queued replies
    assert starts(recorded) == ["question 1"]
    assert len([e for e in effects if isinstance(e, ThreadReply)]) == 2
    # The first one's turn began and was continued by the engine's recovery (still live).
    store[1].write_sync(_Attempt("a1", "t1", "slack:C1:1", "running"), timeout=5)
    close(door)

    again, after = open_door()
    after.wait_for(1)  # the online note; nothing runs twice, nothing is lost
    assert starts(after) == []
    again.turn_ended("slack:C1:1")
    after.wait_for(2)
    assert starts(after) == ["question 2"]
    (second,) = [e for e in after.effects if isinstance(e, StartRequest)]
    assert second.settings.permission_mode == "plan" and second.new_task
    assert second.settings.title == "web: question 2"
    again.turn_ended("slack:C1:2")
    after.wait_for(3)
    assert starts(after) == ["question 2", "question 3"]
    # Through the writer, after the drops queued before the last start: ended ones are gone.
    rows = store[1].write_sync(LoadTeamRequests("web"), timeout=5)
    assert [(row.id, row.started_at is not None) for row, _, _ in rows] == [("slack:C1:3#m3", True)]


def test_after_a_restart_a_request_that_never_began_runs_and_one_that_ended_promotes(
    open_door: Open, store: tuple[Path, StoreClient]
) -> None:
    door, recorded = open_door(dataclasses.replace(TEAM, slots=2))
    for n, sender in enumerate(["ou_a", "ou_b", "ou_c"], 1):
        door.handle(message(n, f"question {n}", sender))
    recorded.wait_for(4)
    assert starts(recorded) == ["question 1", "question 2"]
    # Killed before question 1 reached the engine; question 2's turn ended while it was down.
    store[1].write_sync(_Attempt("a2", "t2", "slack:C1:2", "interrupted"), timeout=5)
    close(door)

    _, after = open_door(dataclasses.replace(TEAM, slots=2))
    after.wait_for(3)
    assert sorted(starts(after)) == ["question 1", "question 3"]
    assert isinstance(after.effects[0], GroupNote)


def test_a_write_behind_the_operator_gets_the_busy_placeholder_once_per_five_minutes(
    open_door: Open,
) -> None:
    now = [1000.0]
    admins = dataclasses.replace(TEAM, admins=frozenset({ADMIN, "ou_admin2", "ou_admin3"}))
    door, recorded = open_door(admins, clock=lambda: now[0])
    recorded.wait_for(1)
    door.operator_turns(["attempt-1"])
    door.handle(message(1, "fix it", ADMIN))  # a write: it waits for the operator
    door.handle(message(2, "what is it", "ou_member"))  # a read: it goes on
    recorded.wait_for(3)
    (first,) = [e for e in recorded.effects if isinstance(e, ThreadReply)]
    assert first.anchor == "m1" and "developer is working on this project" in first.text
    now[0] += 60  # within five minutes: the next wait gets the ordinary queued reply
    door.handle(message(3, "fix that", "ou_admin2"))
    second = recorded.wait_for(4)[-1]
    assert isinstance(second, ThreadReply) and second.anchor == "m3"
    assert second.text.startswith("Queued (position 2)")
    now[0] += 300  # five minutes on: a placeholder again
    door.handle(message(4, "fix more", "ou_admin3"))
    third = recorded.wait_for(5)[-1]
    assert isinstance(third, ThreadReply) and third.anchor == "m4"
    assert "developer is working" in third.text and "position 3" in third.text


def test_the_notes_show_the_model_and_context_of_the_teams_last_task(
    open_door: Open, store: tuple[Path, StoreClient]
) -> None:
    door, recorded = open_door(TEAM)
    (online,) = recorded.wait_for(1)
    assert isinstance(online, GroupNote) and "Context" not in online.text
    door.handle(message(1, "question 1", "ou_a"))
    recorded.wait_for(2)
    write = store[1].write_sync
    write(CreateTask("t1", "codex", "/p", "acp", model="gpt-5"), timeout=5)
    write(BindRouteTask("slack:C1:1", "t1"), timeout=5)
    usage = '{"total_tokens": 3000, "context_window": 10000}'
    write(_Attempt("a1", "t1", "slack:C1:1", "completed", usage), timeout=5)
    door.turn_ended("slack:C1:1")
    door.pause()
    notes = [e.text for e in recorded.wait_for(3) if isinstance(e, GroupNote)]
    assert notes[-1] == "○ Offline\nContext · ███░░░░░░░ 30%"
    door.resume()
    notes = [e.text for e in recorded.wait_for(4) if isinstance(e, GroupNote)]
    assert notes[-1].splitlines()[0] == "● Online"
    assert notes[-1].splitlines()[2:] == ["Model · gpt-5", "Context · ███░░░░░░░ 30%"]


def test_a_restored_request_whose_continued_turn_ended_unheard_is_settled(
    open_door: Open, store: tuple[Path, StoreClient]
) -> None:
    door, recorded = open_door()
    door.handle(message(1, "question 1", "ou_a"))
    door.handle(message(2, "question 2", "ou_b"))
    recorded.wait_for(3)
    store[1].write_sync(_Attempt("a1", "t1", "slack:C1:1", "running"), timeout=5)
    close(door)

    again, after = open_door()
    after.wait_for(1)
    assert again.recovered_routes() == ["slack:C1:1"]
    again.settle_recovered({"slack:C1:1"})  # still live: nothing happens
    assert again.recovered_routes() == ["slack:C1:1"] and starts(after) == []
    again.settle_recovered(set())  # its turn ended and nobody said so: it is completed
    after.wait_for(2)
    assert starts(after) == ["question 2"] and again.recovered_routes() == []
