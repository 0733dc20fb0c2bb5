"""The route directory made ``on_loop``: routes on the trio loop (``LoopRouteActor``), with the
directory's activation, passivation, crash restart and state as for routes on threads."""

from __future__ import annotations

import threading
from typing import Any

import pytest
import trio

from robota.core import ChildSpec, MemoryRouteStates, RouteDirectory
from robota.core.testing import FAST_BACKOFF, supervised, wait_until

from ._routes_loop import LoopCounter, ThreadCounter


def loop_directory(**options: Any) -> RouteDirectory[dict[str, Any]]:
    states: MemoryRouteStates[dict[str, Any]] = MemoryRouteStates()
    options.setdefault("idle_after", 60)
    return RouteDirectory(LoopCounter, states, backoff=FAST_BACKOFF, on_loop=True, **options)


async def test_loop_routes_run_on_the_directory_loop_and_start_no_thread() -> None:
    LoopCounter.instances.clear()
    directory = loop_directory()
    before = threading.active_count()
    async with supervised([ChildSpec("routes", lambda: directory)]):
        for n in range(50):
            for i in range(3):
                directory.tell(f"chat:{n}", i)
        await wait_until(lambda: sum(c.state["count"] for c in LoopCounter.instances) == 150)
        assert directory.active == 50
        assert threading.active_count() <= before
        loop_thread = threading.current_thread()
        assert {c.restored_in for c in LoopCounter.instances} == {loop_thread}
        assert {c.handled_in for c in LoopCounter.instances} == {loop_thread}
        assert all(c.state["seen"] == [0, 1, 2] for c in LoopCounter.instances)


async def test_messages_told_before_the_loop_runs_wait_and_are_handled_in_order() -> None:
    LoopCounter.instances.clear()
    directory = loop_directory()
    for i in range(5):
        directory.tell("early", i)
    assert not directory.is_active("early")
    assert directory.activations == 0
    async with supervised([ChildSpec("routes", lambda: directory)]):
        await wait_until(lambda: bool(LoopCounter.instances))
        await wait_until(lambda: LoopCounter.instances[-1].state["count"] == 5)
        assert LoopCounter.instances[-1].state["seen"] == [0, 1, 2, 3, 4]
        assert directory.activations == 1


@pytest.mark.concurrency
async def test_a_told_route_passivates_and_its_next_incarnation_restores_its_state() -> None:
    LoopCounter.instances.clear()
    clock = [0.0]
    directory = loop_directory(clock=lambda: clock[0], sweep_interval=0.01)
    async with supervised([ChildSpec("routes", lambda: directory)]):
        for i in range(3):
            directory.tell("chat", i)
        await wait_until(lambda: bool(LoopCounter.instances))
        await wait_until(lambda: LoopCounter.instances[-1].state["count"] == 3)
        clock[0] = 61
        await wait_until(lambda: directory.passivations == 1 and directory.active == 0)
        assert LoopCounter.instances[-1].ended
        directory.tell("chat", 3)
        await wait_until(lambda: len(LoopCounter.instances) == 2)
        await wait_until(lambda: LoopCounter.instances[-1].state["count"] == 4)
        assert LoopCounter.instances[-1].state["seen"] == [0, 1, 2, 3]
        assert directory.activations == 2


@pytest.mark.concurrency
async def test_a_crashed_loop_route_restarts_with_what_was_queued_behind_the_crash() -> None:
    LoopCounter.instances.clear()
    clock = [0.0]
    directory = loop_directory(clock=lambda: clock[0], sweep_interval=0.01)
    async with supervised([ChildSpec("routes", lambda: directory)]):
        directory.tell("r", "a")
        await wait_until(lambda: bool(LoopCounter.instances))
        await wait_until(lambda: LoopCounter.instances[-1].state["count"] == 1)
        clock[0] = 61
        await wait_until(lambda: directory.active == 0)  # saved: {count: 1, seen: [a]}
        directory.tell("r", "b")
        directory.tell("r", "boom")
        directory.tell("r", "c")  # queued behind the crash: rescued, not lost
        await wait_until(
            lambda: (
                directory.activations == 3 and LoopCounter.instances[-1].state["seen"] == ["a", "c"]
            )
        )
        assert LoopCounter.instances[-2].ended


@pytest.mark.concurrency
async def test_a_loop_route_whose_restore_raises_is_started_again_after_its_backoff() -> None:
    LoopCounter.instances.clear()
    LoopCounter.failing_restores = 2
    try:
        directory = loop_directory()
        async with supervised([ChildSpec("routes", lambda: directory)]):
            directory.tell("r", "kept")
            await wait_until(lambda: directory.activations == 3)
            await wait_until(lambda: LoopCounter.instances[-1].state["seen"] == ["kept"])
    finally:
        LoopCounter.failing_restores = 0


async def test_the_directory_passivates_its_loop_routes_when_it_stops() -> None:
    LoopCounter.instances.clear()
    states: MemoryRouteStates[dict[str, Any]] = MemoryRouteStates()
    directory = RouteDirectory(LoopCounter, states, idle_after=60, on_loop=True)
    async with supervised([ChildSpec("routes", lambda: directory)]):
        directory.tell("a", 1)
        directory.tell("b", 2)
        await wait_until(lambda: sum(c.state["count"] for c in LoopCounter.instances) == 2)
    assert directory.active == 0
    assert {k: states.load(k) for k in "ab"} == {
        "a": {"count": 1, "seen": [1]},
        "b": {"count": 1, "seen": [2]},
    }
    directory.tell("a", 3)  # after the stop: waits for the next run
    await trio.sleep(0.05)
    assert directory.active == 0


@pytest.mark.parametrize(
    ("factory", "on_loop"), [(ThreadCounter, True), (LoopCounter, False)], ids=["thread", "loop"]
)
async def test_a_route_of_the_other_kind_is_refused_as_a_crashed_activation(
    factory: Any, on_loop: bool
) -> None:
    states: MemoryRouteStates[dict[str, Any]] = MemoryRouteStates()
    directory = RouteDirectory(
        factory, states, idle_after=60, on_loop=on_loop, backoff=FAST_BACKOFF
    )
    async with supervised([ChildSpec("routes", lambda: directory)]):
        directory.tell("r", 1)
        await wait_until(lambda: directory.activations >= 2)
        assert not directory.is_active("r")
