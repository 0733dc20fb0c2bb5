"""Who is on the other end of a Unix socket, as the kernel says.

File modes keep other users away from the control socket only while nobody loosens them; the
kernel's record of the connecting process cannot be loosened. Linux gives it as
``SO_PEERCRED`` (pid, uid, gid at ``connect`` time); macOS and the BSDs as ``LOCAL_PEERCRED``
(an ``xucred``: no pid), which is what ``getpeereid`` reads. Elsewhere ``peer_credentials``
raises ``OSError``, and the server refuses the connection: unknown means no.
"""

from __future__ import annotations

import socket
import struct
import sys
from dataclasses import dataclass
from typing import Protocol

__all__ = ["PeerCredentials", "peer_credentials"]

_UCRED = struct.Struct("3i")  # struct ucred: pid, uid, gid
_XUCRED = struct.Struct("IIh16I")  # struct xucred: version, uid, ngroups, groups[16]
_PLATFORM: str = sys.platform  # a plain str: every branch below is checked on every platform
_SOL_LOCAL = 0
_LOCAL_PEERCRED = 1


class _Socket(Protocol):
    def getsockopt(self, level: int, option: int, buflen: int, /) -> bytes: ...


@dataclass(frozen=True, slots=True)
class PeerCredentials:
    uid: int
    pid: int | None
    """Known on Linux; ``None`` where the platform does not say."""


def peer_credentials(sock: _Socket) -> PeerCredentials:
    """The credentials of the process that connected ``sock`` (a connected ``AF_UNIX``
    socket, stdlib or trio)."""
    if _PLATFORM.startswith("linux"):
        pid, uid, _gid = _UCRED.unpack(
            sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, _UCRED.size)
        )
        return PeerCredentials(uid=uid, pid=pid if pid > 0 else None)
    if _PLATFORM == "darwin" or "bsd" in _PLATFORM:
        raw = sock.getsockopt(_SOL_LOCAL, _LOCAL_PEERCRED, _XUCRED.size)
        _version, uid, *_groups = _XUCRED.unpack(raw[: _XUCRED.size])
        return PeerCredentials(uid=uid, pid=None)
    raise OSError(f"peer credentials of a Unix socket are not available on {_PLATFORM}")
