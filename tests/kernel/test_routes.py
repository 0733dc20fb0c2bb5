"""The route directory: activation on first message, passivation when idle, state kept."""

from __future__ import annotations

import threading
from typing import Any, ClassVar

import pytest
import trio

from robota.core import ChildSpec, MemoryRouteStates, RouteActor, RouteDirectory
from robota.core.testing import FAST_BACKOFF, supervised, wait_until


class Counter(RouteActor[dict[str, Any]]):
    """Counts messages and remembers them; the state a route would persist."""

    instances: ClassVar[list[Counter]] = []

    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.state: dict[str, Any] = {"count": 0, "seen": []}
        self.restored_in: threading.Thread | None = None
        Counter.instances.append(self)

    def restore(self, state: dict[str, Any] | None) -> None:
        self.restored_in = threading.current_thread()
        if state is not None:
            self.state = state

    def receive(self, message: Any) -> None:
        if message == "boom":
            raise RuntimeError("route bug")
        if isinstance(message, threading.Event):
            message.wait(5)
            return
        self.state["count"] += 1
        self.state["seen"].append(message)

    def snapshot(self) -> dict[str, Any]:
        return {"count": self.state["count"], "seen": list(self.state["seen"])}


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def make_directory(clock: FakeClock, **options: Any) -> RouteDirectory[dict[str, Any]]:
    states: MemoryRouteStates[dict[str, Any]] = MemoryRouteStates()
    return RouteDirectory(
        Counter, states, idle_after=60, clock=clock, backoff=FAST_BACKOFF, **options
    )


@pytest.mark.concurrency
async def test_passivate_then_reactivate_keeps_state() -> None:
    clock = FakeClock()
    directory = make_directory(clock)
    for i in range(3):
        directory.tell("chat:1", i)
    assert directory.is_active("chat:1")
    clock.now = 61
    assert directory.sweep() == 1
    await wait_until(lambda: directory.active == 0)
    assert directory.passivations == 1
    directory.tell("chat:1", 3)
    await wait_until(lambda: len(Counter.instances[-1].state["seen"]) == 4)
    assert Counter.instances[-1].state == {"count": 4, "seen": [0, 1, 2, 3]}
    assert directory.activations == 2
    directory.passivate_all(5)


@pytest.mark.concurrency
async def test_messages_sent_while_passivating_wake_the_next_incarnation_in_order() -> None:
    clock = FakeClock()
    directory = make_directory(clock)
    gate = threading.Event()
    directory.tell("r", gate)  # the actor blocks: passivation waits behind this message
    clock.now = 61
    directory.sweep()
    for i in range(20):
        directory.tell("r", i)
    gate.set()
    await wait_until(lambda: directory.activations == 2 and directory.is_active("r"))
    await wait_until(lambda: len(Counter.instances[-1].state["seen"]) == 20)
    assert Counter.instances[-1].state["seen"] == list(range(20))
    directory.passivate_all(5)


async def test_only_idle_routes_passivate() -> None:
    clock = FakeClock()
    directory = make_directory(clock)
    directory.tell("old", "x")
    clock.now = 50
    directory.tell("recent", "y")
    clock.now = 70
    assert directory.sweep() == 1
    await wait_until(lambda: directory.active == 1)
    assert directory.is_active("recent")
    assert not directory.is_active("old")
    assert directory.known == 2
    directory.passivate_all(5)


@pytest.mark.concurrency
async def test_a_crashed_route_restarts_from_its_saved_state_with_waiting_messages() -> None:
    clock = FakeClock()
    directory = make_directory(clock)
    directory.tell("r", "a")
    clock.now = 61
    directory.sweep()
    await wait_until(lambda: directory.active == 0)  # saved: {count: 1, seen: [a]}
    directory.tell("r", "b")
    directory.tell("r", "boom")
    directory.tell("r", "c")  # queued behind the crash: rescued, not lost
    await wait_until(
        lambda: directory.activations == 3 and Counter.instances[-1].state["seen"] == ["a", "c"]
    )
    # "b" was processed by the incarnation that crashed and had not been saved: a route that
    # must not lose such work persists as it goes, through the store.
    assert Counter.instances[-1].state["count"] == 2
    directory.passivate_all(5)


async def test_directory_as_a_supervised_service_passivates_everything_on_stop() -> None:
    states: MemoryRouteStates[dict[str, Any]] = MemoryRouteStates()
    directory = RouteDirectory(Counter, states, idle_after=0.05, sweep_interval=0.01)
    async with supervised([ChildSpec("routes", lambda: directory)]):
        directory.tell("a", 1)
        await wait_until(lambda: states.load("a") is not None)  # the sweeper passivated it
        directory.tell("b", 2)
        directory.tell("c", 3)
    assert directory.active == 0
    assert {k: states.load(k) for k in "abc"} == {
        "a": {"count": 1, "seen": [1]},
        "b": {"count": 1, "seen": [2]},
        "c": {"count": 1, "seen": [3]},
    }


async def test_a_stopped_directory_wakes_no_route_and_a_restarted_one_delivers_what_waited() -> (
    None
):
    states: MemoryRouteStates[dict[str, Any]] = MemoryRouteStates()
    directory = RouteDirectory(Counter, states, idle_after=60, backoff=FAST_BACKOFF)
    async with supervised([ChildSpec("routes", lambda: directory)]):
        directory.tell("a", 1)
        await wait_until(lambda: directory.is_active("a"))
    activations = directory.activations
    directory.tell("a", 2)  # after the stop: a late reply of an agent, say
    directory.tell("b", 1)
    await trio.sleep(0.1)
    assert (directory.active, directory.activations) == (0, activations)
    assert states.load("a") == {"count": 1, "seen": [1]}
    async with supervised([ChildSpec("routes", lambda: directory)]):
        directory.tell("b", 2)
        await wait_until(lambda: directory.is_active("b"))
        directory.tell("a", 3)
    assert states.load("b") == {"count": 2, "seen": [1, 2]}
    assert states.load("a") == {"count": 3, "seen": [1, 2, 3]}


async def test_state_is_loaded_in_the_actor_thread_not_the_callers() -> None:
    clock = FakeClock()
    directory = make_directory(clock)
    directory.tell("r", "x")
    await wait_until(lambda: Counter.instances[-1].state["seen"] == ["x"])
    restored_in = Counter.instances[-1].restored_in
    assert restored_in is not None and restored_in is not threading.current_thread()
    directory.passivate_all(5)


async def test_idle_after_must_be_positive() -> None:
    with pytest.raises(ValueError, match="idle_after"):
        RouteDirectory(Counter, MemoryRouteStates(), idle_after=0)
    await trio.sleep(0)
