"""One host per profile: the host lock, the state file it guards, and the status probe.

``flock`` belongs to the open file, so the kernel releases it when its holder exits for any
reason, ``kill -9`` included: a dead host never keeps the next one out, and there is no
stale-lock heuristic. The lock file is never deleted (deleting a lock file races with the next
locker); it holds the pid of its last holder, for messages.

``acquire_host_lock`` either returns the held lock or raises ``HostAlreadyRunning`` with the
running host's state. Between a host taking the lock and publishing its state there is a short
window; a second starter that finds the lock busy therefore polls (up to ``wait`` seconds) until
it either gets the lock (the holder died or was only a status probe) or sees the holder's
state. A status probe takes the lock shared for an instant, so "busy" is only believed when it
is seen twice in a row together with a live state.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import time
from pathlib import Path
from types import TracebackType
from typing import Protocol

from ._errors import ControlError
from ._host_state import (
    HostPresence,
    HostState,
    judge_presence,
    pid_alive,
    read_host_state,
)
from ._socket_file import ensure_runtime_dir

__all__ = ["HostAlreadyRunning", "HostLock", "acquire_host_lock", "probe_host"]


class HostAlreadyRunning(ControlError):
    """The profile's host lock is held: ``state`` is the running host's, when it published
    one (a host that has just taken the lock may not have yet)."""

    def __init__(self, lock_path: Path, state: HostState | None, holder: int | None) -> None:
        if state is not None:
            what = f"a robota host is already running (pid {state.pid}, socket {state.socket})"
        else:
            who = f"process {holder}" if holder is not None else "another process"
            what = f"{lock_path} is held by {who}, which has not published its state"
        super().__init__(what)
        self.lock_path = lock_path
        self.state = state
        self.holder = holder


_POLL = 0.05
_LOCK_FILE_MODE = 0o600


class Publishable(Protocol):
    """What a lock's holder publishes: the host's state, a background session's registration."""

    def to_json(self) -> bytes: ...


class HostLock:
    """The held host lock of one profile; ``release`` (or leaving the ``with``) lets go."""

    def __init__(self, fd: int, lock_path: Path, state_path: Path) -> None:
        self._fd: int | None = fd
        self.lock_path = lock_path
        self.state_path = state_path

    @property
    def held(self) -> bool:
        return self._fd is not None

    def publish(self, state: Publishable) -> None:
        """Write the state file atomically (0600), for ``status`` and for a second starter."""
        if self._fd is None:
            raise RuntimeError("the host lock was released; its state cannot be published")
        # Only the host publishes; a status command should not load the config package.
        from robota.core.config import atomic_write  # noqa: PLC0415

        atomic_write(self.state_path, state.to_json())

    def release(self) -> None:
        """Remove the state file, then the lock: nobody sees a free lock with a live state."""
        if self._fd is None:
            return
        with contextlib.suppress(FileNotFoundError):
            self.state_path.unlink()
        os.close(self._fd)  # closing the descriptor releases the flock
        self._fd = None

    def __enter__(self) -> HostLock:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.release()


def _holder(fd: int) -> int | None:
    try:
        text = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


def _try_lock(fd: int, operation: int) -> bool:
    try:
        fcntl.flock(fd, operation | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def _wait_for_lock(fd: int, lock_path: Path, state_path: Path, deadline: float) -> None:
    busy_before = False
    while not _try_lock(fd, fcntl.LOCK_EX):
        state, _problem = read_host_state(state_path)
        if busy_before and state is not None and pid_alive(state.pid):
            raise HostAlreadyRunning(lock_path, state, _holder(fd))
        if time.monotonic() >= deadline:
            raise HostAlreadyRunning(lock_path, None, _holder(fd))
        busy_before = True
        time.sleep(_POLL)


def acquire_host_lock(lock_path: Path, state_path: Path, *, wait: float = 5.0) -> HostLock:
    """Take the profile's host lock, or raise ``HostAlreadyRunning`` naming the running host.

    Creates the runtime directory (owner-only) if needed. ``wait`` bounds how long a busy lock
    without a published state is waited for.
    """
    ensure_runtime_dir(lock_path.parent)
    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, _LOCK_FILE_MODE)
    try:
        _wait_for_lock(fd, lock_path, state_path, time.monotonic() + wait)
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
    except BaseException:
        os.close(fd)
        raise
    return HostLock(fd, lock_path, state_path)


def _lock_held(lock_path: Path) -> bool:
    try:
        fd = os.open(lock_path, os.O_RDONLY)
    except FileNotFoundError:
        return False
    try:
        return not _try_lock(fd, fcntl.LOCK_SH)
    finally:
        os.close(fd)  # releases the shared lock if the probe took it


def probe_host(lock_path: Path, state_path: Path) -> HostPresence:
    """Whether a host runs for the profile, without starting or changing anything."""
    held = _lock_held(lock_path)
    state, problem = read_host_state(state_path)
    return judge_presence(
        lock_held=held,
        state=state,
        state_problem=problem,
        state_pid_alive=state is not None and pid_alive(state.pid),
    )
