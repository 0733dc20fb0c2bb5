"""A would-be host in its own process: waits for "go", takes the host lock, publishes its
state, says whether it won, and holds the lock until its stdin closes.

Usage: python _lock_child.py RUNTIME_DIR WAIT_SECONDS [--spawn]

With ``--spawn`` the winner also starts a long-lived child the way a careless host might
start an agent (every descriptor inherited) and prints its pid.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from robota.core.control import HostAlreadyRunning, HostState, acquire_host_lock


def main() -> None:
    run, wait = Path(sys.argv[1]), float(sys.argv[2])
    print("ready", flush=True)
    sys.stdin.readline()
    try:
        lock = acquire_host_lock(run / "host.lock", run / "host.json", wait=wait)
    except HostAlreadyRunning as refused:
        print("lost", refused.state.pid if refused.state else "none", flush=True)
        return
    with lock:
        lock.publish(
            HostState.of_this_process(version="test", profile=run, socket=run / "control.sock")
        )
        print("won", os.getpid(), flush=True)
        if "--spawn" in sys.argv:
            agent = subprocess.Popen(["sleep", "60"], close_fds=False, start_new_session=True)
            print("spawned", agent.pid, flush=True)
        sys.stdin.read()
    print("released", flush=True)


if __name__ == "__main__":
    main()
