"""The handoff's crash points for the chaos tests, inert unless a test arms them.

A handoff is safe under crashes only if every moment between two of its transactions is; the
chaos tests (``tests/mesh/_handoff_chaos.py``, ``tools/handoff_chaos.py``) need to kill a host
exactly there, not somewhere near. ``pause_at(moment)`` is called right after the transaction
that defines ``moment``; when ``ROBOTA_TEST_HANDOFF_PAUSE`` names a file that lists ``moment``
(one a line), the host stops itself (``SIGSTOP``, every thread at once) and the test, which
watches for the stop, kills it or the other side or both. Unset (every real run), it reads an
environment variable and returns.

The moments (``HANDOFF_MOMENTS``), each on the side whose transaction defines it:

* ``offered``: the destination recorded the offer;
* ``mid-transfer``: the destination wrote payload bytes to its partial file, not yet checked;
* ``staged``: the destination recorded ``staged`` with the staged file's path;
* ``committed``: the destination saved the task held, before its acknowledgement is sent;
* ``acked``: the source verified the acknowledgement, before it records the let-go.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path

__all__ = ["HANDOFF_MOMENTS", "PAUSE_ENV", "pause_at"]

PAUSE_ENV = "ROBOTA_TEST_HANDOFF_PAUSE"
HANDOFF_MOMENTS = ("offered", "mid-transfer", "staged", "committed", "acked")


def pause_at(moment: str) -> None:
    """Stop this process here when a test armed ``moment`` (module docstring)."""
    armed = os.environ.get(PAUSE_ENV)
    if not armed:
        return
    try:
        moments = Path(armed).read_text(encoding="utf-8").split()
    except OSError:
        return
    if moment in moments:
        os.kill(os.getpid(), signal.SIGSTOP)
