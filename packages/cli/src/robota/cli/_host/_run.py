"""``robota server run``: take the profile's host lock, run the host, stop on a signal.

SIGTERM, SIGINT and SIGHUP all mean a clean stop (``Host.stop``), however early they come; a
second one while stopping changes nothing. Exit codes: 0 stopped (or another host already
runs for the profile: it is reported and nothing starts), 1 the tree failed.
"""

from __future__ import annotations

import faulthandler
import logging
import signal
import sys
from collections.abc import Callable

import trio

from robota.core import SupervisorFailed
from robota.core.control import HostAlreadyRunning, HostState, acquire_host_lock

from .._engine_host import load_profile
from ._host import Host

__all__ = ["STOP_SIGNALS", "run_host"]

logger = logging.getLogger("robota.cli.host")

STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)


def run_host(*, on_running: Callable[[HostState | None, str], None]) -> int:
    """Run the host in this process until stopped; ``on_running`` reports a host that already
    runs for the profile (then nothing starts and the exit code is 0)."""
    config, profile = load_profile()
    try:
        lock = acquire_host_lock(profile.host_lock, profile.host_state_file)
    except HostAlreadyRunning as running:
        on_running(running.state, str(running))
        return 0
    if sys.stderr is not None and not sys.stderr.isatty():
        faulthandler.enable(sys.stderr)  # a detached host's stderr is logs/host.stderr.log
    with lock:
        host = Host(config, profile, lock)

        async def main() -> None:
            with trio.open_signal_receiver(*STOP_SIGNALS) as signals:
                async with trio.open_nursery() as nursery:

                    async def watch() -> None:
                        async for signum in signals:
                            logger.info("host: %s received", signal.Signals(signum).name)
                            host.stop()

                    nursery.start_soon(watch)
                    await host.run()
                    nursery.cancel_scope.cancel()

        try:
            trio.run(main)
        except SupervisorFailed as failed:
            logger.exception("host: the supervision tree failed")
            print(f"robota: the host failed: {failed}", file=sys.stderr)
            return 1
    return 0
