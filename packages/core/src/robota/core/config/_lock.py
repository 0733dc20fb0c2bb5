"""The init lock: one ``robota init`` at a time per profile.

``flock`` is tied to the open file, so the kernel releases it when the holder exits for any
reason, crash and ``kill -9`` included: a dead holder never blocks the next init, and there is
no stale-lock heuristic to get wrong. The file stays behind on purpose (deleting a lock file
races with the next locker); it holds the pid of the last holder, for the waiting message.
"""

from __future__ import annotations

import fcntl
import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from robota.core._errors import RobotaError

from ._files import PRIVATE_FILE_MODE

__all__ = ["InitLockTimeout", "init_lock"]

_POLL = 0.05


class InitLockTimeout(RobotaError, TimeoutError):
    """Another live process held the init lock for longer than we were willing to wait."""


def _holder(fd: int) -> int | None:
    try:
        text = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


@contextmanager
def init_lock(
    path: Path,
    *,
    timeout: float = 120.0,
    on_wait: Callable[[int | None], None] | None = None,
) -> Iterator[None]:
    """Hold the exclusive lock at ``path`` for the ``with`` block.

    ``on_wait(pid)`` is called once if another process holds it, so a command can say what it
    is waiting for; ``InitLockTimeout`` is raised after ``timeout`` seconds.
    """
    fd = os.open(path, os.O_RDWR | os.O_CREAT, PRIVATE_FILE_MODE)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _holder(fd)
            if on_wait is not None:
                on_wait(holder)
            deadline = time.monotonic() + timeout
            while True:
                time.sleep(_POLL)
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() >= deadline:
                        who = f"process {holder}" if holder else "another process"
                        raise InitLockTimeout(
                            f"{path}: held by {who} for more than {timeout:g} s"
                        ) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        yield
    finally:
        os.close(fd)  # closing the last descriptor releases the lock
