"""Actors on the trio loop (``LoopActor``) and the child that restarts one (``LoopChild``):
the crash semantics of an actor thread, without the thread or a supervisor task."""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pykka
import pytest
import trio

from robota.core import (
    Backoff,
    Crashed,
    LoopActor,
    LoopChild,
    Stopped,
    SupervisorFailed,
    Timers,
)
from robota.core.testing import crash, wait_until

FAST = Backoff(base=0.01, cap=0.05, reset_after=10.0)


class Recorder(LoopActor):
    """Records what it handles, and on which thread; ``"boom"`` is a bug in handling it."""

    def __init__(self, log: list[Any], ends: list[Any] | None = None) -> None:
        super().__init__()
        self.log = log
        self.ends = ends if ends is not None else []
        self.threads: set[int] = set()

    def receive(self, message: Any) -> None:
        self.threads.add(threading.get_ident())
        if message == "boom":
            raise ValueError("boom")
        self.log.append(message)

    def terminated(self, reason: Any) -> None:
        self.ends.append(type(reason).__name__)


@asynccontextmanager
async def loop_timers() -> AsyncIterator[Timers]:
    timers = Timers()
    async with trio.open_nursery() as nursery:
        await nursery.start(timers.run)
        yield timers
        nursery.cancel_scope.cancel()


async def test_messages_are_handled_on_the_loop_in_order_from_any_thread() -> None:
    log: list[Any] = []
    async with loop_timers() as timers:
        actor = Recorder(log)
        child = LoopChild("rec", lambda: actor, timers=timers)
        child.address.tell(0)  # before the start: stashed
        child.start()
        for n in range(1, 200):
            child.address.tell(n)
        await trio.to_thread.run_sync(lambda: [child.address.tell(n) for n in range(200, 400)])
        await wait_until(lambda: len(log) == 400)
        assert log == list(range(400))
        assert actor.threads == {threading.get_ident()}


async def test_a_crash_restarts_it_and_the_tells_queued_behind_it_reach_the_next() -> None:
    log: list[Any] = []
    ends: list[Any] = []
    made: list[Recorder] = []

    def factory() -> Recorder:
        made.append(Recorder(log, ends))
        return made[-1]

    async with loop_timers() as timers:
        child = LoopChild("rec", factory, timers=timers, backoff=FAST)
        child.start()
        for message in [1, "boom", 2, 3]:
            child.address.tell(message)
        await wait_until(lambda: log == [1, 2, 3])
        assert child.incarnation == 2 and child.running
        assert ends == ["Crashed"]
        with pytest.raises(pykka.ActorDeadError):
            made[0].tell(4)  # the dead incarnation takes nothing more
        crash(child.address)  # RequestCrash is a crash too
        child.address.tell(5)
        await wait_until(lambda: log == [1, 2, 3, 5])
        assert child.incarnation == 3


async def test_more_crashes_than_its_intensity_end_it_with_supervisor_failed() -> None:
    outcome: list[Any] = []
    ends: list[Any] = []
    async with loop_timers() as timers:
        child = LoopChild(
            "rec",
            lambda: Recorder([], ends),
            timers=timers,
            backoff=FAST,
            intensity=2,
            on_exit=outcome.append,
        )
        child.start()
        for crashes in range(1, 4):
            child.address.tell("boom")
            # Each crash ends an incarnation (``terminated``): a poll for the address being down
            # can miss the whole crash and restart on a loaded machine, and then wait in vain.
            await wait_until(lambda crashes=crashes: len(ends) >= crashes or bool(outcome))
            await trio.sleep(0.06)
        await wait_until(lambda: bool(outcome))
        [failed] = outcome
        assert isinstance(failed, SupervisorFailed) and failed.failures == 3
        assert child.address.is_closed and not child.running


async def test_a_stop_ends_it_after_what_was_told_before_and_closes_the_address() -> None:
    log: list[Any] = []
    ends: list[Any] = []
    outcome: list[Any] = []
    async with loop_timers() as timers:
        child = LoopChild("rec", lambda: Recorder(log, ends), timers=timers, on_exit=outcome.append)
        child.start()
        for n in range(5):
            child.address.tell(n)
        child.stop()
        child.address.tell("late")  # after the stop: the address keeps it, then it is dead
        await wait_until(lambda: bool(outcome))
        assert log == [0, 1, 2, 3, 4]
        assert ends == ["Stopped"] and outcome == [Stopped()]
        assert child.address.is_closed


async def test_stop_now_handles_what_is_queued_before_it_returns() -> None:
    log: list[Any] = []
    ends: list[Any] = []
    async with loop_timers() as timers:
        child = LoopChild("rec", lambda: Recorder(log, ends), timers=timers)
        child.start()
        for n in range(5):
            child.address.tell(n)
        child.stop(now=True)  # no checkpoint: no drain has run yet
        assert log == [0, 1, 2, 3, 4] and ends == ["Stopped"]


class Reader(LoopActor):
    """Starts from a read answered on another thread: holds its inbox until then."""

    def __init__(self, log: list[Any], answer: Any) -> None:
        super().__init__()
        self.log = log
        self.answer = answer

    def started(self) -> None:
        self.hold()
        threading.Thread(target=lambda: self.soon(self._read, self.answer)).start()

    def _read(self, answer: Any) -> None:
        if isinstance(answer, Exception):
            raise answer
        self.log.append(("read", answer))
        self.resume()

    def receive(self, message: Any) -> None:
        self.log.append(message)


async def test_a_held_start_handles_nothing_until_it_resumes_and_a_failed_read_is_a_crash() -> None:
    log: list[Any] = []
    async with loop_timers() as timers:
        child = LoopChild("reader", lambda: Reader(log, 7), timers=timers)
        child.address.tell("first")
        child.start()
        child.address.tell("second")
        await wait_until(lambda: len(log) == 3)
        assert log == [("read", 7), "first", "second"]

        outcome: list[Any] = []
        failing = LoopChild(
            "failing",
            lambda: Reader([], OSError("disk")),
            timers=timers,
            backoff=FAST,
            intensity=0,
            on_exit=outcome.append,
        )
        failing.start()
        await wait_until(lambda: bool(outcome))
        assert isinstance(outcome[0], SupervisorFailed)
        assert isinstance(outcome[0].last, OSError)


async def test_an_ended_actor_refuses_tells_and_its_exit_is_reported_once() -> None:
    reasons: list[Any] = []
    async with loop_timers():
        actor = Recorder([])
        actor.launch(lambda _actor, reason: reasons.append(reason))
        actor.tell("boom")
        await wait_until(lambda: bool(reasons))
        assert actor.ended and isinstance(reasons[0], Crashed)
        with pytest.raises(pykka.ActorDeadError):
            actor.tell(1)
        actor.stop()
        actor.stop_now()
        await trio.sleep(0.01)
        assert len(reasons) == 1


async def test_a_thousand_children_run_on_no_thread_of_their_own() -> None:
    log: list[Any] = []
    before = threading.active_count()
    async with loop_timers() as timers:
        children = [LoopChild(f"c{n}", lambda: Recorder(log), timers=timers) for n in range(1000)]
        for child in children:
            child.start()
            child.address.tell(child.name)
        assert threading.active_count() <= before  # none of them started a thread
        await wait_until(lambda: len(log) == 1000)
        for child in children:
            child.stop()
        await wait_until(lambda: all(child.address.is_closed for child in children))
