"""The hub's rules on the host's trio loop, around a real front-end port and a real
``Outputs``: where a connection's stream starts, resume without repeats or holes, a wrong
frame answered and the client still served, a slow reader cut off, and the approvals nobody
is left to answer declined."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import trio

from robota.core.engine import (
    AnswerApproval,
    FrontEndRequest,
    Outputs,
    SurfaceJoined,
    SurfaceLeft,
    TurnUpdate,
    UserInput,
)
from robota.core.events import TextDelta
from robota.core.frontend import FrontEndPort
from robota.core.surfaces import SurfaceClient, SurfaceHub, SurfaceProtocolError

WAIT = 10.0


class Hub:
    """An engine's routes as the port sees them, around a real ``Outputs``."""

    def __init__(self) -> None:
        self.outputs = Outputs()
        self.told: list[tuple[str, FrontEndRequest]] = []

    def connect(self, route_key: str, deliver: Callable[[object], None]) -> None:
        self.outputs.connect(route_key, deliver)

    def disconnect(self, route_key: str) -> None:
        self.outputs.disconnect(route_key)

    def tell(self, route_key: str, request: FrontEndRequest) -> None:
        self.told.append((route_key, request))

    def say(self, route_key: str, *notices: object) -> None:
        for notice in notices:
            self.outputs.deliver(route_key, notice)


def delta(route: str, text: str) -> TurnUpdate:
    return TurnUpdate(route, "t1", "a1", TextDelta("i1", text))


async def opened(key: str) -> dict[str, Any]:
    return {"task": f"task-of-{key}"}


async def read(client: SurfaceClient, count: int) -> list[dict[str, Any]]:
    got = []
    with trio.fail_after(WAIT):
        for _ in range(count):
            text = await client.outbox.receive()
            client.sent(text)
            got.append(json.loads(text))
    return got


def drain(client: SurfaceClient) -> None:
    while True:
        try:
            client.sent(client.outbox.receive_nowait())
        except trio.WouldBlock:
            return


async def published(hub: SurfaceHub, seq: int, session: str = "s1") -> None:
    """Wait (bounded) until the session's stream published ``seq``."""
    with trio.fail_after(WAIT):
        while hub.sessions[session].stream.seq < seq:
            await trio.sleep(0.01)


async def settle() -> None:
    """Let the session's pump take what the route said (the port wakes it on this loop)."""
    for _ in range(50):
        await trio.sleep(0)
    await trio.sleep(0.05)


async def test_a_connection_hears_the_live_stream_from_its_hello() -> None:
    engine = Hub()
    hub = SurfaceHub(FrontEndPort(engine), opened, hello={"workspace": "w"})
    async with trio.open_nursery() as nursery:
        await nursery.start(hub.run)
        client = await hub.join()
        (hello,) = await read(client, 1)
        assert hello["type"] == "hello" and hello["seq"] == 0
        assert (hello["session"], hello["task"], hello["workspace"]) == (
            "s1",
            "task-of-serve:s1",
            "w",
        )
        engine.say("serve:s1", delta("serve:s1", "a"), delta("serve:s1", "b"))
        await published(hub, 2)
        await hub.handle(client, '{"type": "submit", "prompt": "hi"}')
        got = await read(client, 2)
        assert [(m["type"], m["text"], m["seq"]) for m in got] == [
            ("text_delta", "a", 1),
            ("text_delta", "b", 2),
        ]
        assert engine.told[-1] == ("serve:s1", UserInput("hi", message_id=client.id))
        hub.stop()
        nursery.cancel_scope.cancel()


