"""Reconciling a thread whose state the events do not explain, against a scripted App Server.

Codex says ``idle`` just before each ``turn/completed``; robota must not pay a ``thread/read``
for that, but must ask when the completion really never comes.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import trio
import trio.testing

from robota.core.events import RuntimeEvent, TurnCompleted
from robota.runtimes import AppServerClient, Connection

THREAD = "thread-1"
TURN = "turn-1"


class Server:
    """The peer side of the pipe: reads robota's requests, answers from a script."""

    def __init__(self, stream: trio.abc.Stream) -> None:
        self.stream = stream
        self.methods: list[str] = []
        self._buffer = b""

    async def send(self, message: dict[str, Any]) -> None:
        await self.stream.send_all(json.dumps(message).encode() + b"\n")

    async def serve(self, turn_done_in_list: bool) -> None:
        while True:
            while b"\n" not in self._buffer:
                chunk = await self.stream.receive_some()
                if not chunk:
                    return
                self._buffer += chunk
            line, self._buffer = self._buffer.split(b"\n", 1)
            message = json.loads(line)
            method = message.get("method")
            self.methods.append(method)
            if "id" not in message:
                continue
            result: Any = {}
            if method == "initialize":
                result = {"userAgent": "scripted/1.0.0"}
            elif method == "thread/start":
                result = {"thread": {"id": THREAD}}
            elif method == "turn/start":
                result = {"turn": {"id": TURN, "status": "inProgress"}}
            elif method == "thread/read":
                result = {"thread": {"id": THREAD, "status": {"type": "idle"}}}
            elif method == "thread/turns/list":
                status = "completed" if turn_done_in_list else "inProgress"
                result = {"data": [{"id": TURN, "status": status, "items": [], "error": None}]}
            await self.send({"id": message["id"], "result": result})


@asynccontextmanager
async def scripted(
    events: list[RuntimeEvent], *, turn_done_in_list: bool = True
) -> AsyncIterator[tuple[AppServerClient, Server]]:
    ours, theirs = trio.testing.memory_stream_pair()
    server = Server(theirs)
    connection = Connection(ours, ours, name="scripted", jsonrpc_field=False)
    client = AppServerClient(connection, lambda _thread, event: events.append(event))
    async with trio.open_nursery() as nursery:
        nursery.start_soon(server.serve, turn_done_in_list)
        await nursery.start(connection.run)
        await client.initialize(nursery)
        yield client, server
        nursery.cancel_scope.cancel()


def idle() -> dict[str, Any]:
    params = {"threadId": THREAD, "status": {"type": "idle"}}
    return {"method": "thread/status/changed", "params": params}


def completed() -> dict[str, Any]:
    turn = {"id": TURN, "status": "completed", "items": [], "error": None}
    return {"method": "turn/completed", "params": {"threadId": THREAD, "turn": turn}}


async def test_idle_just_before_turn_completed_costs_no_read(autojump_clock: object) -> None:
    events: list[RuntimeEvent] = []
    async with scripted(events) as (client, server):
        await client.start_thread(cwd="/tmp")
        await client.start_turn(THREAD, "hello")
        await server.send(idle())
        await server.send(completed())
        await trio.sleep(5)
    assert [e.status for e in events if isinstance(e, TurnCompleted)] == ["completed"]
    assert "thread/read" not in server.methods


async def test_a_turn_whose_completion_never_comes_is_read_back(autojump_clock: object) -> None:
    events: list[RuntimeEvent] = []
    async with scripted(events) as (client, server):
        await client.start_thread(cwd="/tmp")
        await client.start_turn(THREAD, "hello")
        await server.send(idle())
        await trio.sleep(5)
        assert client.active_turn(THREAD) is None
    assert server.methods[-2:] == ["thread/read", "thread/turns/list"]
    assert [e.status for e in events if isinstance(e, TurnCompleted)] == ["completed"]


async def test_a_thread_still_active_on_read_keeps_its_turn(autojump_clock: object) -> None:
    events: list[RuntimeEvent] = []
    async with scripted(events, turn_done_in_list=False) as (client, server):
        await client.start_thread(cwd="/tmp")
        await client.start_turn(THREAD, "hello")
        await server.send(idle())
        await trio.sleep(5)
        assert client.active_turn(THREAD) == TURN
    assert "thread/turns/list" in server.methods
    assert not any(isinstance(e, TurnCompleted) for e in events)
