"""The long connection end to end: ``LongConnectionClient`` against the fake platform.

Timers stay short through what the fake hands out (``PingInterval`` and the reconnect
settings), the way a real server steers its clients; every wait is bounded by ``WAIT``.
"""

from __future__ import annotations

import base64
import json
import logging
from collections.abc import AsyncIterator, Mapping
from typing import Any

import pytest
import trio

from robota.transports.feishu import ConnectionRefused, Delivery, LongConnectionClient

from ...support.fake_feishu import APP_ID, APP_SECRET, SERVICE_ID, WAIT, FakePlatform, fake_platform


@pytest.fixture
async def fake() -> AsyncIterator[FakePlatform]:
    async with fake_platform() as platform:
        yield platform


class Recorder:
    """An event handler that records what it got and answers what it is told to."""

    def __init__(self, answer: Mapping[str, Any] | None = None) -> None:
        self.deliveries: list[Delivery] = []
        self.answer = answer

    async def __call__(self, delivery: Delivery) -> Mapping[str, Any] | None:
        self.deliveries.append(delivery)
        return self.answer


def client(fake: FakePlatform, handler: Recorder, **options: Any) -> LongConnectionClient:
    return LongConnectionClient(
        domain=fake.domain,
        app_id=options.pop("app_id", APP_ID),
        app_secret=options.pop("app_secret", APP_SECRET),
        handler=handler,
        **options,
    )


async def test_it_connects_pings_at_once_and_applies_the_pongs_config(
    fake: FakePlatform, nursery: trio.Nursery
) -> None:
    fake.pong_config = {"PingInterval": 0.2}  # the endpoint said 60 s
    link = client(fake, Recorder())
    await nursery.start(link.run)
    assert link.state == "connected"
    (endpoint,) = fake.calls("/callback/ws/endpoint")
    assert json.loads(endpoint.body) == {"AppID": APP_ID, "AppSecret": APP_SECRET}
    # Only the pong's 0.2 s interval can bring three pings within the bound.
    await fake.wait_until(lambda: len(fake.current.pings) >= 3)
    assert {(p.service, p.header("type")) for p in fake.current.pings} == {(SERVICE_ID, "ping")}
    assert link.machine.config.ping_interval == 0.2
    assert link.connects == 1


async def test_an_event_reaches_the_handler_and_is_acked_with_biz_rt(
    fake: FakePlatform, nursery: trio.Nursery
) -> None:
    handler = Recorder()
    await nursery.start(client(fake, handler).run)
    event = {"schema": "2.0", "header": {"event_id": "e1", "event_type": "im.message.receive_v1"}}
    message_id = await fake.push_event(event)
    await fake.wait_until(lambda: fake.acks)
    (ack,) = fake.acks
    assert ack.header("message_id") == message_id
    assert int(ack.header("biz_rt") or "-1") >= 0
    assert json.loads(ack.payload or b"") == {"code": 200}
    (delivery,) = handler.deliveries
    assert json.loads(delivery.payload) == event


async def test_a_card_callbacks_answer_travels_in_the_ack(
    fake: FakePlatform, nursery: trio.Nursery
) -> None:
    toast = {"toast": {"type": "info", "content": "stopping"}}
    await nursery.start(client(fake, Recorder(toast)).run)
    await fake.push_event({"header": {"event_type": "card.action.trigger"}})
    await fake.wait_until(lambda: fake.acks)
    answer = json.loads(fake.acks[0].payload or b"")
    assert answer["code"] == 200
    assert json.loads(base64.b64decode(answer["data"])) == toast


async def test_a_slow_handler_is_acked_late_never_ahead_of_its_answer(
    fake: FakePlatform, nursery: trio.Nursery, caplog: pytest.LogCaptureFixture
) -> None:
    """The handler answers once the message's accept committed; an ACK before that (at the
    platform's window) and a kill in between would lose the message for good."""
    answer = trio.Event()

    async def slow(delivery: Delivery) -> Mapping[str, Any] | None:
        await answer.wait()
        return None

    link = LongConnectionClient(
        domain=fake.domain, app_id=APP_ID, app_secret=APP_SECRET, handler=slow, ack_within=0.1
    )
    await nursery.start(link.run)
    with caplog.at_level(logging.WARNING, logger="robota.transports.feishu"):
        message_id = await fake.push_event({"header": {"event_id": "slow"}})
        await trio.sleep(0.4)  # four windows: the old rule had ACKed at the first
        assert fake.acks == []
        assert any("its ACK waits for the handler" in r.getMessage() for r in caplog.records)
    answer.set()
    await fake.wait_until(lambda: fake.acks)
    (ack,) = fake.acks
    assert ack.header("message_id") == message_id
    assert json.loads(ack.payload or b"") == {"code": 200}
    # Timed from the client's receipt, a little after the push the sleep followed.
    assert int(ack.header("biz_rt") or "0") >= 300