async def test_resume_as_the_first_frame_gives_exactly_what_came_after() -> None:
    engine = Hub()
    hub = SurfaceHub(FrontEndPort(engine), opened)
    async with trio.open_nursery() as nursery:
        await nursery.start(hub.run)
        first = await hub.join()
        await read(first, 1)
        await hub.handle(first, '{"type": "ack", "seq": 0}')
        engine.say("serve:s1", *(delta("serve:s1", str(n)) for n in range(1, 6)))
        await published(hub, 5)
        assert [m["seq"] for m in await read(first, 3)] == [1, 2, 3]
        hub.leave(first)  # it read up to seq 3, then its connection dropped
        engine.say("serve:s1", delta("serve:s1", "6"))
        again = await hub.join()
        (hello,) = await read(again, 1)
        assert hello["seq"] == 5
        engine.say("serve:s1", delta("serve:s1", "7"))  # while the client reconnects
        await published(hub, 7)
        await hub.handle(again, '{"type": "resume", "lastSeq": 3}')
        engine.say("serve:s1", delta("serve:s1", "8"))
        await settle()
        got = await read(again, 5)
        assert [(m["seq"], m["text"]) for m in got] == [
            (4, "4"),
            (5, "5"),
            (6, "6"),
            (7, "7"),
            (8, "8"),
        ]
        await hub.handle(again, '{"type": "resume", "lastSeq": 3}')
        (late,) = await read(again, 1)
        assert late["type"] == "protocol_error" and "first frame" in late["message"]
        hub.stop()
        nursery.cancel_scope.cancel()


async def test_a_resume_the_buffer_no_longer_covers_is_a_gap() -> None:
    engine = Hub()
    hub = SurfaceHub(FrontEndPort(engine), opened)
    async with trio.open_nursery() as nursery:
        await nursery.start(hub.run)
        client = await hub.join()
        await read(client, 1)
        await hub.handle(client, '{"type": "resume", "lastSeq": 99}')
        (gap,) = await read(client, 1)
        assert gap == {"type": "resume_gap", "lastSeq": 99, "firstSeq": 1, "latestSeq": 0, "seq": 0}
        hub.stop()
        nursery.cancel_scope.cancel()


async def test_a_wrong_frame_is_answered_and_the_client_still_served() -> None:
    engine = Hub()
    hub = SurfaceHub(FrontEndPort(engine), opened)
    async with trio.open_nursery() as nursery:
        await nursery.start(hub.run)
        client = await hub.join()
        await read(client, 1)
        await hub.handle(client, "garbage{")
        await hub.handle(client, '{"type": "permission-response", "id": "x", "result": "maybe"}')
        await hub.handle(client, '{"type": "get-pending"}')
        got = await read(client, 3)
        assert got[0]["type"] == "protocol_error" and got[0]["message"] == "the frame is not JSON"
        assert got[1]["field"] == "permission-response.result"
        assert got[2] == {"type": "pending", "approvals": [], "seq": 0}
        assert not [r for _, r in engine.told if not isinstance(r, SurfaceJoined)]
        hub.stop()
        nursery.cancel_scope.cancel()


async def test_new_and_switch_bind_the_client_to_its_own_session() -> None:
    engine = Hub()
    hub = SurfaceHub(FrontEndPort(engine), opened)
    async with trio.open_nursery() as nursery:
        await nursery.start(hub.run)
        one, two = await hub.join(), await hub.join()
        await read(one, 1)
        await read(two, 1)
        await hub.handle(two, '{"type": "command", "name": "new"}')
        (made,) = await read(two, 1)
        assert (made["type"], made["session"], made["sessions"]) == (
            "command_result",
            "s2",
            ["s1", "s2"],
        )
        engine.say("serve:s1", delta("serve:s1", "for one"))
        engine.say("serve:s2", delta("serve:s2", "for two"))
        await settle()
        await hub.handle(one, '{"type": "get-pending"}')
        assert [m.get("text") for m in await read(one, 2)] == ["for one", None]
        await hub.handle(two, '{"type": "submit", "prompt": "x"}')
        assert [m.get("text") for m in await read(two, 1)] == ["for two"]
        assert engine.told[-1] == ("serve:s2", UserInput("x", message_id=two.id))
        # The route's own command, its sender named too (a /new PROMPT's turn is this client's).
        await hub.handle(two, '{"type": "command", "name": "rename", "args": {"text": "y z"}}')
        assert engine.told[-1] == ("serve:s2", UserInput("/rename y z", message_id=two.id))
        await hub.handle(two, '{"type": "command", "name": "switch", "args": {"session": "s9"}}')
        (refused,) = await read(two, 1)
        assert refused["field"] == "command.args.session"
        await hub.handle(two, '{"type": "command", "name": "switch", "args": {"session": "s1"}}')
        assert (await read(two, 1))[0]["session"] == "s1"
        hub.stop()
        nursery.cancel_scope.cancel()


