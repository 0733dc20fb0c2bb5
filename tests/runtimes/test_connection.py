"""The JSON-RPC connection against an in-memory peer: ids, errors, unknown calls, bad lines."""

from __future__ import annotations

import json
import os
from typing import Any

import pytest
import trio
import trio.testing

from robota.runtimes import Connection, ConnectionLost, RpcError, RpcTimeout
from robota.runtimes._jsonrpc import request_line


class Peer:
    """The far end of a memory stream pair, speaking raw lines."""

    def __init__(self, stream: trio.testing.MemoryStapledStream[Any]) -> None:  # type: ignore[type-arg]
        self.stream = stream
        self.buffer = b""

    async def line(self) -> dict[str, Any]:
        while b"\n" not in self.buffer:
            self.buffer += await self.stream.receive_some()
        line, self.buffer = self.buffer.split(b"\n", 1)
        obj: dict[str, Any] = json.loads(line)
        return obj

    async def send(self, raw: bytes) -> None:
        await self.stream.send_all(raw)


async def connect(nursery: trio.Nursery, **options: Any) -> tuple[Connection, Peer]:
    ours, theirs = trio.testing.memory_stream_pair()
    connection = Connection(ours, ours, name="agent", jsonrpc_field=False, **options)
    await nursery.start(connection.run)
    return connection, Peer(theirs)


async def test_responses_are_matched_by_id_even_out_of_order() -> None:
    async with trio.open_nursery() as nursery:
        connection, peer = await connect(nursery)
        results: dict[str, Any] = {}

        async def ask(method: str) -> None:
            results[method] = await connection.request(method, {"m": method}, timeout=5)

        nursery.start_soon(ask, "first")
        first = await peer.line()
        nursery.start_soon(ask, "second")
        second = await peer.line()
        assert (first["id"], second["id"]) == (0, 1)  # ids start at 0
        assert "jsonrpc" not in first
        await peer.send(b'{"id":1,"result":"two"}\n{"id":0,"result":"one"}\n')
        await trio.testing.wait_all_tasks_blocked()
        assert results == {"first": "one", "second": "two"}
        nursery.cancel_scope.cancel()


async def test_an_error_response_raises_rpc_error() -> None:
    async with trio.open_nursery() as nursery:
        connection, peer = await connect(nursery)

        async def answer() -> None:
            request = await peer.line()
            await peer.send(
                json.dumps({"id": request["id"], "error": {"code": 400, "message": "bad"}}).encode()
                + b"\n"
            )

        nursery.start_soon(answer)
        with pytest.raises(RpcError, match=r"thread/start: error 400: bad") as info:
            await connection.request("thread/start", {}, timeout=5)
        assert info.value.code == 400
        nursery.cancel_scope.cancel()


async def test_unknown_server_request_is_answered_with_method_not_found() -> None:
    async with trio.open_nursery() as nursery:
        _, peer = await connect(nursery)
        await peer.send(b'{"id":0,"method":"craft/drainMidTurnQueue","params":{}}\n')
        reply = await peer.line()
        assert reply == {
            "id": 0,
            "error": {"code": -32601, "message": "method not found: craft/drainMidTurnQueue"},
        }
        nursery.cancel_scope.cancel()


async def test_handled_server_request_gets_its_result_with_the_same_string_id() -> None:
    async def on_request(method: str, params: Any) -> Any:
        return {"outcome": {"outcome": "selected", "optionId": params["pick"]}}

    async with trio.open_nursery() as nursery:
        _, peer = await connect(nursery, on_request=on_request)
        await peer.send(
            b'{"id":"u-1","method":"session/request_permission","params":{"pick":"a"}}\n'
        )
        assert await peer.line() == {
            "id": "u-1",
            "result": {"outcome": {"outcome": "selected", "optionId": "a"}},
        }
        nursery.cancel_scope.cancel()


