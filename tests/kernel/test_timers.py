"""Timers: messages told after a delay, from any thread, in deadline order, cancellable."""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
import trio
import trio.testing

from robota.core import Actor, ChildSpec, TimerHandle, TimerLimitExceeded, Timers
from robota.core.testing import Probe, Recording, supervised, wait_until


@asynccontextmanager
async def running(timers: Timers) -> AsyncIterator[Timers]:
    async with trio.open_nursery() as nursery:
        await nursery.start(timers.run)
        try:
            yield timers
        finally:
            nursery.cancel_scope.cancel()


async def test_a_timer_fires_after_its_delay_not_before(autojump_clock: trio.testing.MockClock):
    fired: list[tuple[str, float]] = []
    async with running(Timers()) as timers:
        start = trio.current_time()
        timers.schedule(2.5, lambda m: fired.append((m, trio.current_time() - start)), "late")
        timers.schedule(0.5, lambda m: fired.append((m, trio.current_time() - start)), "soon")
        await trio.sleep(10)
    assert [m for m, _ in fired] == ["soon", "late"]
    assert fired[0][1] == pytest.approx(0.5)
    assert fired[1][1] == pytest.approx(2.5)


async def test_many_timers_fire_in_deadline_order_then_insertion_order(
    autojump_clock: trio.testing.MockClock,
) -> None:
    fired: list[int] = []
    delays = [(n * 7919) % 1000 / 100 for n in range(2000)]  # 0.00 .. 9.99 s, shuffled
    async with running(Timers()) as timers:
        for n, delay in enumerate(delays):
            timers.schedule(delay, fired.append, n)
        timers.schedule(5.0, fired.append, -1)
        timers.schedule(5.0, fired.append, -2)
        assert timers.pending == 2002
        await trio.sleep(11)
        assert timers.pending == 0
    expected = sorted(range(2000), key=lambda n: (delays[n], n))
    assert [n for n in fired if n >= 0] == expected
    # Equal deadlines keep the order they were scheduled in.
    assert fired.index(-1) < fired.index(-2)


async def test_cancelled_timers_never_fire(autojump_clock: trio.testing.MockClock) -> None:
    fired: list[int] = []
    async with running(Timers()) as timers:
        handles = [timers.schedule(1.0 + n / 1000, fired.append, n) for n in range(500)]
        for handle in handles[::2]:
            assert timers.cancel(handle) is True
        assert timers.cancel(handles[0]) is False  # twice
        assert timers.pending == 250
        await trio.sleep(5)
        assert timers.cancel(handles[1]) is False  # after it fired
    assert fired == list(range(1, 500, 2))
    assert handles[0].cancelled and handles[1].fired


async def test_an_earlier_timer_wakes_a_sleeping_service_sooner(
    autojump_clock: trio.testing.MockClock,
) -> None:
    fired: list[float] = []
    async with running(Timers()) as timers:
        start = trio.current_time()
        timers.schedule(100.0, lambda _: fired.append(trio.current_time() - start))
        await trio.sleep(1)  # the service now sleeps towards t=100
        timers.schedule(1.0, lambda _: fired.append(trio.current_time() - start))
        await trio.sleep(5)
        assert fired == [pytest.approx(2.0)]


async def test_tells_an_address_from_an_actor_thread_and_cancels_there() -> None:
    """The real use: an actor schedules its own wake-up from its thread."""
    recording = Recording()
    timers = Timers()
    handles: list[TimerHandle] = []

    class Sleeper(Actor):
        def receive(self, message: Any) -> None:
            if message == "arm":
                timers.schedule(0.05, self.actor_ref.tell, "woken")
                handles.append(timers.schedule(0.05, self.actor_ref.tell, "never"))
                timers.cancel(handles[-1])
            else:
                recording.add(message)

    async with (
        running(timers),
        supervised([ChildSpec("sleeper", Sleeper)]) as sup,
    ):
        sup.address("sleeper").tell("arm")
        assert await recording.received(1, timeout=5) == ["woken"]
        timers.schedule(0.01, sup.address("sleeper"), "via its address")
        assert await recording.received(2, timeout=5) == ["woken", "via its address"]
        await trio.sleep(0.1)
    assert recording.messages == ["woken", "via its address"]
    assert handles[0].cancelled


async def test_schedule_is_thread_safe(autojump_clock: trio.testing.MockClock) -> None:
    fired: list[int] = []
    async with running(Timers()) as timers:

        def burst(base: int) -> None:
            for n in range(500):
                handle = timers.schedule(0.01 * (n % 10), fired.append, base + n)
                if n % 5 == 0:
                    timers.cancel(handle)

        threads = [threading.Thread(target=burst, args=(k * 1000,)) for k in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            await trio.to_thread.run_sync(thread.join)
        await wait_until(lambda: timers.pending == 0, timeout=10)
    assert sorted(fired) == sorted(k * 1000 + n for k in range(4) for n in range(500) if n % 5)


async def test_the_limit_bounds_pending_timers() -> None:
    timers = Timers(limit=3)
    handles = [timers.schedule(1.0, print) for _ in range(3)]
    with pytest.raises(TimerLimitExceeded, match="limit is 3"):
        timers.schedule(1.0, print)
    timers.cancel(handles[0])
    timers.schedule(1.0, print)  # room again
    assert timers.pending == 3
    for bad in (-1.0, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="delay"):
            timers.schedule(bad, print)


async def test_shutdown_with_pending_timers_fires_nothing_and_a_new_run_continues(
    autojump_clock: trio.testing.MockClock,
) -> None:
    fired: list[str] = []
    timers = Timers()
    async with running(timers):
        timers.schedule(1.0, fired.append, "before")
        timers.schedule(60.0, fired.append, "pending")
        await trio.sleep(2)
    assert fired == ["before"]
    timers.schedule(0.0, fired.append, "while stopped")
    await trio.sleep(120)  # the deadline passes while nobody runs the service
    assert fired == ["before"]
    assert timers.pending == 2
    async with running(timers):
        await trio.sleep(0.01)
        assert sorted(fired) == ["before", "pending", "while stopped"]


async def test_cancelled_timers_are_swept_from_the_heap(
    autojump_clock: trio.testing.MockClock,
) -> None:
    async with running(Timers()) as timers:
        keep = timers.schedule(1000.0, print)
        for _ in range(20):
            handles = [timers.schedule(500.0, print) for _ in range(100)]
            for handle in handles:
                timers.cancel(handle)
            timers.schedule(0.001, print)  # something fires, and the sweep runs after it
            await trio.sleep(0.01)
        assert len(timers._heap) < 300  # not the 2000 cancelled entries
        assert keep.pending


async def test_a_raising_target_does_not_end_the_service(
    autojump_clock: trio.testing.MockClock, caplog: pytest.LogCaptureFixture
) -> None:
    fired: list[str] = []

    def boom(_: object) -> None:
        raise RuntimeError("target bug")

    async with running(Timers()) as timers:
        timers.schedule(1.0, boom)
        timers.schedule(2.0, fired.append, "after")
        await trio.sleep(3)
    assert fired == ["after"]
    assert "target bug" in caplog.text


async def test_a_timer_for_a_stopped_actor_is_dropped_quietly() -> None:
    recording = Recording()
    ref = Probe.start(recording)
    ref.tell("alive")
    recording.wait_for(1)
    ref.stop()
    async with running(Timers()) as timers:
        handle = timers.schedule(0.0, ref.tell, "late")
        await wait_until(lambda: handle.fired)
    assert recording.messages == ["alive"]
