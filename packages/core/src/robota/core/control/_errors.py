"""What the control endpoint and the host lock raise, under ``robota.core.RobotaError``.

ControlError                  anything about reaching or running the local host
├── NoHostRunning             no socket, or nobody listens on it: start a host first
├── HostRefused                 the host answered, with an error reply (code, message, field)
├── HostUnreachable           the host did not answer in time, or hung up mid-reply
├── SocketInUse               a live host already listens on this socket (its pid if known)
├── HostAlreadyRunning        the profile's host lock is held (the running host's state;
│                             in ``_host_lock``, beside the ``HostState`` it carries)
└── UnsafeRuntimeDir          the runtime directory is not a directory this user owns
"""

from __future__ import annotations

from pathlib import Path

from robota.core._errors import RobotaError

__all__ = [
    "ControlError",
    "HostRefused",
    "HostUnreachable",
    "NoHostRunning",
    "SocketInUse",
    "UnsafeRuntimeDir",
]


class ControlError(RobotaError):
    """Base of the errors about the local host and its control endpoint."""


class NoHostRunning(ControlError):
    """Nothing serves the control socket: it is missing, or connecting to it is refused."""

    def __init__(self, socket_path: Path, why: str) -> None:
        super().__init__(f"no robota host is running for this profile ({socket_path}: {why})")
        self.socket_path = socket_path


class HostRefused(ControlError):
    """The host answered a request with an error reply."""

    def __init__(self, request_type: str, code: str, message: str, field: str | None) -> None:
        super().__init__(f"the host refused {request_type!r}: {message} [{code}]")
        self.request_type = request_type
        self.code = code
        self.message = message
        self.field = field


class HostUnreachable(ControlError):
    """A connection was made but no usable reply came: a timeout, a hang-up or garbage."""


class SocketInUse(ControlError):
    """Another live process accepts connections on the socket a host wanted to bind."""

    def __init__(self, socket_path: Path, pid: int | None) -> None:
        who = f"process {pid}" if pid is not None else "another process"
        super().__init__(f"{socket_path} is served by {who}; not replacing a live socket")
        self.socket_path = socket_path
        self.pid = pid


class UnsafeRuntimeDir(ControlError):
    """The runtime directory exists but is not a plain directory owned by this user."""