async def test_malformed_lines_are_logged_and_skipped_without_losing_the_connection(
    caplog: pytest.LogCaptureFixture,
) -> None:
    seen: list[tuple[str, Any]] = []
    async with trio.open_nursery() as nursery:
        connection, peer = await connect(nursery, on_notification=lambda m, p: seen.append((m, p)))
        await peer.send(b'Debugger listening on ws://...\n{"method":"ok","params":1}\n')
        await trio.testing.wait_all_tasks_blocked()
        assert seen == [("ok", 1)]
        assert connection.malformed == 1
        assert "Debugger listening" in caplog.text
        nursery.cancel_scope.cancel()


async def test_timeout_and_connection_loss() -> None:
    async with trio.open_nursery() as nursery:
        connection, peer = await connect(nursery)
        with pytest.raises(RpcTimeout, match=r"got no response in 0\.05 s"):
            await connection.request("slow", timeout=0.05)

        async def close_soon() -> None:
            await peer.line()
            await peer.stream.aclose()

        nursery.start_soon(close_soon)
        with pytest.raises(ConnectionLost):
            await connection.request("never", timeout=5)
        with pytest.raises(ConnectionLost):
            await connection.request("after", timeout=5)


async def test_a_request_on_a_pipe_is_written_before_anything_else_runs() -> None:
    """What the pipe takes goes out at once: no trip round the scheduler first (another task
    that became runnable has not run when ``send_request`` returns with the bytes in the pipe),
    and the result is awaited on the handle."""
    read_end, write_end = os.pipe()
    ours, theirs = trio.testing.memory_stream_pair()
    connection = Connection(
        trio.lowlevel.FdStream(write_end), ours, name="agent", jsonrpc_field=False
    )
    others: list[str] = []

    async def other() -> None:
        others.append("ran")

    try:
        async with trio.open_nursery() as nursery:
            await nursery.start(connection.run)
            nursery.start_soon(other)
            pending = await connection.send_request("ping")
            assert (os.read(read_end, 4096), others) == (b'{"id":0,"method":"ping"}\n', [])
            await theirs.send_all(b'{"id":0,"result":"pong"}\n')
            assert await pending.result(timeout=5) == "pong"
            assert others == ["ran"]
            nursery.cancel_scope.cancel()
    finally:
        os.close(read_end)


async def test_a_request_larger_than_the_pipe_is_written_whole() -> None:
    read_end, write_end = os.pipe()
    ours, _theirs = trio.testing.memory_stream_pair()
    connection = Connection(
        trio.lowlevel.FdStream(write_end), ours, name="agent", jsonrpc_field=False
    )
    reader = trio.lowlevel.FdStream(read_end)
    text = "x" * 1_000_000  # far over a pipe's 64 KiB
    received = bytearray()

    async def drain() -> None:
        while not received.endswith(b"\n"):
            received.extend(await reader.receive_some())

    async def ask() -> None:
        await connection.request("big", {"text": text}, timeout=5)

    async with trio.open_nursery() as nursery:
        await nursery.start(connection.run)
        nursery.start_soon(ask)
        with trio.fail_after(5):
            await drain()
        nursery.cancel_scope.cancel()
    await reader.aclose()
    assert json.loads(received) == {"id": 0, "method": "big", "params": {"text": text}}


async def test_a_request_written_before_the_connection_is_answered_through_it() -> None:
    """An agent's ``initialize`` written at its spawn (``_prestart``): the connection takes it
    over with its id, the client's identical request awaits that answer and writes nothing,
    and the next request gets the next id."""
    params = {"protocolVersion": 1, "clientInfo": {"name": "robota"}}
    ours, theirs = trio.testing.memory_stream_pair()
    connection = Connection(
        ours, ours, name="agent", jsonrpc_field=True, written=[("initialize", params)]
    )
    peer = Peer(theirs)
    async with trio.open_nursery() as nursery:
        await nursery.start(connection.run)
        # What the prestart wrote, framed the same way: the peer answers it.
        assert request_line(0, "initialize", params, jsonrpc_field=True) == (
            b'{"jsonrpc":"2.0","id":0,"method":"initialize","params":'
            b'{"protocolVersion":1,"clientInfo":{"name":"robota"}}}\n'
        )
        await peer.send(b'{"jsonrpc":"2.0","id":0,"result":{"agentInfo":{"version":"1.0"}}}\n')
        result = await connection.request("initialize", params, timeout=5)
        assert result == {"agentInfo": {"version": "1.0"}}

        async def ask() -> None:
            await connection.request("session/new", {}, timeout=5)

        nursery.start_soon(ask)
        following = await peer.line()
        assert (following["id"], following["method"]) == (1, "session/new")
        assert peer.buffer == b"", "initialize was not written a second time"
        nursery.cancel_scope.cancel()


