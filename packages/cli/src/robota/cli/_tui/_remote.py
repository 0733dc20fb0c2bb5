"""The TUI attached to a background session: the session's route reached over its control
socket instead of an engine in this process.

``RemoteSession`` is a ``RouteHub`` (what ``FrontEndPort`` connects to): a reader thread
decodes the session's notice frames (``robota.core.protocol``'s attach frames) and delivers
them, so the TUI reads a real ``RouteLink`` exactly as it reads its own engine's; requests
become frames on the socket. ``RemoteLink`` is the app's ``EngineLink``: the task is the
session's, so there is nothing to pick or resume. Closing the app closes the connection,
which only detaches: the session and a turn it runs go on.

The terminal speaks the protocol's ``PROTOCOL_VERSION`` and keeps the ``seq`` of the last notice
it got (``last_seq``): opened again with it, it is sent what it missed meanwhile, or told that
the session no longer has all of it (a ``resume_gap``, shown as a note). A session of an older
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

__all__ = ["AttachRefused", "RemoteLink", "RemoteSession"]


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
        except BaseException:
            sock.close()
            raise
        return cls(sock, hello, rest)

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
        splitter = LineSplitter(MAX_FRAME)
        pending = list(self._lines)
        reason: BaseException | None = RobotaError("the session ended the connection")
        try:
            while True:
                for line in pending:
                    try:
                        self._frame(route_key, decode_frame(line), deliver)
                    except ProtocolError:
                        continue  # a frame of a newer session: the next one may do
                data = self.sock.recv(64 * 1024)
                if not data:
                    break
                pending = [x for x in splitter.feed(data) if not isinstance(x, Overlong)]
        except OSError:
            pass
        if self._closed:
            reason = None  # we left: a detach, not an error
        if self._link is not None:
            self._link.end(reason)

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
    return check_seq(hello.get("seq"), "hello.seq")


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
