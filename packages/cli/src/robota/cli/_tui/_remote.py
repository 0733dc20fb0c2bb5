"""The TUI attached to a background session: the session's route reached over its control
socket instead of an engine in this process.

``RemoteSession`` is a ``RouteHub`` (what ``FrontEndPort`` connects to): a reader thread
decodes the session's notice frames (``robota.core.protocol``'s attach frames) and delivers
them, so the TUI reads a real ``RouteLink`` exactly as it reads its own engine's; requests
become frames on the socket. ``RemoteLink`` is the app's ``EngineLink``: the task is the
session's, so there is nothing to pick or resume. Closing the app closes the connection,
which only detaches: the session and a turn it runs go on.

The terminal speaks the protocol's ``PROTOCOL_VERSION`` and keeps the ``seq`` of the last notice
it got (``last_seq``): when the connection drops under it (the session cut it off for reading
too slowly, say) it attaches again with it, at most ``REATTACH_TRIES`` times in a row without a
frame read, and is sent what it missed meanwhile, or told that the session no longer has all
of it (a ``resume_gap``, shown as a note). A session of an older
robota that refuses the ``protocol`` field is asked again as version 1.

Stdlib, ``robota.core.protocol`` and the engine's notices only (``robota.core.frontend`` for
types).
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from robota.core import RobotaError
from robota.core.engine import RouteReply
from robota.core.protocol import (
    MAX_FRAME,
    PROTOCOL_VERSION,
    LineSplitter,
    Overlong,
    ProtocolError,
    check_seq,
    decode_frame,
    encode_frame,
    encode_request,
    loads_strict,
    notice_from_json,
    request_to_frame,
)

if TYPE_CHECKING:
    from robota.core.engine import FrontEndRequest
    from robota.core.frontend import RouteLink
    from robota.core.store import Task, TurnAttempt

__all__ = ["REATTACH_TRIES", "AttachRefused", "RemoteLink", "RemoteSession"]

REATTACH_TRIES = 3
"""Attaches again after a dropped connection, in a row without a frame read in between."""


class AttachRefused(RobotaError):
    """The session did not take the attach; the message says why."""


class RemoteSession:
    """One attach connection (see the module docstring)."""

    def __init__(self, sock: socket.socket, hello: dict[str, Any], leftover: list[bytes]) -> None:
        self.sock = sock
        self.hello = hello
        self.last_seq: int | None = _hello_seq(hello)
        """The seq of the last notice this terminal got (``None``: the session numbers none
        for it, a version 1 session); what ``open`` takes to resume."""
        self._lines = leftover
        self._send_lock = threading.Lock()
        self._link: RouteLink | None = None
        self._closed = False
        self._address: tuple[Path, dict[str, object]] | None = None
        """Where and as what it attached: how to attach again."""

    @classmethod
    def open(
        cls, socket_path: Path, generation: str, mode: str, *, last_seq: int | None = None
    ) -> RemoteSession:
        """Connect, ask to attach (resuming after ``last_seq`` when given), and wait for the
        session's hello (or its refusal)."""
        fields: dict[str, object] = {"generation": generation, "mode": mode}
        fields["protocol"] = PROTOCOL_VERSION
        if last_seq is not None:
            fields["last_seq"] = last_seq
        try:
            return cls._open(socket_path, fields)
        except _OlderSession:
            # A session before version 2 refuses the field: it speaks version 1, no resume.
            return cls._open(socket_path, {"generation": generation, "mode": mode})

    @classmethod
    def _open(cls, socket_path: Path, fields: dict[str, object]) -> RemoteSession:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            hello, rest = _handshake(sock, socket_path, fields)
            session = cls(sock, hello, rest)
        except BaseException:
            sock.close()
            raise
        session._address = (socket_path, fields)
        return session

    def bind(self, link: RouteLink) -> None:
        """Deliver to ``link``'s port from now on, and end ``link`` when the session goes."""
        self._link = link

    # -- RouteHub ------------------------------------------------------------------------------

    def connect(self, route_key: str, deliver: Callable[[object], None]) -> None:
        reader = threading.Thread(
            target=self._read, args=(route_key, deliver), name="robota-attach"
        )
        reader.daemon = True
        reader.start()

    def disconnect(self, route_key: str) -> None:
        del route_key
        self.close()

    def tell(self, route_key: str, request: FrontEndRequest) -> None:
        del route_key
        frame = request_to_frame(request)
        if frame is None:
            return  # choosing another task is not a surface's to do
        try:
            with self._send_lock:
                self.sock.sendall(encode_frame(frame))
        except OSError:
            pass  # the reader sees the end and ends the link

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.sock.close()

    def _read(self, route_key: str, deliver: Callable[[object], None]) -> None:
        pending: list[bytes] | None = list(self._lines)
        tries = 0
        while pending is not None:
            if self._receive(route_key, deliver, pending):
                tries = 0
            if self._closed or tries >= REATTACH_TRIES:
                break
            tries += 1
            pending = self._reattach()
        reason = None if self._closed else RobotaError("the session ended the connection")
        if self._link is not None:
            self._link.end(reason)  # None: we left, a detach and not an error

    def _receive(
        self, route_key: str, deliver: Callable[[object], None], pending: list[bytes]
    ) -> bool:
        """Read this connection to its end; whether any frame came."""
        splitter = LineSplitter(MAX_FRAME)
        read = bool(pending)
        try:
            while True:
                for line in pending:
                    try:
                        self._frame(route_key, decode_frame(line), deliver)
                    except ProtocolError:
                        continue  # a frame of a newer session: the next one may do
                data = self.sock.recv(64 * 1024)
                if not data:
                    return read
                pending = [x for x in splitter.feed(data) if not isinstance(x, Overlong)]
                read = read or bool(pending)
        except OSError:
            return read

    def _reattach(self) -> list[bytes] | None:
        """Attach again after ``last_seq`` (a version 2 session only); the lines that came
        after its hello, or ``None`` when it cannot be."""
        if self._address is None or self.last_seq is None:
            return None
        path, fields = self._address
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            _, rest = _handshake(sock, path, {**fields, "last_seq": self.last_seq})
        except (AttachRefused, OSError, ProtocolError):
            sock.close()
            return None
        with self._send_lock:
            old, self.sock = self.sock, sock
        old.close()
        if self._closed:  # the app left meanwhile
            sock.close()
            return None
        return rest

    def _frame(
        self, route_key: str, frame: dict[str, Any], deliver: Callable[[object], None]
    ) -> None:
        kind = frame["type"]
        if kind == "notice":
            notice = notice_from_json(frame.get("notice"))
            if self.last_seq is not None:
                self.last_seq = max(self.last_seq, check_seq(frame.get("seq"), "notice.seq"))
            deliver(notice)
        elif kind == "resume_gap":
            latest = check_seq(frame.get("latestSeq"), "resume_gap.latestSeq")
            first = check_seq(frame.get("firstSeq"), "resume_gap.firstSeq")
            self.last_seq = latest
            deliver(RouteReply(route_key, gap_note(first, latest), "error"))


