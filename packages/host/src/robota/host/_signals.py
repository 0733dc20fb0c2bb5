"""Running a host-like tree in this process until it stops or a stop signal comes.

SIGTERM, SIGINT and SIGHUP all mean a clean stop (``stop()``), however early they come; a
second one while stopping changes nothing. Shared by the host (``_run``) and a background
session (``_session_run``).
"""

from __future__ import annotations

import logging
import signal
from typing import Protocol

import trio

__all__ = ["STOP_SIGNALS", "run_until_stopped"]

logger = logging.getLogger("robota.host")

STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)


class Stoppable(Protocol):
    async def run(self) -> None: ...

    def stop(self) -> None: ...


def run_until_stopped(tree: Stoppable) -> None:
    """``trio.run`` the tree's ``run``; a stop signal calls its ``stop``."""

    async def main() -> None:
        with trio.open_signal_receiver(*STOP_SIGNALS) as signals:
            async with trio.open_nursery() as nursery:

                async def watch() -> None:
                    async for signum in signals:
                        logger.info("%s received", signal.Signals(signum).name)
                        tree.stop()

                nursery.start_soon(watch)
                await tree.run()
                nursery.cancel_scope.cancel()

    trio.run(main)
