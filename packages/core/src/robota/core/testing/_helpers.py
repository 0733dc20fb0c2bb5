"""The helpers behind ``robota.core.testing``; see the facade for what each is for."""

from __future__ import annotations

import threading
import time
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from typing import Any

import trio

from ..kernel import (
    Actor,
    Address,
    Backoff,
    ChildSpec,
    DeadLetters,
    RequestCrash,
    Strategy,
    Supervisor,
)

__all__ = [
    "FAST_BACKOFF",
    "Probe",
    "Recording",
    "crash",
    "supervised",
    "wait_until",
]

FAST_BACKOFF = Backoff(base=0.01, cap=0.08, reset_after=1.0)
"""Backoff for tests: 10 ms, 20 ms, 40 ms, 80 ms; healthy after 1 s."""


class Recording:
    """A thread-safe log of messages, shared by every incarnation of a ``Probe``."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self.messages: list[Any] = []
        self.starts = 0
        self.stops = 0

    def add(self, message: Any) -> None:
        with self._cond:
            self.messages.append(message)
            self._cond.notify_all()

    def _count_start(self) -> None:
        with self._cond:
            self.starts += 1
            self._cond.notify_all()

    def _count_stop(self) -> None:
        with self._cond:
            self.stops += 1
            self._cond.notify_all()

    def wait_for(self, count: int, timeout: float = 5.0) -> list[Any]:
        """Block until ``count`` messages were recorded; raise ``TimeoutError`` otherwise."""
        with self._cond:
            if not self._cond.wait_for(lambda: len(self.messages) >= count, timeout):
                raise TimeoutError(
                    f"recorded {len(self.messages)} of {count} messages in {timeout:g} s"
                )
            return list(self.messages)

    async def received(self, count: int, timeout: float = 5.0) -> list[Any]:
        """Wait on the trio loop until ``count`` messages were recorded."""
        await wait_until(
            lambda: len(self.messages) >= count,
            timeout=timeout,
            what=lambda: f"{len(self.messages)} of {count} messages",
        )
        return list(self.messages)


class Probe(Actor):
    """An actor that records every message in a ``Recording``.

    ``fail_on`` makes it crash on the messages for which it returns true, after recording them.
    """

    def __init__(
        self,
        recording: Recording | None = None,
        *,
        fail_on: Callable[[Any], bool] | None = None,
        stop_delay: float = 0.0,
    ) -> None:
        super().__init__()
        self.recording = recording if recording is not None else Recording()
        self._fail_on = fail_on
        self._stop_delay = stop_delay

    def started(self) -> None:
        self.recording._count_start()

    def receive(self, message: Any) -> Any:
        self.recording.add(message)
        if self._fail_on is not None and self._fail_on(message):
            raise RuntimeError(f"probe told to fail on {message!r}")
        return message

    def stopping(self) -> None:
        if self._stop_delay:
            time.sleep(self._stop_delay)  # simulates a child stuck in its shutdown
        self.recording._count_stop()


def crash(address: Address, reason: str = "crash requested") -> None:
    """Make the actor behind ``address`` crash with ``CrashRequested`` when it gets to it."""
    address.tell(RequestCrash(reason))


async def wait_until(
    predicate: Callable[[], bool],
    *,
    timeout: float = 5.0,
    interval: float = 0.002,
    what: Callable[[], str] | None = None,
) -> None:
    """Poll ``predicate`` on the trio loop until it holds; ``TimeoutError`` after ``timeout``."""
    with trio.move_on_after(timeout):
        while not predicate():
            await trio.sleep(interval)
        return
    detail = f": {what()}" if what is not None else ""
    raise TimeoutError(f"condition not met within {timeout:g} s{detail}")


@asynccontextmanager
async def supervised(
    children: Sequence[ChildSpec],
    *,
    strategy: Strategy = Strategy.ONE_FOR_ONE,
    intensity: int = 5,
    period: float = 60.0,
    backoff: Backoff = FAST_BACKOFF,
    name: str = "test",
    dead_letters: DeadLetters | None = None,
) -> AsyncIterator[Supervisor]:
    """Run a ``Supervisor`` for the body of an ``async with``; stop it (children in reverse
    order) on the way out. A supervisor that fails raises out of the block."""
    supervisor = Supervisor(
        name,
        children,
        strategy=strategy,
        intensity=intensity,
        period=period,
        backoff=backoff,
        dead_letters=dead_letters,
    )
    async with trio.open_nursery() as nursery:
        await nursery.start(supervisor.run)
        try:
            yield supervisor
        finally:
            supervisor.stop()
