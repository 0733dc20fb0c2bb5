"""Running robota's trio loop as a process's main: termination signals end it cleanly.

``trio.run`` turns Ctrl-C into ``KeyboardInterrupt`` but leaves SIGTERM and SIGHUP to their
default action, which ends the process on the spot: no ``finally`` runs, so agent processes
(each in its own process group) would outlive robota. ``run_main`` cancels the whole run
instead, lets every shutdown path finish (shielded agent shutdowns included), then exits with
the conventional status 128 + the signal number.
"""

from __future__ import annotations

import signal
from collections.abc import Awaitable, Callable
from typing import TypeVar

import trio

__all__ = ["Terminated", "run_main"]

T = TypeVar("T")

TERMINATING = (signal.SIGTERM, signal.SIGHUP)


class Terminated(SystemExit):
    """The run ended because of a termination signal; ``code`` is 128 + its number."""

    def __init__(self, signum: int) -> None:
        self.signum = signum
        super().__init__(128 + signum)


def run_main(main: Callable[[], Awaitable[T]]) -> T:
    """``trio.run(main)``, ended cleanly by SIGTERM or SIGHUP (raises ``Terminated``)."""
    results: list[T] = []
    received: list[int] = []

    async def guarded() -> None:
        with trio.open_signal_receiver(*TERMINATING) as signals:
            async with trio.open_nursery() as nursery:

                async def watch() -> None:
                    async for signum in signals:
                        received.append(signum)
                        nursery.cancel_scope.cancel()
                        return

                nursery.start_soon(watch)
                results.append(await main())
                nursery.cancel_scope.cancel()

    trio.run(guarded)
    if received:
        raise Terminated(received[0])
    return results[0]
