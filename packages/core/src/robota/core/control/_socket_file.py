"""The control socket's place in the file system: its owner-only directory, its address, and
telling a dead host's socket from a live one.

The runtime directory is made (or tightened to) 0700 and must be a real directory owned by
this user: the socket's own 0600 is then a second fence, and the peer-uid check a third.

A socket address holds at most 107 bytes on Linux (103 on macOS), shorter than many profile
paths. On Linux a longer path is reached through ``/proc/self/fd/N/``, ``N`` being an
``O_PATH`` descriptor of the socket's directory: the kernel resolves the directory from the
descriptor, so the socket still lands at its real path. Elsewhere a long path is a clear error.

A socket appears at its path only once it listens (``listening_socket``): it is bound and made
0600 under a private name beside it, set listening, then hard-linked into place, which fails
rather than replace a file that appeared meanwhile. A client that finds the file can so always
connect, and a second host starting at the same moment never takes a bound but not yet listening
socket for a dead one and removes it.

A socket file outlives a host that was killed. ``claim_socket_path`` connects to it: refused
means nobody listens and the file is removed; accepted means a live host, which is never
replaced (``SocketInUse`` names its pid).
"""

from __future__ import annotations

import contextlib
import errno
import os
import socket
import stat
import sys
from collections.abc import Iterator
from pathlib import Path

from ._errors import ControlError, SocketInUse, UnsafeRuntimeDir

__all__ = [
    "PRIVATE_DIR_MODE",
    "BoundSocketFile",
    "SOCKET_MODE",
    "claim_socket_path",
    "ensure_runtime_dir",
    "listening_socket",
    "socket_address",
]

PRIVATE_DIR_MODE = 0o700
SOCKET_MODE = 0o600
_MAX_ADDRESS = 103 if sys.platform == "darwin" else 107


def ensure_runtime_dir(path: Path) -> None:
    """Create ``path`` owner-only, or check and tighten an existing one.

    Unlike a profile's home, this directory is robota's alone, so an existing one that other
    users can read is tightened rather than respected.
    """
    try:
        info = path.lstat()
    except FileNotFoundError:
        path.parent.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(FileExistsError):  # a racing host made it: checked below
            path.mkdir(mode=PRIVATE_DIR_MODE)
        info = path.lstat()
    if not stat.S_ISDIR(info.st_mode):
        raise UnsafeRuntimeDir(f"{path}: expected a directory, found {_kind(info.st_mode)}")
    if info.st_uid != os.geteuid():
        raise UnsafeRuntimeDir(
            f"{path}: owned by uid {info.st_uid}, not by this user (uid {os.geteuid()})"
        )
    if stat.S_IMODE(info.st_mode) != PRIVATE_DIR_MODE:
        path.chmod(PRIVATE_DIR_MODE)


def _kind(mode: int) -> str:
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "a file" if stat.S_ISREG(mode) else "another kind of file"


@contextlib.contextmanager
def socket_address(path: Path) -> Iterator[str]:
    """An address that ``bind``/``connect`` accept for ``path``, valid inside the block."""
    text = os.fspath(path)
    if len(os.fsencode(text)) <= _MAX_ADDRESS:
        yield text
        return
    if not sys.platform.startswith("linux"):
        raise ControlError(
            f"{path}: a Unix socket path may hold {_MAX_ADDRESS} bytes on {sys.platform}; "
            "choose a profile directory with a shorter path"
        )
    # A missing directory raises FileNotFoundError here, as connect would for a short path.
    directory = os.open(path.parent, os.O_PATH | os.O_DIRECTORY)
    try:
        yield f"/proc/self/fd/{directory}/{path.name}"
    finally:
        os.close(directory)


def listening_socket(path: Path, backlog: int) -> socket.socket:
    """A Unix stream socket listening at ``path``, which did not exist a moment before and
    shows only a listening socket from its first moment (see the module's docstring).

    Raises ``SocketInUse`` when another socket took ``path`` since it was claimed.
    """
    staging = path.with_name(f".{path.name}.{os.getpid()}")
    with contextlib.suppress(FileNotFoundError):  # this pid's leftover, from a killed host
        staging.unlink()
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        with socket_address(staging) as address:
            sock.bind(address)
        try:
            staging.chmod(SOCKET_MODE)
            sock.listen(backlog)
            try:
                os.link(staging, path, follow_symlinks=False)
            except FileExistsError:
                raise SocketInUse(path, None) from None
        finally:
            staging.unlink()
    except BaseException:
        sock.close()
        raise
    return sock


def claim_socket_path(path: Path, *, timeout: float = 2.0) -> None:
    """Make ``path`` free for a new socket: remove a dead host's socket, refuse a live one."""
    try:
        info = path.lstat()
    except FileNotFoundError:
        return
    if not stat.S_ISSOCK(info.st_mode):
        raise ControlError(f"{path}: expected a socket, found {_kind(info.st_mode)}; not removed")
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    probe.settimeout(timeout)
    try:
        with socket_address(path) as address:
            probe.connect(address)
    except (ConnectionRefusedError, FileNotFoundError):
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
        return
    except TimeoutError:
        # Accepted into a full backlog and never served: a live host, too busy to answer.
        raise SocketInUse(path, None) from None
    except OSError as error:
        if error.errno == errno.EAGAIN:  # Linux: the listener's backlog is full
            raise SocketInUse(path, None) from None
        raise
    else:
        try:
            pid = _peer_pid(probe)
        except OSError:
            pid = None
        raise SocketInUse(path, pid)
    finally:
        probe.close()


class BoundSocketFile:
    """The socket file a host bound, recognisable later among files at the same path.

    A successor may bind a new socket at the path after this one's was removed, and a file
    system reuses a freed inode number at once. On Linux an ``O_PATH`` descriptor keeps this
    file's inode alive, so its number cannot be reused while the host runs; elsewhere the
    change time joins the number (a file created later has a later one).
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        pin_flags = getattr(os, "O_PATH", 0)
        self._pin = os.open(path, pin_flags | os.O_NOFOLLOW) if pin_flags else None
        self._identity = self._identify(path.lstat())

    def _identify(self, info: os.stat_result) -> tuple[int, ...]:
        if self._pin is not None:
            return (info.st_dev, info.st_ino)
        return (info.st_dev, info.st_ino, info.st_ctime_ns)

    def remove(self) -> None:
        """Unlink the path if it still is this file; a successor's socket stays."""
        try:
            with contextlib.suppress(FileNotFoundError):
                if self._identify(self.path.lstat()) == self._identity:
                    self.path.unlink()
        finally:
            if self._pin is not None:
                os.close(self._pin)
                self._pin = None


def _peer_pid(probe: socket.socket) -> int | None:
    # The host's side alone asks who listens: a client connecting loads no peer credentials.
    from ._peer import peer_credentials  # noqa: PLC0415

    return peer_credentials(probe).pid
