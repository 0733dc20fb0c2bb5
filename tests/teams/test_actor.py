"""The team actor on a real store: effects only after the registry is committed, the registry
restored by the next incarnation (the queue runs after a restart, in order), confirmations
kept, and many requests told at once from many threads."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from robota.core.config import TeamConfig
from robota.core.policy import (
    Cancelled,
    Complete,
    Confirmed,
    Ended,
    Expired,
    Pending,
    Queued,
    Request,
    Started,
    Submit,
    Sweep,
    conflict,
    scheduler_from_json,
)
from robota.core.store import StoreClient, open_reader, team_row
from robota.core.teams import (
    AnswerConfirmation,
    AskConfirmation,
    SweepConfirmations,
    TeamActor,
    TeamSnapshot,
    TeamState,
)

from ._deliveries import Deliveries

TEAM = TeamConfig(name="web", transport="feishu", chat="oc_1", project=Path("/p"), slots=2)


@pytest.fixture
def start_team(store: tuple[Path, StoreClient]) -> Iterator[Callable[..., Any]]:
    refs: list[Any] = []

    def start(deliveries: Deliveries, team: TeamConfig = TEAM) -> Any:
        ref = TeamActor.start(team, store[1], deliveries)
        refs.append(ref)
        return ref

    yield start
    for ref in refs:
        if ref.is_alive():
            ref.stop(timeout=10)


def req(id_: str, sender: str, *tags: str) -> Request:
    return Request(id_, sender, "ask", tags or ("read:/p",))


def snapshot(ref: Any) -> TeamState:
    got: list[TeamState] = []
    done = threading.Event()

    def reply(state: TeamState) -> None:
        got.append(state)
        done.set()

    ref.tell(TeamSnapshot(reply))
    assert done.wait(10)
    return got[0]


def test_effects_follow_the_commit_and_the_queue_survives_a_restart(store, start_team) -> None:
    path, _ = store
    deliveries = Deliveries()
    ref = start_team(deliveries)
    a, b, c, d = req("a", "u1"), req("b", "u2"), req("c", "u3"), req("d", "u4", "write:/p")
    for request in (a, b, c, d):
        ref.tell(Submit(request, 1.0))
    effects = deliveries.wait_for(4)
    assert effects == [
        Started(a),
        Started(b),
        Queued(c, 1, 2, "slot_full"),
        Queued(d, 2, 2, "slot_full"),
    ]
    # Every effect was delivered after the registry that produced it was committed.
    reader = open_reader(path)
    try:
        row = team_row(reader, "web")
    finally:
        reader.close()
    assert row is not None and row.version == 4
    saved = scheduler_from_json(row.scheduler_json)
    assert [r.request.id for r in saved.running] == ["a", "b"]
    assert [w.request.id for w in saved.queue] == ["c", "d"]

    ref.stop(timeout=10)  # the host goes away with two queued
    after = Deliveries()
    again = start_team(after)
    assert snapshot(again).scheduler == saved
    again.tell(Complete("a", 2.0))
    again.tell(Complete("b", 3.0))
    again.tell(Complete("c", 4.0))
    assert after.wait_for(5) == [
        Ended("a"),
        Started(c, promoted=True),
        Ended("b"),  # d writes the project: it waits for c's read to end
        Ended("c"),
        Started(d, promoted=True),
    ]
    assert snapshot(again).version == 7


def test_sweep_and_duplicates(start_team) -> None:
    deliveries = Deliveries()
    ref = start_team(deliveries)
    ref.tell(Submit(req("a", "u1"), 0.0))
    ref.tell(Submit(req("a", "u1"), 0.0))  # a redelivered event: nothing, not even a save
    ref.tell(Sweep(60.0))
    ref.tell(Sweep(TEAM.max_turn_minutes * 60.0))
    assert deliveries.wait_for(2) == [Started(req("a", "u1")), Ended("a", timed_out=True)]
    assert snapshot(ref).version == 2


def test_confirmations_are_kept_across_incarnations(start_team) -> None:
    deliveries = Deliveries()
    ref = start_team(deliveries)
    first = Pending("t1", "ou_admin", "drop_db", "users", 100.0)
    other = Pending("t2", "ou_admin", "drop_db", "orders", 100.0)
    ref.tell(AskConfirmation(first))
    ref.tell(AskConfirmation(other))
    assert snapshot(ref).pending == (first, other)
    ref.stop(timeout=10)
    again = start_team(deliveries)
    again.tell(AnswerConfirmation("t1", "ou_admin", "确认", 200.0))
    again.tell(AnswerConfirmation("t2", "ou_someone", "y", 200.0))  # not the asker: no answer
    again.tell(SweepConfirmations(100.0 + 15 * 60))
    assert deliveries.wait_for(2) == [Confirmed(first), Expired(other)]
    replaced = Pending("t3", "ou_a", "drop_db", "", 1.0)
    again.tell(AskConfirmation(replaced))
    again.tell(AskConfirmation(Pending("t3", "ou_a", "drop_db", "x", 2.0)))
    assert deliveries.wait_for(3)[2] == Cancelled(replaced)


def test_many_requests_at_once_from_many_threads(start_team) -> None:
    """30 senders x 3 requests, told concurrently; completions as they start. Slots are never
    exceeded, conflicting requests never run together, each sender's requests start in the
    order that sender sent them, and every one runs exactly once."""
    team = TeamConfig(
        name="load", transport="feishu", chat="oc_2", project=Path("/p"), slots=3, queue_limit=200
    )
    deliveries = Deliveries()
    ref = start_team(deliveries, team)
    tags = ("read:/p", "write:/p/src", "read:/p/docs", "port:80")
    barrier = threading.Barrier(30)

    def sender(number: int) -> None:
        barrier.wait(timeout=10)
        for index in range(3):
            tag = tags[(number + index) % 4]
            request = Request(f"u{number}-{index}", f"u{number}", "ask", (tag,))
            ref.tell(Submit(request, float(index)))

    threads = [threading.Thread(target=sender, args=(n,)) for n in range(30)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=10)
    running: dict[str, Request] = {}
    started: list[str] = []
    seen = 0
    for _ in range(10_000):  # bounded: each pass handles at least one new effect or fails
        if len(started) == 90 and not running:
            break
        effects = deliveries.wait_for(seen + 1)
        for effect in effects[seen:]:
            if isinstance(effect, Started):
                request = effect.request
                assert len(running) < team.slots
                assert all(conflict(request.tags, r.tags) is None for r in running.values())
                assert request.sender not in {r.sender for r in running.values()}
                running[request.id] = request
                started.append(request.id)
                ref.tell(Complete(request.id, 10.0))
            elif isinstance(effect, Ended):
                running.pop(effect.request_id)
        seen = len(effects)
    assert sorted(started) == sorted(f"u{n}-{i}" for n in range(30) for i in range(3))
    for number in range(30):
        mine = [s for s in started if s.startswith(f"u{number}-")]
        assert mine == [f"u{number}-0", f"u{number}-1", f"u{number}-2"]