async def test_a_written_request_is_never_sent_again_with_other_params() -> None:
    ours, _theirs = trio.testing.memory_stream_pair()
    connection = Connection(
        ours, ours, name="agent", jsonrpc_field=False, written=[("initialize", {"a": 1})]
    )
    async with trio.open_nursery() as nursery:
        await nursery.start(connection.run)
        with pytest.raises(ValueError, match="initialize was written before the connection"):
            await connection.send_request("initialize", {"a": 2})
        nursery.cancel_scope.cancel()


OPENING = [("initialize", {"a": 1}), ("thread/start", {"cwd": "/w"})]
"""An App Server agent's ``initialize`` and a new task's ``thread/start``, written at the prestart
(ids 0 and 1); ``initialized`` with them."""


@pytest.mark.parametrize(
    ("asked", "answers", "written_now", "result"),
    [
        # The guess matched: its answer is the client's, nothing is written again.
        ({"cwd": "/w"}, [b'{"id":1,"result":"thread A"}\n'], [], "thread A"),
        # Other params: the guess's answer is dropped, the client's own request gets id 2.
        (
            {"cwd": "/other"},
            [b'{"id":1,"result":"unused"}\n', b'{"id":2,"result":"thread B"}\n'],
            [(2, {"cwd": "/other"})],
            "thread B",
        ),
        # The agent refused the guess: asked again, in order, with the same params.
        (
            {"cwd": "/w"},
            [
                b'{"id":1,"error":{"code":-32600,"message":"not initialized"}}\n',
                b'{"id":2,"result":"thread C"}\n',
            ],
            [(2, {"cwd": "/w"})],
            "thread C",
        ),
    ],
)
async def test_a_speculative_request_only_ever_saves_time(
    asked: dict[str, str],
    answers: list[bytes],
    written_now: list[tuple[int, dict[str, str]]],
    result: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    async with trio.open_nursery() as nursery:
        connection, peer = await connect(
            nursery,
            written=OPENING,
            notified=[("initialized", None)],
            speculative={"thread/start"},
        )
        await peer.send(b'{"id":0,"result":{}}\n')
        assert await connection.request("initialize", {"a": 1}, timeout=5) == {}
        await connection.notify("initialized")  # written ahead: not again
        got: list[str] = []

        async def ask() -> None:
            got.append(await connection.request("thread/start", asked, timeout=5))

        nursery.start_soon(ask)
        for answer in answers:
            await trio.testing.wait_all_tasks_blocked()
            await peer.send(answer)
        await trio.testing.wait_all_tasks_blocked()
        await connection.notify("end")  # the last line: nothing else was written before it
        lines = [await peer.line() for _ in range(len(written_now) + 1)]
        assert lines[-1] == {"method": "end"}
        assert [(line["id"], line["params"]) for line in lines[:-1]] == written_now
        assert got == [result]
        nursery.cancel_scope.cancel()
    assert "unknown request id" not in caplog.text


async def test_a_notification_written_ahead_with_other_params_is_written() -> None:
    async with trio.open_nursery() as nursery:
        connection, peer = await connect(nursery, notified=[("initialized", None)])
        await connection.notify("initialized", {"late": True})
        assert await peer.line() == {"method": "initialized", "params": {"late": True}}
        nursery.cancel_scope.cancel()
