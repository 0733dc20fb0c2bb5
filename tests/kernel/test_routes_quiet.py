"""The route directory's quiet passivation: a settled route goes after ``quiet_after``, a busy
one only after ``idle_after``; the sweeper's ``after_passivations`` once a wave is over."""

from __future__ import annotations

import gc
import weakref
from typing import Any, ClassVar

import pytest
import trio

from robota.core import (
    ChildSpec,
    MemoryRouteStates,
    RouteActor,
    RouteDirectory,
    passivation_due,
)
from robota.core.kernel import release_free_memory
from robota.core.testing import FAST_BACKOFF, supervised, wait_until


@pytest.mark.parametrize(
    ("idle_for", "settled", "quiet_after", "due"),
    [
        (0.0, True, 5.0, False),
        (4.9, True, 5.0, False),
        (5.0, True, 5.0, True),
        (5.0, False, 5.0, False),
        (59.9, False, 5.0, False),
        (60.0, False, 5.0, True),
        (60.0, True, None, True),
        (30.0, True, None, False),
        (30.0, False, None, False),
    ],
)
def test_when_a_route_is_due_to_passivate(
    idle_for: float, settled: bool, quiet_after: float | None, due: bool
) -> None:
    assert (
        passivation_due(idle_for, settled=settled, idle_after=60.0, quiet_after=quiet_after) is due
    )


class Settling(RouteActor[list[str]]):
    """Settled unless the last message it took was ``"busy"``."""

    latest: ClassVar[dict[str, Settling]] = {}

    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.seen: list[str] = []
        Settling.latest[key] = self

    def restore(self, state: list[str] | None) -> None:
        self.seen = list(state or [])
        self.settled = True

    def receive(self, message: Any) -> None:
        self.seen.append(message)
        self.settled = message != "busy"

    def snapshot(self) -> list[str]:
        return self.seen


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def quiet_directory(clock: FakeClock) -> RouteDirectory[list[str]]:
    return RouteDirectory(
        Settling,
        MemoryRouteStates(),
        idle_after=60,
        quiet_after=5,
        clock=clock,
        backoff=FAST_BACKOFF,
    )


@pytest.mark.concurrency
async def test_a_settled_route_passivates_after_the_quiet_a_busy_one_after_the_idle_time() -> None:
    clock = FakeClock()
    directory = quiet_directory(clock)
    directory.tell("calm", "hello")
    directory.tell("busy", "busy")
    await wait_until(lambda: _took(("calm", "hello"), ("busy", "busy")))
    clock.now = 4
    assert directory.sweep() == 0
    clock.now = 5
    assert directory.sweep() == 1
    await wait_until(lambda: not directory.is_active("calm"))
    assert directory.is_active("busy")
    clock.now = 59
    assert directory.sweep() == 0
    clock.now = 60
    assert directory.sweep() == 1
    await wait_until(lambda: directory.active == 0)
    directory.tell("calm", "again")
    await wait_until(lambda: directory.is_active("calm"))
    directory.passivate_all(5)


def _took(*taken: tuple[str, str]) -> bool:
    return all(
        key in Settling.latest and Settling.latest[key].seen[-1:] == [message]
        for key, message in taken
    )


async def test_the_sweeper_releases_memory_once_a_wave_is_over() -> None:
    released: list[int] = []
    directory: RouteDirectory[list[str]] = RouteDirectory(
        Settling,
        MemoryRouteStates(),
        idle_after=60,
        quiet_after=0.05,
        sweep_interval=0.01,
        after_passivations=lambda: released.append(directory.passivations),
    )
    async with supervised([ChildSpec("routes", lambda: directory)]):
        for key in ("a", "b", "c"):
            directory.tell(key, "hi")
        await wait_until(lambda: released[-1:] == [3])
        calls = len(released)
        await trio.sleep(0.1)  # ten more sweeps: no passivation, no release
        assert len(released) == calls
        directory.tell("a", "again")
        await wait_until(lambda: released[-1:] == [4])
    # One call per wave (a sweep may have caught the three routes in two waves), none between.
    assert released == sorted(set(released))


async def test_quiet_after_must_be_positive() -> None:
    with pytest.raises(ValueError, match="quiet_after"):
        RouteDirectory(Settling, MemoryRouteStates(), quiet_after=0)
    await trio.sleep(0)


def test_releasing_free_memory_collects_the_garbage_an_idle_process_would_keep() -> None:
    """A burst leaves objects in reference cycles that only a full collection frees; an idle
    host allocates too little for the collector to run one (issue 28 s.3)."""

    class Node:
        def __init__(self) -> None:
            self.me = self

    gc.disable()
    try:
        node = Node()
        gone = weakref.ref(node)
        del node
        assert gone() is not None  # a cycle: only the collector frees it
        release_free_memory()
        assert gone() is None
    finally:
        gc.enable()