def _handshake(
    sock: socket.socket, socket_path: Path, fields: dict[str, object]
) -> tuple[dict[str, Any], list[bytes]]:
    sock.settimeout(30.0)
    sock.connect(str(socket_path))
    sock.sendall(encode_request(1, "session.attach", fields))
    splitter = LineSplitter(MAX_FRAME)
    lines: list[bytes] = []
    while not lines:
        data = sock.recv(64 * 1024)
        if not data:
            raise AttachRefused("the session closed the connection")
        lines = [x for x in splitter.feed(data) if not isinstance(x, Overlong)]
    try:
        first = loads_strict(lines[0])
    except ValueError:
        raise AttachRefused("the session's answer is not JSON") from None
    if not isinstance(first, dict) or first.get("type") != "hello":
        error = first.get("error") if isinstance(first, dict) else None
        message = error.get("message") if isinstance(error, dict) else None
        if isinstance(error, dict) and error.get("field") == "protocol" and "protocol" in fields:
            raise _OlderSession(str(message))
        raise AttachRefused(str(message or "the session refused"))
    sock.settimeout(None)
    return first, lines[1:]


def gap_note(first: int, latest: int) -> str:
    """What a terminal that came back too late is told (the session kept ``first..latest``)."""
    return (
        "some of the session's output was missed while detached "
        f"(it keeps notices {first} to {latest} only)"
    )


def _hello_seq(hello: dict[str, Any]) -> int | None:
    if not isinstance(hello.get("protocol"), int) or hello["protocol"] < 2:
        return None
    try:
        return check_seq(hello.get("seq"), "hello.seq")
    except ProtocolError as error:
        raise AttachRefused(f"the session's hello is not the protocol's: {error}") from None


class _OlderSession(AttachRefused):
    """The session refused the ``protocol`` field: it predates version 2."""


class RemoteLink:
    """The app's ``EngineLink`` for an attached session."""

    def __init__(self, session: RemoteSession, route_key: str, agent: str) -> None:
        self.session = session
        self.route_key = route_key
        self._agent = agent

    def tell(self, request: FrontEndRequest) -> None:
        self.session.tell(self.route_key, request)

    @property
    def default_agent(self) -> str:
        return self._agent

    # The session's task is the one shown: nothing to pick, resume or replay here.

    def recent_tasks(
        self,
        *,
        limit: int = 50,  # noqa: ARG002
        search: str | None = None,  # noqa: ARG002
        timeout: float = 60,  # noqa: ARG002
    ) -> list[Task]:
        return []

    def find_tasks(self, wanted: str, timeout: float = 60) -> list[Task]:  # noqa: ARG002
        return []

    def latest_task(
        self,
        cwd: Path | None,  # noqa: ARG002
        agent: str | None = None,  # noqa: ARG002
        timeout: float = 60,  # noqa: ARG002
    ) -> Task | None:
        return None

    def task_history(
        self,
        task_id: str,  # noqa: ARG002
        *,
        limit: int = 10,  # noqa: ARG002
        timeout: float = 60,  # noqa: ARG002
    ) -> list[TurnAttempt]:
        return []

    def take_task(self, task_id: str, timeout: float = 60) -> str | None:  # noqa: ARG002
        return None  # the session owns its task; this terminal only speaks to it

    def task_mobility(self, task_id: str, timeout: float = 60) -> None:  # noqa: ARG002
        return None  # a pushed session ends once its task moved: the connection closes

    def let_go(self, task_id: str, timeout: float = 60) -> None:  # noqa: ARG002
        return None

    def device_name(self, device: str, timeout: float = 60) -> None:  # noqa: ARG002
        return None
