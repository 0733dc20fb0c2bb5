"""Telling this profile's host that a terminal's turn began or ended (``turns.changed``).

A team's operator priority counts the turns the operator runs from a terminal on the team's
project (``robota.host._teams``: the store says which turns run). The host reads the store when
it is told, so a teammate's write that arrives right after the operator pressed Enter already
waits instead of slipping in before the next poll.

Best-effort and off the front end's path: nothing when no host runs (no socket: most
terminals), otherwise one short-lived daemon thread per call with a short timeout; a host that
does not answer loses nothing, its poll reads the same store a moment later.
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path

__all__ = ["HostBeacon"]

logger = logging.getLogger("robota.cli")

TIMEOUT = 2.0
"""Seconds one telling may take, connecting included."""


class HostBeacon:
    """Call it when a turn began or ended; it tells the host at ``socket_path``, if any."""

    def __init__(self, socket_path: Path) -> None:
        self.socket_path = socket_path

    def __call__(self) -> None:
        if not self.socket_path.exists():
            return
        threading.Thread(target=self._tell, name="robota-host-beacon", daemon=True).start()

    def _tell(self) -> None:
        from robota.core.control import ControlClient, ControlError  # noqa: PLC0415

        try:
            with ControlClient(self.socket_path, timeout=TIMEOUT) as client:
                client.call("turns.changed")
        except (ControlError, OSError) as error:
            logger.debug("the host was not told of the turn: %s", error)
