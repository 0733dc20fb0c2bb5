"""The attached TUI's end of the attach carrier: it says its protocol version and resumes after
its last seq, keeps that seq from the notices it reads, shows a gap as a note, and speaks
version 1 to a session that predates version 2 (a fake session on a real Unix socket)."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from robota.cli._tui._remote import AttachRefused, RemoteSession, gap_note
from robota.core.engine import RouteReply
from robota.core.protocol import encode_line, notice_to_json

ROUTE = "session:0123456789ab"

Script = Callable[[int, dict[str, Any]], list[Any]]
"""Connection number, the attach request read -> the lines to answer with."""


class FakeSession:
    """Accepts connections on ``path`` and answers each one's request with its script."""

    def __init__(self, path: Path, script: Script, connections: int = 1) -> None:
        self.path = path
        self.connections = connections
        self.script = script
        self.requests: list[dict[str, Any]] = []
        self.server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.server.bind(str(path))
        self.server.listen()
        self.server.settimeout(30)
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        for number in range(self.connections):
            try:
                conn, _ = self.server.accept()
            except OSError:
                return
            with conn:
                conn.settimeout(30)
                data = b""
                while b"\n" not in data:
                    data += conn.recv(65536)
                request = json.loads(data.split(b"\n", 1)[0])
                self.requests.append(request)
                for message in self.script(number, request):
                    conn.sendall(encode_line(message))
        self.server.close()  # no more: a later attach is refused

    def close(self) -> None:
        self.server.close()
        self.thread.join(30)


def notice(seq: int, text: str) -> dict[str, Any]:
    return {"type": "notice", "seq": seq, "notice": notice_to_json(RouteReply(ROUTE, text))}


def read_all(session: RemoteSession) -> list[object]:
    delivered: list[object] = []
    session._read(ROUTE, delivered.append)
    return delivered


def test_a_resuming_terminal_keeps_its_last_seq_and_shows_a_gap(tmp_path: Path) -> None:
    def script(number: int, request: dict[str, Any]) -> list[Any]:
        del number, request
        return [
            {"type": "hello", "protocol": 2, "seq": 9, "mode": "drive", "surface": "attach:2"},
            notice(6, "six"),
            notice(7, "seven"),
            {"type": "notice", "seq": 8, "notice": {"kind": "FromTheFuture"}},
            {"type": "resume_gap", "lastSeq": 7, "firstSeq": 12, "latestSeq": 20},
        ]

    fake = FakeSession(tmp_path / "s.sock", script)
    try:
        session = RemoteSession.open(fake.path, "gen", "drive", last_seq=5)
        assert fake.requests[0] == {
            "id": 1,
            "type": "session.attach",
            "generation": "gen",
            "mode": "drive",
            "protocol": 2,
            "last_seq": 5,
        }
        assert session.last_seq == 9
        delivered = read_all(session)
        session.close()
    finally:
        fake.close()
    assert delivered == [
        RouteReply(ROUTE, "six"),
        RouteReply(ROUTE, "seven"),
        RouteReply(ROUTE, gap_note(12, 20), "error"),
    ], "a frame it cannot read is skipped, the next read"
    assert session.last_seq == 20


def test_a_session_before_version_2_is_asked_again_as_version_1(tmp_path: Path) -> None:
    def script(number: int, request: dict[str, Any]) -> list[Any]:
        if number == 0:
            error = {
                "code": "bad_request",
                "message": "session.attach: unknown field 'protocol'",
                "field": "protocol",
            }
            return [{"id": 1, "ok": False, "error": error}]
        assert "protocol" not in request and "last_seq" not in request
        return [{"type": "hello", "protocol": 1, "mode": "drive"}, notice(1, "old")]

    fake = FakeSession(tmp_path / "s.sock", script, connections=2)
    try:
        session = RemoteSession.open(fake.path, "gen", "drive", last_seq=5)
        assert session.hello["protocol"] == 1 and session.last_seq is None
        assert read_all(session) == [RouteReply(ROUTE, "old")]
        session.close()
    finally:
        fake.close()
    assert [r.get("protocol") for r in fake.requests] == [2, None]


def test_a_refusal_names_why(tmp_path: Path) -> None:
    def script(number: int, request: dict[str, Any]) -> list[Any]:
        del number, request
        error = {"code": "stale_generation", "message": "the session restarted"}
        return [{"id": 1, "ok": False, "error": error}]

    fake = FakeSession(tmp_path / "s.sock", script)
    try:
        with pytest.raises(AttachRefused, match="the session restarted"):
            RemoteSession.open(fake.path, "gen", "drive")
    finally:
        fake.close()


def test_a_dropped_connection_attaches_again_after_its_last_seq(tmp_path: Path) -> None:
    def script(number: int, request: dict[str, Any]) -> list[Any]:
        hello = {"type": "hello", "protocol": 2, "seq": 3, "mode": "drive"}
        if number == 0:
            assert "last_seq" not in request
            return [hello, notice(4, "four")]  # and the connection drops
        assert request["last_seq"] == 4
        return [{**hello, "seq": 6}, notice(5, "five"), notice(6, "six")]

    fake = FakeSession(tmp_path / "s.sock", script, connections=2)
    try:
        session = RemoteSession.open(fake.path, "gen", "drive")
        delivered = read_all(session)  # ends when attaching a third time is refused
        session.close()
    finally:
        fake.close()
    assert delivered == [RouteReply(ROUTE, t) for t in ("four", "five", "six")]
    assert session.last_seq == 6
    assert len(fake.requests) == 2


def test_a_hello_with_a_bad_seq_is_a_refusal(tmp_path: Path) -> None:
    def script(number: int, request: dict[str, Any]) -> list[Any]:
        del number, request
        return [{"type": "hello", "protocol": 2, "seq": -1}]

    fake = FakeSession(tmp_path / "s.sock", script)
    try:
        with pytest.raises(AttachRefused, match=r"hello\.seq: expected an integer"):
            RemoteSession.open(fake.path, "gen", "drive")
    finally:
        fake.close()
