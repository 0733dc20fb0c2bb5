"""``run_host`` as a process of its own (``python host_process.py``), as ``robota server run``
will run it: the profile comes from ROBOTA_HOME; a host already running is printed."""

from __future__ import annotations

import sys

from robota.core.control import HostState
from robota.host import run_host


def already_running(state: HostState | None, message: str) -> None:
    print(f"already running: pid {state.pid if state else None}: {message}", flush=True)


if __name__ == "__main__":
    sys.exit(run_host(on_running=already_running))
