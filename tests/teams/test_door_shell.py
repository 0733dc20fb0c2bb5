"""The door as a thin shell over its team actor, on a real store: many threads calling it at
once (no locks: one mailbox decides), a timed-out request interrupted through the port, and
the reads a caller gets at once from the state the actor published."""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from robota.core.engine import FrontEndRequest, Interrupt
from robota.core.store import StoreClient
from robota.core.teams import GroupNote, StartRequest, TeamActor, TeamDoor, ThreadReply

from ._door import ADMIN, MEMBER, TEAM, Recorded, message


class Port:
    """The front end's port as the door sees it: what it was told, by route."""

    def __init__(self) -> None:
        self.told: list[tuple[str, FrontEndRequest]] = []

    def tell(self, route_key: str, request: FrontEndRequest) -> None:
        self.told.append((route_key, request))


Open = Callable[..., tuple[TeamDoor, Recorded]]


@pytest.fixture
def open_door(store: tuple[Path, StoreClient]) -> Iterator[Open]:
    doors: list[TeamDoor] = []

    def open_(team=TEAM, clock: Callable[[], float] = lambda: 1000.0, port: Port | None = None):  # type: ignore[no-untyped-def]
        door = TeamDoor(team, store[1], agent="codex", clock=clock, port=port)
        door.bind(TeamActor.start(team, store[1], door.deliver))
        recorded = Recorded()
        door.attach(recorded, owner="ou_owner", prefix="!")
        recorded.wait_for(1)  # the online note
        doors.append(door)
        return door, recorded

    yield open_
    for door in doors:
        door.stop()


def test_thirty_threads_at_once_get_one_answer_per_request(open_door: Open) -> None:
    team = dataclasses.replace(TEAM, queue_limit=200)
    door, recorded = open_door(team)
    senders, each = 30, 3
    barrier = threading.Barrier(senders)

    def send(sender: int) -> None:
        barrier.wait(timeout=10)
        for n in range(each):
            number = sender * each + n + 1
            door.handle(message(number, f"question {number}", f"ou_{sender}"))

    threads = [threading.Thread(target=send, args=(s,)) for s in range(senders)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    effects = recorded.wait_for(1 + senders * each)[1:]
    anchors = [e.anchor for e in effects if isinstance(e, StartRequest | ThreadReply)]
    assert sorted(anchors) == sorted(f"m{n}" for n in range(1, senders * each + 1))
    assert len([e for e in effects if isinstance(e, StartRequest)]) == 3  # three slots


def test_a_request_past_its_time_is_interrupted_and_its_thread_told(open_door: Open) -> None:
    now = [1000.0]
    port = Port()
    door, recorded = open_door(clock=lambda: now[0], port=port)
    door.handle(message(1, "question 1", MEMBER))
    assert isinstance(recorded.wait_for(2)[-1], StartRequest)
    now[0] += TEAM.max_turn_minutes * 60
    door.sweep()
    told = recorded.wait_for(3)[-1]
    assert isinstance(told, ThreadReply) and told.anchor == "m1" and "Timed out" in told.text
    assert port.told == [("slack:C1:1", Interrupt())]
    door.turn_ended("slack:C1:1")  # the interrupted turn's end: already settled, nothing more
    door.handle(message(2, "question 2", MEMBER))
    assert isinstance(recorded.wait_for(4)[-1], StartRequest)


def test_the_published_state_answers_at_once(open_door: Open) -> None:
    door, recorded = open_door()
    assert door.may_approve("ou_owner") and door.may_approve(ADMIN)
    assert not door.may_approve(MEMBER)
    door.handle(message(1, "question 1", MEMBER))
    recorded.wait_for(2)
    assert door.handles("slack:C1:1") and not door.handles("slack:C1:2")
    assert not door.paused and door.detach() is not None  # the offline note, to post
    door.handle(message(2, "!help", MEMBER))  # said after the detach: kept for the next one
    later = Recorded()
    door.attach(later, owner=None, prefix="!")
    effects = later.wait_for(2)
    assert isinstance(effects[0], GroupNote) and isinstance(effects[1], ThreadReply)
    door.pause()
    assert door.paused and door.detach() is None  # the group was told at the pause
