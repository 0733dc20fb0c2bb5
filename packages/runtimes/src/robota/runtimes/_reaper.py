"""The reaper: agent process groups end with robota, even when robota is SIGKILLed.

Each agent runs in a session of its own (so its whole tree can be signalled), which also means
nothing ends it when robota dies without its ``shutdown``: an agent that ignores the end of its
stdin (codex-acp, claude-agent-acp do) would run on, unowned, maybe still editing files. Linux's
parent-death signal does not fit: it fires when the *thread* that spawned the child exits, and
trio spawns from worker threads that come and go.

So each robota process starts, with its first agent, one small watcher process (this file run
as a script, standard library only, in a session of its own so a Ctrl-C in the terminal does
not reach it). robota tells it over a pipe which process groups to watch (``+PGID``) and which
ended normally (``-PGID``). The pipe's write end belongs to robota alone (close-on-exec), so
the watcher reads end-of-file exactly when robota is gone, however it died; it then sends the
groups it still watches SIGTERM, waits ``grace`` seconds, SIGKILLs what is left, and exits.

Process groups are identified by their leader's pid, which cannot be reused while the leader's
parent (robota) has not reaped it; robota forgets a group only after it reaped the leader and
emptied the group, so a watched id always names an agent's group.
"""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import IO

__all__ = ["REAPER", "Reaper", "live_members"]

logger = logging.getLogger("robota.runtimes.process")


class Reaper:
    """robota's side: starts the watcher on first use and tells it about groups. Thread-safe."""

    def __init__(self, *, grace: float = 2.0) -> None:
        self._grace = grace
        self._lock = threading.Lock()
        self._process: subprocess.Popen[str] | None = None
        self._watched: set[int] = set()

    def watch(self, pgid: int) -> None:
        with self._lock:
            self._watched.add(pgid)
            self._send(f"+{pgid}")

    def forget(self, pgid: int) -> None:
        with self._lock:
            if pgid in self._watched:
                self._watched.discard(pgid)
                self._send(f"-{pgid}")

    @property
    def pid(self) -> int | None:
        """The watcher's pid, once started (for tests)."""
        return self._process.pid if self._process is not None else None

    def _send(self, line: str) -> None:
        process = self._process
        if process is None or process.poll() is not None:
            # First use, or the watcher was killed: a new one learns every watched group.
            process = self._process = self._start()
            if process is None:
                return
            lines = [f"+{pgid}" for pgid in sorted(self._watched)]
        else:
            lines = [line]
        stdin = process.stdin
        assert stdin is not None
        try:
            stdin.write("".join(f"{item}\n" for item in lines))
            stdin.flush()
        except OSError as error:
            logger.warning("agent reaper: cannot reach the watcher: %s", error)

    def _start(self) -> subprocess.Popen[str] | None:
        try:
            return subprocess.Popen(
                [sys.executable, "-I", "-S", str(Path(__file__)), str(self._grace)],
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
                text=True,
                env={},  # it needs nothing, and robota's secrets stay in robota
            )
        except OSError as error:
            logger.warning("agent reaper: cannot start the watcher: %s", error)
            return None


REAPER = Reaper()
"""The one reaper of this process."""


def live_members(pgid: int) -> int:
    """Members of process group ``pgid`` that are not zombies (a zombie is done, but counts for
    ``killpg`` until someone reaps it, and a container's init may never). -1: unknown (no
    /proc), so the caller goes by ``killpg`` alone."""
    proc = Path("/proc")
    if not proc.is_dir():
        return -1
    count = 0
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[-1].split()
        if len(fields) > 2 and fields[2] == str(pgid) and fields[0] != "Z":
            count += 1
    return count


# -- the watcher process -----------------------------------------------------------------------


def watch(lines: IO[str], grace: float) -> None:
    """Read ``+PGID`` / ``-PGID`` lines until end-of-file, then end the groups still watched."""
    groups: set[int] = set()
    for line in lines:
        text = line.strip()
        if len(text) < 2 or text[0] not in "+-" or not text[1:].isdigit() or int(text[1:]) < 2:
            continue  # never signal group 0 or 1, whatever arrives
        (groups.add if text[0] == "+" else groups.discard)(int(text[1:]))
    left = [g for g in groups if _signal(g, signal.SIGTERM)]
    deadline = time.monotonic() + grace
    while left and time.monotonic() < deadline:
        time.sleep(0.05)
        left = [g for g in left if live_members(g) != 0 and _signal(g, 0)]
    for group in left:
        _signal(group, signal.SIGKILL)


def _signal(pgid: int, signum: int) -> bool:
    try:
        os.killpg(pgid, signum)
    except (ProcessLookupError, PermissionError):
        return False
    return True


if __name__ == "__main__":
    for ignored in (signal.SIGINT, signal.SIGHUP, signal.SIGPIPE):
        signal.signal(ignored, signal.SIG_IGN)
    watch(sys.stdin, float(sys.argv[1]) if len(sys.argv) > 1 else 2.0)
