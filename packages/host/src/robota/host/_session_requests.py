"""The requests a background session serves on its own control endpoint.

Everything that acts on the session (``session.send``, ``session.stop``, ``session.rename``)
names the process start its caller read: the registration's ``generation``. The session
refuses any other (``stale_generation``), so a request meant for a start that ended never
reaches the one that replaced it under the same id. ``session.status`` is content-free and
needs no generation: it is what ``session list`` asks a verified owner. ``session.surface``
hands the session's WebSocket URL (its token in it) to a caller on this owner-only socket.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

__all__ = [
    "SESSION_KIND",
    "SessionRename",
    "SessionSend",
    "SessionStatus",
    "SessionStop",
    "SessionSurface",
]

SESSION_KIND = "session"
"""The route kind of a background session (``session:ID``): no host serves or recovers it."""


@dataclass(frozen=True, slots=True)
class SessionStatus:
    """The session's state (working, needs-input, idle), id, name, agent, flags; no content."""

    TYPE: ClassVar[str] = "session.status"


@dataclass(frozen=True, slots=True)
class SessionSend:
    """A prompt to the session's task, as ``task.send`` takes one (``wait``, ``timeout``)."""

    TYPE: ClassVar[str] = "session.send"
    generation: str
    text: str
    wait: bool = False
    timeout: float | None = None


@dataclass(frozen=True, slots=True)
class SessionStop:
    """End the session: its tree stops, its agents end, its registration is removed."""

    TYPE: ClassVar[str] = "session.stop"
    generation: str


@dataclass(frozen=True, slots=True)
class SessionRename:
    """A new name for the session (its registration's, and its task's title)."""

    TYPE: ClassVar[str] = "session.rename"
    generation: str
    name: str


@dataclass(frozen=True, slots=True)
class SessionSurface:
    """The session's loopback WebSocket URL, its per-start token in it (``{"url"}``).

    Asked only over the control socket (0600 in the 0700 rendezvous directory, the peer's
    uid checked) and only by the operator, as ``session.attach`` is: the token drives the
    session, its approvals included, so an agent robota started is refused it (the ancestry
    check of ``operator=True``). It is never on disk, in argv or env."""

    TYPE: ClassVar[str] = "session.surface"
    generation: str