async def test_a_failing_handler_is_acked_500_and_the_link_goes_on(
    fake: FakePlatform, nursery: trio.Nursery
) -> None:
    calls = []

    async def failing(delivery: Delivery) -> None:
        calls.append(delivery)
        if len(calls) == 1:
            raise RuntimeError("handler bug")

    link = LongConnectionClient(
        domain=fake.domain, app_id=APP_ID, app_secret=APP_SECRET, handler=failing
    )
    await nursery.start(link.run)
    await fake.push_event({"n": 1})
    await fake.push_event({"n": 2})
    await fake.wait_until(lambda: len(fake.acks) == 2)
    assert [json.loads(a.payload or b"")["code"] for a in fake.acks] == [500, 200]


async def test_fragments_are_reassembled_into_one_delivery_and_one_ack(
    fake: FakePlatform, nursery: trio.Nursery
) -> None:
    handler = Recorder()
    await nursery.start(client(fake, handler).run)
    event = {"event": {"text": "x" * 5000, "emoji": "你好"}}
    message_id = await fake.push_event(event, fragments=3)
    await fake.wait_until(lambda: fake.acks)
    await fake.push_event({"after": True})  # the next event comes after the whole first one
    await fake.wait_until(lambda: len(fake.acks) == 2)
    assert [json.loads(d.payload) for d in handler.deliveries] == [event, {"after": True}]
    assert fake.acks[0].header("message_id") == message_id
    assert fake.acks[0].header("seq") == "0"  # the last fragment sent, whose arrival completed it


async def test_garbage_frames_and_text_messages_are_dropped_and_the_link_goes_on(
    fake: FakePlatform, nursery: trio.Nursery, caplog: pytest.LogCaptureFixture
) -> None:
    handler = Recorder()
    await nursery.start(client(fake, handler).run)
    with caplog.at_level(logging.WARNING, logger="robota.transports.feishu"):
        await fake.send_raw(b"\x0a\xff\xff")
        await fake.send_raw("a text message")
        await fake.push_event({"ok": True})
        await fake.wait_until(lambda: fake.acks)
    assert [json.loads(d.payload) for d in handler.deliveries] == [{"ok": True}]
    assert any("malformed frame" in str(getattr(r, "reason", "")) for r in caplog.records)
    assert len(fake.connections) == 1


async def test_a_dropped_connection_reconnects_through_a_fresh_endpoint_call(
    fake: FakePlatform, nursery: trio.Nursery
) -> None:
    handler = Recorder()
    link = client(fake, handler)
    await nursery.start(link.run)
    await fake.drop()
    await fake.wait_until(lambda: len(fake.connections) == 2 and fake.current.pings)
    assert len(fake.calls("/callback/ws/endpoint")) == 2
    await fake.push_event({"again": True})
    await fake.wait_until(lambda: fake.acks)
    assert fake.connections[0].closed_by == "server"
    assert [json.loads(d.payload) for d in handler.deliveries] == [{"again": True}]
    assert link.connects == 2


async def test_failed_attempts_wait_the_reconnect_interval_and_then_succeed(
    fake: FakePlatform, nursery: trio.Nursery
) -> None:
    link = client(fake, Recorder())
    await nursery.start(link.run)
    fake.scripted["POST", "/callback/ws/endpoint"].extend(
        [(503, {}, {"code": 1, "msg": "busy"}), (200, {}, {"code": 1000040343, "msg": "busy"})]
    )
    fake.handshake_refusals.append((400, {"handshake-status": "514", "handshake-msg": "later"}))
    await fake.drop()
    await fake.wait_until(lambda: len(fake.connections) == 2 and fake.current.pings)
    # two busy endpoint answers, one refused-but-retryable handshake, then the new link
    assert len(fake.calls("/callback/ws/endpoint")) == 5
    assert link.state == "connected"


