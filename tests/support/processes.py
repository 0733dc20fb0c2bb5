"""What a test left running: the live processes whose environment puts HOME in its sandbox
(found through ``/proc``), and ending their process groups."""

from __future__ import annotations

import os
import signal
from collections.abc import Callable
from pathlib import Path


def processes_with_home_under(root: Path) -> list[int]:
    """Live processes whose environment puts HOME below ``root``: the isolated agents and
    anything they started."""
    marker = f"HOME={root}".encode()
    return live_processes(lambda environ: any(v.startswith(marker) for v in environ))


def kill_processes_with_home_under(root: Path) -> None:
    """SIGKILL the process groups of the sandbox's own processes (their HOME is in it): what a
    failed test left. A host or a background session leads a session of its own, so its
    group is its pid."""
    for pid in processes_with_home_under(root):
        try:
            os.killpg(os.getpgid(pid), signal.SIGKILL)
        except ProcessLookupError:
            pass


def live_processes(environ_matches: Callable[[list[bytes]], bool]) -> list[int]:
    """Pids of the processes (zombies excepted) whose environment entries match."""
    found = []
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            environ = (proc / "environ").read_bytes()
            state = (proc / "stat").read_text().split(") ", 1)[1][0]
        except OSError:
            continue
        if state != "Z" and environ_matches(environ.split(b"\0")):
            found.append(int(proc.name))
    return found
