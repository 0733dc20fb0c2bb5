"""The control endpoint on real Unix sockets: requests and replies, bad input on a live
connection, the socket file's life, its modes, and the limits."""

from __future__ import annotations

import logging
import os
import socket
import stat
from pathlib import Path

import pytest
import trio

from robota.core.control import (
    ControlClient,
    ControlError,
    ControlServer,
    HostRefused,
    HostUnreachable,
    NoHostRunning,
    ServerLimits,
    SocketInUse,
    listening_socket,
)

from ._serving import ENDPOINTS, Raw, serving


def call(socket_path: Path, type_name: str, fields: dict[str, object] | None = None) -> object:
    with ControlClient(socket_path, timeout=10) as client:
        return client.call(type_name, fields)


async def in_thread(
    socket_path: Path, type_name: str, fields: dict[str, object] | None = None
) -> object:
    return await trio.to_thread.run_sync(call, socket_path, type_name, fields)


async def test_round_trip_and_a_second_call_on_the_same_connection(socket_path: Path) -> None:
    def two_calls() -> list[object]:
        with ControlClient(socket_path) as client:
            return [client.call("echo", {"text": "ab", "times": 2}), client.call("status")]

    async with serving(socket_path):
        assert await trio.to_thread.run_sync(two_calls) == [{"text": "abab"}, {"running": True}]


async def test_garbage_then_a_good_request_on_the_same_connection(socket_path: Path) -> None:
    async with serving(socket_path), Raw.open(socket_path) as raw:
        await raw.send(b'{"id": 1, "type"\n\xff\xfe\n[1]\n{"id": 2, "type": "echo", "text": "x"}\n')
        first, second, third, fourth = [await raw.reply() for _ in range(4)]
        assert (first["id"], first["error"]["code"]) == (None, "bad_json")
        assert (second["id"], second["error"]["code"]) == (None, "bad_json")
        assert third["error"] == {
            "code": "bad_request",
            "message": "a request must be a JSON object, found an array",
        }
        assert fourth == {"id": 2, "ok": True, "result": {"text": "x"}}


async def test_an_oversized_line_is_refused_and_the_connection_keeps_working(
    socket_path: Path,
) -> None:
    async with serving(socket_path), Raw.open(socket_path) as raw:
        chunk = b"x" * 65536
        await raw.send(b'{"id": 1, "type": "echo", "text": "')
        async with trio.open_nursery() as nursery:

            async def stream_two_mebibytes() -> None:
                for _ in range(32):
                    await raw.send(chunk)
                await raw.send(b'"}\n{"id": 2, "type": "echo", "text": "after"}\n')

            nursery.start_soon(stream_two_mebibytes)
            refused = await raw.reply()
        assert refused["id"] is None
        assert refused["error"]["code"] == "too_large"
        assert f"longer than {1024 * 1024} bytes" in refused["error"]["message"]
        assert await raw.reply() == {"id": 2, "ok": True, "result": {"text": "after"}}


async def test_unknown_type_and_bad_fields_name_what_was_wrong(socket_path: Path) -> None:
    def calls() -> list[tuple[str, str | None, str]]:
        out = []
        with ControlClient(socket_path) as client:
            for type_name, fields in (("reboot", {}), ("echo", {"text": 3}), ("echo", {})):
                try:
                    client.call(type_name, fields)
                except HostRefused as error:
                    out.append((error.code, error.field, error.message))
            out.append(("ok", None, str(client.call("echo", {"text": "still"}))))
        return out

    async with serving(socket_path):
        assert await trio.to_thread.run_sync(calls) == [
            (
                "unknown_type",
                None,
                "unknown request type 'reboot'; this host serves: boom, echo, status",
            ),
            ("bad_request", "text", "echo: field 'text' must be a string, found an integer"),
            ("bad_request", "text", "echo: missing field 'text' (a string)"),
            ("ok", None, "{'text': 'still'}"),
        ]