async def test_a_silent_peer_is_detected_by_the_watchdog(
    fake: FakePlatform, nursery: trio.Nursery
) -> None:
    fake.client_config["PingInterval"] = 0.05
    link = client(fake, Recorder())
    await nursery.start(link.run)
    fake.current.silent = True  # TCP stays open, no frame ever comes back
    await fake.wait_until(lambda: len(fake.connections) == 2 and fake.current.pings)
    first = fake.connections[0]
    assert first.closed_by == "client"
    assert len(first.pings) >= 3  # it kept pinging for three intervals first
    assert link.connects == 2


async def test_refused_credentials_are_fatal_at_once(fake: FakePlatform) -> None:
    link = client(fake, Recorder(), app_secret="wrong-secret-value")
    with trio.fail_after(WAIT), pytest.raises(ConnectionRefused) as raised:
        await link.run()
    assert "refused: code 10014: app secret invalid" in str(raised.value)
    assert "wrong-secret-value" not in str(raised.value)
    assert len(fake.calls("/callback/ws/endpoint")) == 1  # no retry loop
    assert fake.connections == [] and link.state == "stopped"


@pytest.mark.parametrize(
    ("status", "headers", "says"),
    [
        (403, {"handshake-status": "403", "handshake-msg": "forbidden"}, "status 403"),
        (
            400,
            {
                "handshake-status": "514",
                "handshake-msg": "too many connections",
                "handshake-autherrcode": "1000040350",
            },
            "autherrcode 1000040350",
        ),
    ],
)
async def test_a_refused_handshake_is_fatal_at_once(
    fake: FakePlatform, status: int, headers: dict[str, str], says: str
) -> None:
    fake.handshake_refusals.append((status, headers))
    link = client(fake, Recorder())
    with (
        trio.fail_after(WAIT),
        pytest.raises(ConnectionRefused, match="handshake refused") as raised,
    ):
        await link.run()
    assert says in str(raised.value)
    assert headers["handshake-msg"] in str(raised.value)
    assert len(fake.calls("/callback/ws/endpoint")) == 1 and fake.connections == []


async def test_reconnects_stop_after_the_servers_reconnect_count(fake: FakePlatform) -> None:
    fake.client_config["ReconnectCount"] = 2
    fake.scripted["POST", "/callback/ws/endpoint"].extend(
        [
            (
                200,
                {},
                {
                    "code": 0,
                    "data": {
                        "URL": f"ws://127.0.0.1:{fake.ws_port}/ws?service_id=1",
                        "ClientConfig": fake.client_config,
                    },
                },
            )
        ]
        + [(503, {}, {"msg": "down"})] * 2
    )
    fake.handshake_refusals.append((500, {}))
    link = client(fake, Recorder())
    with trio.fail_after(WAIT), pytest.raises(ConnectionRefused, match="gave up after 2"):
        await link.run()
    assert len(fake.calls("/callback/ws/endpoint")) == 2


async def test_no_log_line_of_the_connection_carries_the_app_secret(
    fake: FakePlatform, caplog: pytest.LogCaptureFixture
) -> None:
    # Unredacted records: the code must not rely on robota.core.logs masking the secret.
    with caplog.at_level(logging.DEBUG):
        async with trio.open_nursery() as nursery:
            await nursery.start(client(fake, Recorder()).run)
            await fake.push_event({"x": 1})
            await fake.wait_until(lambda: fake.acks)
            await fake.drop()
            await fake.wait_until(lambda: len(fake.connections) == 2 and fake.current.pings)
            nursery.cancel_scope.cancel()
        wrong = APP_SECRET + "-wrong"
        with pytest.raises(ConnectionRefused) as raised:
            await client(fake, Recorder(), app_secret=wrong).run()
    assert wrong not in str(raised.value)
    assert any(r.name.startswith("httpcore") for r in caplog.records), "httpcore logged nothing"
    for record in caplog.records:
        text = record.getMessage() + repr(vars(record))
        assert APP_SECRET not in text, record
