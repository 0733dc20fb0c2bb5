"""``task.run``: ``task.send`` with ``wait`` as a stream, what ``robota mcp serve`` reads a run
through the host with: the route's notices as frames from the prompt until the route is idle
again, then the result ``task.send`` would answer; a refusal is the stream's one line, a
failure reply. Read with ``ControlClient.stream`` on an in-process host and a real agent."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

import trio

from robota.core.control import ControlClient
from robota.core.protocol import LineSplitter, loads_strict

from ..support.host import BOUND, ask, running_host, sandboxed
from ..support.model_server import FakeModel
from ..support.processes import processes_with_home_under


def stream_lines(socket_path: Path, fields: dict[str, Any]) -> list[Any]:
    """Every line of a ``task.run`` stream until the host closes it, decoded."""
    sock: socket.socket = ControlClient(socket_path, timeout=BOUND).stream("task.run", fields)
    lines = LineSplitter(1 << 26)
    read: list[Any] = []
    with sock:
        sock.settimeout(BOUND)
        while data := sock.recv(65536):
            read += [loads_strict(line) for line in lines.feed(data) if isinstance(line, bytes)]
    return read


async def test_task_run_streams_the_routes_notices_then_the_result(
    short_root: Path, model: FakeModel
) -> None:
    _, profile = sandboxed(short_root, model, "codex-acp")
    async with running_host(profile) as (socket_path, stopped):
        task_id = (await ask(socket_path, "task.new", {}))["task"]["id"]
        fields = {"task": task_id, "text": "hello stream"}
        *notices, last = await trio.to_thread.run_sync(stream_lines, socket_path, fields)
        assert {frame["type"] for frame in notices} == {"notice"}
        kinds = [frame["notice"]["kind"] for frame in notices]
        assert kinds[0] == "TurnBegan" and notices[0]["notice"]["prompt"] == "hello stream"
        assert "TurnUpdate" in kinds and kinds[-2:] == ["TurnFinished", "RouteIdle"], kinds
        assert last["type"] == "result"
        result = last["result"]
        assert result["task"]["id"] == task_id
        assert [t["final"] for t in result["turns"]] == ["ECHO: hello stream"]
        # The same answer as task.send's, on the same route.
        again = {"task": task_id, "text": "HISTORY", "wait": True}
        sent = await ask(socket_path, "task.send", again)
        assert sent["route"] == result["route"]
        assert [t["final"] for t in sent["turns"]] == ["HISTORY: hello stream | HISTORY"]

        (refusal,) = await trio.to_thread.run_sync(
            stream_lines, socket_path, {"task": "no-such-task", "text": "hi"}
        )
        assert refusal["ok"] is False and refusal["error"]["code"] == "not_found"

        await ask(socket_path, "server.stop")
        await stopped.wait()
    assert processes_with_home_under(short_root / "agents") == []