async def test_a_raising_handler_is_an_internal_error_logged_once(
    socket_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.ERROR, logger="robota.core.control")
    async with serving(socket_path), Raw.open(socket_path) as raw:
        await raw.send(b'{"id": "a", "type": "boom"}\n{"id": "b", "type": "status"}\n')
        failed, served = await raw.reply(), await raw.reply()
    assert failed["id"] == "a"
    assert failed["error"]["code"] == "internal"
    assert "'boom' handler failed (BoomFailure)" in failed["error"]["message"]
    assert served == {"id": "b", "ok": True, "result": {"running": True}}
    records = [r for r in caplog.records if r.name == "robota.core.control"]
    assert len(records) == 1
    assert records[0].exc_info is not None
    assert str(records[0].exc_info[1]) == "the handler broke"


async def test_a_handler_refusal_carries_its_own_code_and_is_not_logged(
    socket_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="robota.core.control")
    async with serving(socket_path):
        with pytest.raises(HostRefused) as refused:
            await in_thread(socket_path, "boom", {"how": "refuse"})
    assert (refused.value.code, refused.value.field) == ("not_found", "how")
    assert str(refused.value) == "the host refused 'boom': no such thing [not_found]"
    assert [r for r in caplog.records if r.name == "robota.core.control"] == []


async def test_a_result_that_is_not_json_is_an_internal_error(socket_path: Path) -> None:
    async with serving(socket_path):
        with pytest.raises(HostRefused) as failed:
            await in_thread(socket_path, "boom", {"how": "unserialisable"})
        assert failed.value.code == "internal"
        assert "not JSON" in failed.value.message
        assert await in_thread(socket_path, "status") == {"running": True}


async def test_modes_while_serving_and_the_socket_removed_on_stop(socket_path: Path) -> None:
    async with serving(socket_path):
        assert stat.S_IMODE(socket_path.parent.stat().st_mode) == 0o700
        info = socket_path.lstat()
        assert stat.S_ISSOCK(info.st_mode)
        assert stat.S_IMODE(info.st_mode) == 0o600
        assert info.st_uid == os.geteuid()
    assert not socket_path.exists()
    assert socket_path.parent.is_dir()
    with pytest.raises(NoHostRunning, match="no control socket"):
        call(socket_path, "status")


def leave_stale_socket(path: Path) -> None:
    """What a SIGKILLed host leaves: a bound socket file nobody listens on."""
    path.parent.mkdir(mode=0o700, exist_ok=True)
    dead = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    dead.bind(str(path))
    dead.close()


async def test_a_stale_socket_is_replaced(socket_path: Path) -> None:
    leave_stale_socket(socket_path)
    with pytest.raises(NoHostRunning, match="nothing listens on it"):
        call(socket_path, "status")
    async with serving(socket_path):
        assert await in_thread(socket_path, "status") == {"running": True}


async def test_a_live_socket_is_kept_and_the_second_host_says_whose(socket_path: Path) -> None:
    async with serving(socket_path):
        live = socket_path.lstat().st_ino
        with pytest.raises(SocketInUse) as refused:
            await ControlServer(socket_path, ENDPOINTS).serve()
        assert refused.value.pid == os.getpid()
        assert f"served by process {os.getpid()}" in str(refused.value)
        assert socket_path.lstat().st_ino == live
        assert await in_thread(socket_path, "status") == {"running": True}


async def test_something_else_at_the_socket_path_is_not_removed(socket_path: Path) -> None:
    socket_path.parent.mkdir(mode=0o700)
    socket_path.write_text("not a socket")
    with pytest.raises(ControlError, match="expected a socket, found a file; not removed"):
        await ControlServer(socket_path, ENDPOINTS).serve()
    assert socket_path.read_text() == "not a socket"


def test_the_socket_appears_listening_and_never_replaces_what_appeared_meanwhile(
    socket_path: Path,
) -> None:
    socket_path.parent.mkdir(mode=0o700)
    sock = listening_socket(socket_path, 4)
    try:
        info = socket_path.lstat()
        assert stat.S_ISSOCK(info.st_mode)
        assert stat.S_IMODE(info.st_mode) == 0o600
        # Listening from its first moment: a client's connect is queued, never refused.
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as client:
            client.connect(str(socket_path))
        # The private name it was bound under is gone; only the socket's path is left.
        assert sorted(p.name for p in socket_path.parent.iterdir()) == [socket_path.name]
        # A second one at the same path (a host that claimed it at the same moment) is refused
        # and leaves the first in place.
        with pytest.raises(SocketInUse):
            listening_socket(socket_path, 4)
        assert socket_path.lstat().st_ino == info.st_ino
        assert sorted(p.name for p in socket_path.parent.iterdir()) == [socket_path.name]
    finally:
        sock.close()


