"""``RouteDirectory.retire``: a route forgotten once it is passive with nothing waiting (at once,
or when it next passivates), only when the caller's ``forget`` agrees, never when a message
reached it first; its next message makes it a new route again (issue 28 s.3)."""

from __future__ import annotations

from typing import Any

import pytest

from robota.core import ChildSpec, MemoryRouteStates, RouteDirectory
from robota.core.testing import FAST_BACKOFF, supervised, wait_until

from ._routes_loop import LoopCounter


def retiring_directory(
    clock: list[float],
) -> tuple[RouteDirectory[dict[str, Any]], MemoryRouteStates[dict[str, Any]]]:
    states: MemoryRouteStates[dict[str, Any]] = MemoryRouteStates()
    directory = RouteDirectory(
        LoopCounter,
        states,
        idle_after=60,
        sweep_interval=0.01,
        clock=lambda: clock[0],
        backoff=FAST_BACKOFF,
        on_loop=True,
    )
    return directory, states


def forgetting(
    states: MemoryRouteStates[dict[str, Any]], key: str, asked: list[str], *, agree: bool = True
) -> Any:
    def forget() -> bool:
        asked.append(key)
        if agree:
            states.forget(key)
        return agree

    return forget


@pytest.mark.concurrency
async def test_a_passive_route_is_forgotten_at_once_and_its_next_message_starts_it_anew() -> None:
    LoopCounter.instances.clear()
    clock = [0.0]
    directory, states = retiring_directory(clock)
    async with supervised([ChildSpec("routes", lambda: directory)]):
        directory.tell("chat", "one")
        await wait_until(lambda: bool(LoopCounter.instances))
        clock[0] = 61
        await wait_until(lambda: directory.passivations == 1 and directory.active == 0)
        assert len(states) == 1 and directory.known == 1

        asked: list[str] = []
        assert directory.retire("chat", forgetting(states, "chat", asked))
        assert asked == ["chat"]
        assert directory.known == 0 and len(states) == 0 and directory.address("chat") is None

        directory.tell("chat", "two")
        await wait_until(lambda: len(LoopCounter.instances) == 2)
        await wait_until(lambda: LoopCounter.instances[-1].state["seen"] == ["two"])


@pytest.mark.concurrency
async def test_an_active_route_is_forgotten_when_it_passivates_unless_spoken_to_first() -> None:
    LoopCounter.instances.clear()
    clock = [0.0]
    directory, states = retiring_directory(clock)
    async with supervised([ChildSpec("routes", lambda: directory)]):
        for key in ("quiet", "spoken"):
            directory.tell(key, 1)
        await wait_until(lambda: directory.active == 2)
        asked: list[str] = []
        for key in ("quiet", "spoken"):
            assert not directory.retire(key, forgetting(states, key, asked)), "active: later"
        assert asked == []
        directory.tell("spoken", 2)  # a message calls the retirement off

        clock[0] = 61
        await wait_until(lambda: directory.passivations == 2 and directory.active == 0)
        assert asked == ["quiet"]
        assert directory.known == 1 and directory.address("spoken") is not None
        assert states.load("spoken") == {"count": 2, "seen": [1, 2]}
        assert states.load("quiet") is None


@pytest.mark.concurrency
async def test_a_route_whose_forget_refuses_is_kept_with_its_state() -> None:
    LoopCounter.instances.clear()
    clock = [0.0]
    directory, states = retiring_directory(clock)
    async with supervised([ChildSpec("routes", lambda: directory)]):
        directory.tell("chat", 1)
        await wait_until(lambda: directory.active == 1)
        clock[0] = 61
        await wait_until(lambda: directory.passivations == 1 and directory.active == 0)
        asked: list[str] = []
        assert not directory.retire("chat", forgetting(states, "chat", asked, agree=False))
        assert asked == ["chat"] and directory.known == 1
        assert states.load("chat") == {"count": 1, "seen": [1]}
        assert not directory.retire("unknown", forgetting(states, "unknown", asked))
        assert asked == ["chat"], "a key never seen asks nothing"
