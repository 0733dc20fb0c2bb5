"""The reaper: agent process groups end with robota, even when robota is SIGKILLed.

Each agent runs in a session of its own (so its whole tree can be signalled), which also means
nothing ends it when robota dies without its ``shutdown``: an agent that ignores the end of its
stdin (codex-acp, claude-agent-acp do) would run on, unowned, maybe still editing files. Linux's
parent-death signal does not fit: it fires when the *thread* that spawned the child exits, and
trio spawns from worker threads that come and go.

So each robota process starts, with its first agent, one small watcher process: a POSIX shell
script (about 1 MB and a millisecond to start, where a Python one takes 12 MB), in a session of
its own so a Ctrl-C in the terminal does not reach it. robota tells it over a pipe which
process groups to watch (``+PGID``) and which ended normally (``-PGID``). The pipe's write end
belongs to robota alone (close-on-exec), so the watcher reads end-of-file exactly when robota
is gone, however it died; it then sends the groups it still watches SIGTERM, waits up to
``grace`` seconds for them to empty, SIGKILLs what is left, and exits. Lines that are not
``+N`` / ``-N`` with N > 1 are ignored: it never signals group 0 or 1.

Process groups are identified by their leader's pid, which cannot be reused while the leader's
parent (robota) has not reaped it; robota forgets a group only after it reaped the leader and
emptied the group, so a watched id always names an agent's group.

A group is named only once its leader's pid is known, after the spawn: a robota killed between
the fork and ``watch`` (the host, SIGKILLed while its first turn spawns the agent) would leave
an agent nobody names. So every child robota starts also carries this process's mark in its
environment (``MARK``, a random value, from ``marked``, which starts the watcher first), as
Jenkins marks a build's processes with ``BUILD_ID``; at end-of-file the watcher also ends the
groups of every process whose environment holds the mark (``/proc/*/environ``, where there is
a ``/proc``). The mark also reaches what the agents start in sessions of their own, and the
terminals robota runs for ACP agents. robota scrubs inherited ``ROBOTA_*`` names from what it
spawns, so a robota started by an agent marks its own children with its own mark, and a
detached host or session drops it (it is meant to outlive whoever started it).
"""

from __future__ import annotations

import atexit
import os
import subprocess
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import logging

__all__ = [
    "MARK",
    "REAPER",
    "WATCHER",
    "Reaper",
    "live_members",
    "process_logger",
    "watcher_command",
]

MARK = "ROBOTA_REAPER_MARK"
"""The environment variable that marks the processes one robota started (its value: random
hex, different in each robota process; never a secret)."""


def process_logger() -> logging.Logger:
    """The agent processes' logger, loading ``logging`` on first use: print mode spawns its
    agent through this module and the prestart, and ``logging`` (with ``traceback``,
    ``string`` and ``textwrap``, about 8 ms) need not come before that spawn."""
    import logging  # noqa: PLC0415

    return logging.getLogger("robota.runtimes.process")


class Reaper:
    """robota's side: starts the watcher on first use and tells it about groups. Thread-safe."""

    def __init__(self, *, grace: float = 2.0) -> None:
        self._grace = grace
        self._lock = threading.Lock()
        self._process: subprocess.Popen[str] | None = None
        self._watched: set[int] = set()
        self._closes_at_exit = False
        self._mark = os.urandom(8).hex()

    def marked(self, env: Mapping[str, str]) -> dict[str, str]:
        """``env`` with this process's mark, for a child about to be spawned; the watcher is
        running (and knows the mark) before this returns, so the child is covered from its
        first instant, even if robota dies before ``watch`` names its group."""
        with self._lock:
            self._watcher()
        return {**env, MARK: self._mark}

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

    def close(self) -> None:
        """Do what robota's death does: the watcher ends the groups still watched, and exits."""
        with self._lock:
            process, self._process = self._process, None
            self._watched.clear()
        if process is not None and process.stdin is not None:
            process.stdin.close()
            try:
                process.wait(timeout=self._grace + 5)
            except subprocess.TimeoutExpired:
                process_logger().warning(
                    "agent reaper: the watcher did not end (pid %d)", process.pid
                )

    def _watcher(self) -> tuple[subprocess.Popen[str] | None, bool]:
        """The running watcher (started on first use, or again if it was killed), and whether
        it is new: a new one learns every watched group. Called with the lock held."""
        process = self._process
        if process is not None and process.poll() is None:
            return process, False
        process = self._process = self._start()
        if process is not None and self._watched:
            self._write(process, [f"+{pgid}" for pgid in sorted(self._watched)])
        return process, True

    def _send(self, line: str) -> None:
        process, new = self._watcher()
        if process is not None and not new:
            self._write(process, [line])

    @staticmethod
    def _write(process: subprocess.Popen[str], lines: list[str]) -> None:
        stdin = process.stdin
        assert stdin is not None
        try:
            stdin.write("".join(f"{item}\n" for item in lines))
            stdin.flush()
        except OSError as error:
            process_logger().warning("agent reaper: cannot reach the watcher: %s", error)

    def _start(self) -> subprocess.Popen[str] | None:
        if not self._closes_at_exit:
            # A clean exit does what death does, but also reaps the watcher: without it the
            # interpreter's last garbage collection finds a Popen whose child still runs.
            atexit.register(self.close)
            self._closes_at_exit = True
        try:
            return subprocess.Popen(
                watcher_command(self._grace, self._mark),
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
                text=True,
                env={"PATH": "/usr/bin:/bin"},  # robota's secrets stay in robota
            )
        except OSError as error:
            process_logger().warning("agent reaper: cannot start the watcher: %s", error)
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


WATCHER = r"""
trap '' INT HUP PIPE
grace=$1 entry=$2
g=' '
while IFS= read -r l; do
  n=${l#[+-]}
  case $n in ''|*[!0-9]*) continue;; esac
  [ "$n" -gt 1 ] || continue
  case $l in
    +*) case $g in *" $n "*) ;; *) g="$g$n ";; esac;;
    -*) case $g in *" $n "*) g="${g%% $n *} ${g#* $n }";; esac;;
  esac
done
if [ -n "$entry" ]; then
  for f in $(grep -lzxF "$entry" /proc/[0-9]*/environ 2>/dev/null); do
    IFS= read -r s < "${f%/environ}/stat" 2>/dev/null || continue
    set -- ${s##*) }
    n=$3
    case $n in ''|*[!0-9]*) continue;; esac
    [ "$n" -gt 1 ] || continue
    case $g in *" $n "*) ;; *) g="$g$n ";; esac
  done
fi
for n in $g; do kill -TERM -"$n" 2>/dev/null; done
i=0
while [ "$i" -lt "$grace" ]; do
  left=
  for n in $g; do kill -0 -"$n" 2>/dev/null && left=1; done
  [ -n "$left" ] || exit 0
  sleep 0.1
  i=$((i + 1))
done
for n in $g; do kill -KILL -"$n" 2>/dev/null; done
"""
"""The watcher: ``$1`` is the grace in tenths of a second, ``$2`` the mark's environment entry
(``MARK=value``; empty: none). A marked process's group is field 5 of ``/proc/PID/stat``, read
after the command name's closing parenthesis. (A group of zombies counts as alive to ``kill -0``
until init reaps them, which some containers' init never does: then the grace runs out and the
SIGKILL finds nothing.)"""


def watcher_command(grace: float, mark: str = "") -> list[str]:
    entry = f"{MARK}={mark}" if mark else ""
    return ["/bin/sh", "-c", WATCHER, "robota-reaper", str(max(1, round(grace * 10))), entry]