async def test_stopping_late_never_removes_a_successors_socket(socket_path: Path) -> None:
    async with serving(socket_path):
        socket_path.unlink()
        leave_stale_socket(socket_path)
        successor = socket_path.lstat().st_ino
    assert socket_path.lstat().st_ino == successor


async def test_another_uid_is_refused_even_with_loose_modes(socket_path: Path) -> None:
    # The same check as the run-as-nobody test below, reachable without root: the host is
    # told it runs for another uid, so this process is the stranger.
    async with serving(socket_path, allowed_uid=os.geteuid() + 1), Raw.open(socket_path) as raw:
        await raw.send(b'{"id": 1, "type": "status"}\n')
        refused = await raw.reply()
        assert refused["id"] is None
        assert refused["error"]["code"] == "forbidden"
        assert f"the peer runs as uid {os.geteuid()}" in refused["error"]["message"]
        assert await raw.at_eof()


async def test_connections_beyond_the_limit_are_told_busy(socket_path: Path) -> None:
    async with (
        serving(socket_path, limits=ServerLimits(max_connections=1)) as server,
        Raw.open(socket_path) as first,
    ):
        await first.send(b'{"id": 1, "type": "status"}\n')
        assert (await first.reply())["ok"] is True
        assert server.connections == 1
        async with Raw.open(socket_path) as second:
            busy = await second.reply()
            assert busy["error"]["code"] == "busy"
            assert "at most 1 control connections" in busy["error"]["message"]
            assert await second.at_eof()
        await first.send(b'{"id": 2, "type": "status"}\n')
        assert (await first.reply())["id"] == 2


async def test_an_idle_connection_is_told_and_closed(socket_path: Path) -> None:
    async with (
        serving(socket_path, limits=ServerLimits(idle_timeout=0.2)) as server,
        Raw.open(socket_path) as raw,
    ):
        idle = await raw.reply()
        assert idle["error"] == {"code": "idle_timeout", "message": "no request for 0.2 s; closing"}
        assert await raw.at_eof()
        with trio.fail_after(10):
            while server.connections:
                await trio.sleep(0.01)


def listening(path: Path) -> socket.socket:
    """A socket that accepts connections but is not a host."""
    path.parent.mkdir(mode=0o700)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(path))
    listener.listen()
    return listener


async def test_the_client_gives_up_on_a_host_that_never_answers(socket_path: Path) -> None:
    with listening(socket_path), pytest.raises(HostUnreachable, match="'status' in time"):
        ControlClient(socket_path, timeout=0.3).call("status")


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        (b"", "closed the connection before answering 'status'"),
        (b"nonsense\n", "the host's reply is not a control reply"),
        (b'{"id": 1, "ok": "yes"}\n', "reply field 'ok' must be a boolean, found a string"),
    ],
)
async def test_the_client_reports_a_peer_that_does_not_speak_the_protocol(
    socket_path: Path, answer: bytes, message: str
) -> None:
    with listening(socket_path) as listener:

        def answer_badly() -> None:
            peer, _ = listener.accept()
            with peer:
                peer.recv(65536)
                peer.sendall(answer)

        async with trio.open_nursery() as nursery:
            nursery.start_soon(trio.to_thread.run_sync, answer_badly)
            with pytest.raises(HostUnreachable, match=message):
                await trio.to_thread.run_sync(call, socket_path, "status")


async def test_a_socket_path_longer_than_an_address_holds(short_dir: Path) -> None:
    deep = short_dir / ("d" * 60) / ("e" * 60) / "run" / "control.sock"
    assert len(os.fsencode(deep)) > 108
    async with serving(deep):
        assert stat.S_ISSOCK(deep.lstat().st_mode)
        assert await in_thread(deep, "echo", {"text": "far"}) == {"text": "far"}
    assert not deep.exists()
