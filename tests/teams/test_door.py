"""The team door on a real store and a real team actor: a parsed message in, the effects a
transport performs out (recorded by a ``TeamReplies`` that keeps them), in the order the
transport would see them."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from robota.core.config import TeamConfig
from robota.core.engine import NewTask, UserInput
from robota.core.store import StoreClient, open_reader, team_row
from robota.core.teams import (
    FollowUpInput,
    GroupNote,
    StartRequest,
    TeamActor,
    TeamDoor,
    ThreadReply,
)

from ._door import ADMIN, MEMBER, TEAM, Recorded, message

MakeDoor = Callable[..., tuple[TeamDoor, Recorded]]


@pytest.fixture
def door(store: tuple[Path, StoreClient]) -> Iterator[MakeDoor]:
    doors: list[TeamDoor] = []

    def make(team: TeamConfig = TEAM) -> tuple[TeamDoor, Recorded]:
        made = TeamDoor(team, store[1], agent="codex", clock=lambda: 1000.0)
        made.bind(TeamActor.start(team, store[1], made.deliver))
        recorded = Recorded()
        made.attach(recorded, owner=None, prefix="!")
        recorded.wait_for(1)  # the online note
        recorded.effects.clear()
        doors.append(made)
        return made, recorded

    yield make
    for made in doors:
        made.stop()


def test_four_requests_at_three_slots_the_fourth_waits_then_starts(door: MakeDoor) -> None:
    team_door, recorded = door()
    senders = ["ou_a", "ou_b", "ou_c", "ou_d"]
    for n, sender in enumerate(senders, 1):
        team_door.handle(message(n, f"question {n}", sender))
    effects = recorded.wait_for(4)
    starts = [e for e in effects if isinstance(e, StartRequest)]
    assert [s.anchor for s in starts] == ["m1", "m2", "m3"]
    assert all(s.settings.permission_mode == "plan" and s.new_task for s in starts)
    assert starts[0].requests() == [
        NewTask(starts[0].settings, announce=False),
        UserInput("question 1", message_id="m1"),
    ]
    (queued,) = [e for e in effects if isinstance(e, ThreadReply)]
    assert queued.anchor == "m4" and "3 requests are running ahead" in queued.text
    team_door.turn_ended("slack:C1:2")
    promoted = recorded.wait_for(5)[-1]
    assert isinstance(promoted, StartRequest) and promoted.anchor == "m4"


def test_refusals_switches_and_help_are_answered_in_the_thread(door: MakeDoor) -> None:
    team_door, recorded = door()
    team_door.handle(message(1, "!release v1", MEMBER))
    team_door.handle(message(2, "turn off the bot", ADMIN))
    team_door.handle(message(3, "!nosuch", MEMBER))
    team_door.handle(message(4, "hello", "ou_stranger"))  # members: all, so heard
    effects = recorded.wait_for(4)
    texts = {e.anchor: e.text for e in effects if isinstance(e, ThreadReply)}
    assert "administrator" in texts["m1"]
    assert "operator's terminal" in texts["m2"]
    assert "no such action" in texts["m3"]


def test_a_confirmation_runs_after_yes_and_is_cancelled_by_anything_else(door: MakeDoor) -> None:
    team_door, recorded = door()
    team_door.handle(message(1, "!release v1", ADMIN))
    (ask,) = recorded.wait_for(1)
    assert isinstance(ask, ThreadReply) and "confirm" in ask.text
    team_door.handle(message(2, "no, wait", ADMIN, thread=1))
    cancelled = recorded.wait_for(2)[-1]
    assert isinstance(cancelled, ThreadReply) and "cancelled" in cancelled.text
    team_door.handle(message(3, "!release v2", ADMIN, thread=1))
    recorded.wait_for(3)
    team_door.handle(message(4, "someone else", MEMBER, thread=1))  # not an answer
    team_door.handle(message(5, "yes", ADMIN, thread=1))
    effects = recorded.wait_for(5)
    follow_up = [e for e in effects if isinstance(e, FollowUpInput)]
    assert [f.text for f in follow_up] == ["someone else"]
    start = effects[-1]
    assert isinstance(start, StartRequest) and start.text == "release v2"
    assert start.anchor == "m5" and start.settings.permission_mode is None  # an admin's


def test_paused_messages_are_counted_and_resume_tells_how_many(
    door: MakeDoor, store: tuple[Path, StoreClient]
) -> None:
    team_door, recorded = door()
    team_door.pause()
    (offline,) = recorded.wait_for(1)
    assert isinstance(offline, GroupNote) and "Offline" in offline.text
    team_door.handle(message(1, "are you there", MEMBER))
    team_door.handle(message(2, "!release v1", ADMIN))
    assert team_door.resume() == 2
    effects = recorded.wait_for(3)
    assert [type(e) for e in effects] == [GroupNote, GroupNote, GroupNote]
    notes = [e.text for e in effects if isinstance(e, GroupNote)]
    assert "Online" in notes[1] and "2 messages" in notes[2]
    db = open_reader(store[0])
    try:
        row = team_row(db, "web")
    finally:
        db.close()
    assert row is not None and not row.paused and row.held_count == 0


def test_only_admins_answer_approvals_and_the_operator_holds_a_slot(door: MakeDoor) -> None:
    team_door, recorded = door()
    assert team_door.may_approve(ADMIN) and not team_door.may_approve(MEMBER)
    team_door.operator_turns(["attempt-1"])
    team_door.handle(message(1, "fix it", ADMIN))  # write:/p waits behind the operator
    team_door.handle(message(2, "what is it", MEMBER))  # read:/p goes on
    effects = recorded.wait_for(2)
    assert {type(e) for e in effects} == {ThreadReply, StartRequest}
    (waiting,) = [e for e in effects if isinstance(e, ThreadReply)]
    assert waiting.anchor == "m1"
    team_door.turn_ended("slack:C1:2")  # the member's read ends; the operator still writes
    team_door.operator_turns([])
    promoted = recorded.wait_for(3)[-1]
    assert isinstance(promoted, StartRequest) and promoted.anchor == "m1"
