"""Running the real ``robota`` script with a pseudo-terminal as its *controlling* terminal.

Standard input is /dev/null and standard output and error are pipes, so a test sees apart
what the command printed and what it showed on ``/dev/tty``; the pty is made the controlling
terminal of a new session (``TIOCSCTTY``), as a terminal window's shell does. ``Step``s wait
for a text on the terminal and then type; ``while_waiting`` runs at each step against the
live process (to read its argv and environment while it waits for a secret).
"""

from __future__ import annotations

import fcntl
import os
import pty
import select
import subprocess
import sys
import termios
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

ROBOTA = Path(sys.executable).with_name("robota")


@dataclass
class Step:
    wait_for: str
    """A text to wait for on the terminal (searched after the previous step's)."""
    then: Callable[[str], str]
    """What to type, given the terminal's text so far."""


@dataclass
class Run:
    code: int
    stdout: str
    stderr: str
    screen: str
    """Everything the command wrote to its terminal."""


def run_on_terminal(
    args: Sequence[str],
    env: dict[str, str],
    cwd: Path,
    steps: Sequence[Step] = (),
    *,
    while_waiting: Callable[[int], None] | None = None,
    timeout: float = 60,
) -> Run:
    master, slave = pty.openpty()

    def controlling_terminal() -> None:
        os.setsid()
        fcntl.ioctl(slave, termios.TIOCSCTTY, 0)

    process = subprocess.Popen(
        [str(ROBOTA), *args],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        cwd=cwd,
        pass_fds=(slave,),
        preexec_fn=controlling_terminal,  # noqa: PLW1509 (a test's single-threaded spawn)
    )
    os.close(slave)
    assert process.stdout is not None and process.stderr is not None
    out, err = process.stdout.fileno(), process.stderr.fileno()
    streams = {master: b"", out: b"", err: b""}
    open_fds = set(streams)
    pending = list(steps)
    searched = 0
    deadline = time.monotonic() + timeout
    try:
        while open_fds and time.monotonic() < deadline:
            ready, _, _ = select.select(list(open_fds), [], [], 0.05)
            for fd in ready:
                try:
                    chunk = os.read(fd, 4096)
                except OSError:  # EIO: the terminal's other side is gone
                    chunk = b""
                if not chunk:
                    open_fds.discard(fd)
                    continue
                streams[fd] += chunk
            screen = streams[master].decode("utf-8", "replace")
            if pending:
                found = screen.find(pending[0].wait_for, searched)
                if found != -1:
                    searched = found + len(pending[0].wait_for)
                    if while_waiting is not None:
                        while_waiting(process.pid)
                    os.write(master, pending.pop(0).then(screen).encode())
            if process.poll() is not None and master in open_fds and not ready:
                open_fds.discard(master)
        code = process.wait(timeout=max(1.0, deadline - time.monotonic()))
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        os.close(master)
        process.stdout.close()
        process.stderr.close()
    return Run(
        code,
        streams[out].decode(),
        streams[err].decode(),
        streams[master].decode("utf-8", "replace").replace("\r\n", "\n"),
    )