async def test_a_client_that_stops_reading_is_cut_off_alone() -> None:
    engine = Hub()
    hub = SurfaceHub(FrontEndPort(engine), opened, byte_budget=4096)
    async with trio.open_nursery() as nursery:
        await nursery.start(hub.run)
        slow, fast = await hub.join(), await hub.join()
        for client in (slow, fast):
            await read(client, 1)
            await hub.handle(client, '{"type": "ack", "seq": 0}')
        for _ in range(10):
            for _ in range(10):
                engine.say("serve:s1", delta("serve:s1", "x" * 100))
            await settle()
            drain(fast)  # the fast client keeps up; the slow one reads nothing
        await settle()
        assert slow.cut_off and not fast.cut_off
        hub.stop()
        nursery.cancel_scope.cancel()


async def test_each_client_is_a_driving_surface_of_its_route() -> None:
    engine = Hub()
    hub = SurfaceHub(FrontEndPort(engine), opened)
    async with trio.open_nursery() as nursery:
        await nursery.start(hub.run)
        one, two = await hub.join(), await hub.join()
        await read(one, 1)
        await hub.handle(one, '{"type": "permission-response", "id": "ap1", "result": "accept"}')
        await hub.handle(two, '{"type": "command", "name": "new"}')
        hub.leave(one)
        assert engine.told == [
            ("serve:s1", SurfaceJoined("surface:1", drives=True)),
            ("serve:s1", SurfaceJoined("surface:2", drives=True)),
            ("serve:s1", AnswerApproval("ap1", "accept", surface="surface:1")),
            ("serve:s1", SurfaceLeft("surface:2")),
            ("serve:s2", SurfaceJoined("surface:2", drives=True)),
            ("serve:s1", SurfaceLeft("surface:1")),
        ]
        hub.stop()
        nursery.cancel_scope.cancel()


async def test_an_adopted_route_is_the_session_clients_join_and_no_task_is_made() -> None:
    engine = Hub()
    made: list[str] = []

    async def refuse(key: str) -> dict[str, Any]:
        made.append(key)
        raise SurfaceProtocolError("command.name: one session here", "command.name")

    hub = SurfaceHub(FrontEndPort(engine), refuse)
    async with trio.open_nursery() as nursery:
        await nursery.start(hub.run)
        hub.adopt("abc", "session:abc", {"task": "t-abc"})
        # Heard from the adoption on: what the route says before anyone joins is kept.
        engine.say("session:abc", delta("session:abc", "early"))
        await published(hub, 1, "abc")
        client = await hub.join()
        (hello,) = await read(client, 1)
        assert (hello["session"], hello["task"], hello["sessions"]) == ("abc", "t-abc", ["abc"])
        assert engine.told[-1] == ("session:abc", SurfaceJoined(client.id, drives=True))
        await hub.handle(client, '{"type": "resume", "lastSeq": 0}')
        (early,) = await read(client, 1)
        assert (early["type"], early["text"], early["seq"]) == ("text_delta", "early", 1)
        await hub.handle(client, '{"type": "submit", "prompt": "hi"}')
        assert engine.told[-1] == ("session:abc", UserInput("hi", message_id=client.id))
        await hub.handle(client, '{"type": "command", "name": "new"}')
        (refused,) = await read(client, 1)
        assert (refused["type"], refused["field"]) == ("protocol_error", "command.name")
        assert made == ["serve:s1"] and sorted(hub.sessions) == ["abc"]
        hub.leave(client)
        assert engine.told[-1] == ("session:abc", SurfaceLeft(client.id))
        hub.stop()
        nursery.cancel_scope.cancel()
