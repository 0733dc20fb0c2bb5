"""Socket Mode end to end: ``SocketModeClient`` against the fake Slack.

Timers stay short through the client's options (ping interval, back-off); every wait is
bounded by ``WAIT``.
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator

import pytest
import trio

from robota.transports.slack import ConnectionRefused

from ...support.fake_slack import APP_TOKEN, BOT_TOKEN, WAIT, FakeSlack, dm, events_api, fake_slack
from ._socket_client import Recorder, client


@pytest.fixture
async def fake() -> AsyncIterator[FakeSlack]:
    async with fake_slack() as slack:
        yield slack


async def test_it_opens_a_url_with_the_app_token_and_acks_an_envelope_exactly(
    fake: FakeSlack, nursery: trio.Nursery
) -> None:
    handler = Recorder(hang=True)  # the ack never waits for the handler
    link = client(fake, handler)
    await nursery.start(link.run)
    assert link.state == "connected" and link.connects == 1
    (call,) = fake.calls_of("apps.connections.open")
    assert call.headers["authorization"] == f"Bearer {APP_TOKEN}"
    assert call.headers["content-type"] == "application/x-www-form-urlencoded"
    envelope = events_api(dm("hello"), event_id="Ev1", retry_attempt=1, retry_reason="timeout")
    await fake.push(envelope)
    await fake.wait_until(lambda: fake.current.acks)
    assert fake.current.acks == [json.dumps({"envelope_id": envelope["envelope_id"]})]
    await fake.wait_until(lambda: handler.envelopes)
    (got,) = handler.envelopes
    assert (got.type, got.retry_attempt, got.retry_reason) == ("events_api", 1, "timeout")
    assert got.payload["event"]["text"] == "hello" and got.payload["event_id"] == "Ev1"


@pytest.mark.parametrize("reason", ["refresh_requested", "warning"])
async def test_a_disconnect_opens_the_new_connection_before_closing_the_old(
    fake: FakeSlack, nursery: trio.Nursery, reason: str
) -> None:
    handler = Recorder()
    link = client(fake, handler)
    await nursery.start(link.run)
    first = fake.current
    await fake.disconnect(reason)
    await fake.wait_until(lambda: len(fake.connections) == 2 and first.closed_by)
    assert len(fake.calls_of("apps.connections.open")) == 2  # URLs are single-use
    assert first.closed_by == "client"  # closed by robota once the new one said hello
    assert link.connects == 1  # readiness never dropped
    await fake.push(events_api(dm("after"), event_id="Ev2"))
    await fake.wait_until(lambda: handler.envelopes)
    assert handler.envelopes[0].payload["event_id"] == "Ev2"
    assert fake.connections[1].acks and not first.acks


async def test_the_old_connection_still_acks_while_the_new_one_opens(
    fake: FakeSlack, nursery: trio.Nursery
) -> None:
    handler = Recorder()
    await nursery.start(client(fake, handler, open_timeout=10 * WAIT).run)
    first = fake.current
    fake.scripted["apps.connections.open"].append((200, {}, Ellipsis))  # a slow open, forever
    await fake.disconnect("refresh_requested")
    await fake.wait_until(lambda: len(fake.calls_of("apps.connections.open")) == 2)
    await fake.push(events_api(dm("meanwhile")), first)
    await fake.wait_until(lambda: first.acks)
    assert len(fake.connections) == 1 and first.closed_by is None


async def test_a_silent_socket_is_detected_by_the_watchdog(
    fake: FakeSlack, nursery: trio.Nursery
) -> None:
    # 0.3 s: short, yet a healthy link's pong is never that late, even on a loaded machine
    link = client(fake, Recorder(), ping_interval=0.3)
    await nursery.start(link.run)
    first = fake.current
    first.silent = True  # TCP stays open, no pong ever comes back
    await fake.wait_until(lambda: len(fake.connections) == 2 and fake.current.pings)
    assert first.closed_by == "client"
    assert first.pings >= 2  # it kept pinging before it gave up on the link
    assert len(fake.calls_of("apps.connections.open")) == 2
    assert link.connects == 2 and link.state == "connected"


async def test_a_dropped_connection_reconnects_through_a_fresh_url(
    fake: FakeSlack, nursery: trio.Nursery
) -> None:
    handler = Recorder()
    link = client(fake, handler)
    await nursery.start(link.run)
    await fake.drop()
    await fake.wait_until(lambda: len(fake.connections) == 2 and link.state == "connected")
    await fake.push(events_api(dm("again")))
    await fake.wait_until(lambda: handler.envelopes)
    assert len(fake.calls_of("apps.connections.open")) == 2 and link.connects == 2


@pytest.mark.parametrize(
    ("token", "error"),
    [("xapp-1-wrong", "invalid_auth"), (BOT_TOKEN, "not_allowed_token_type")],
)
async def test_a_refused_app_token_is_fatal_at_once_and_never_quoted(
    fake: FakeSlack, token: str, error: str
) -> None:
    link = client(fake, Recorder(), app_token=token)
    with trio.fail_after(WAIT), pytest.raises(ConnectionRefused) as raised:
        await link.run()
    assert f"apps.connections.open: {error}" in str(raised.value)
    assert token not in str(raised.value)
    assert len(fake.calls_of("apps.connections.open")) == 1  # no retry loop
    assert fake.connections == [] and link.state == "stopped"


async def test_link_disabled_is_fatal(fake: FakeSlack) -> None:
    fake.disabled = True
    link = client(fake, Recorder())
    with trio.fail_after(WAIT), pytest.raises(ConnectionRefused, match="link_disabled"):
        await link.run()
    assert len(fake.calls_of("apps.connections.open")) == 1
    await fake.wait_until(lambda: fake.connections[0].closed_by == "client")


async def test_too_many_websockets_backs_off_instead_of_looping(
    fake: FakeSlack, nursery: trio.Nursery
) -> None:
    fake.max_connections = 0
    link = client(fake, Recorder(), too_many_wait=0.3)
    nursery.start_soon(link.run)
    await fake.wait_until(lambda: fake.connections and fake.connections[0].closed_by)
    fake.max_connections = 10
    await fake.wait_until(lambda: link.state == "connected")
    opens = [c.at for c in fake.calls_of("apps.connections.open")]
    assert len(opens) == 2 and opens[1] - opens[0] >= 0.3


async def test_malformed_frames_are_dropped_acked_where_expected_and_the_link_goes_on(
    fake: FakeSlack, nursery: trio.Nursery, caplog: pytest.LogCaptureFixture
) -> None:
    handler = Recorder(fail_first=True)
    await nursery.start(client(fake, handler).run)
    with caplog.at_level(logging.WARNING, logger="robota.transports.slack"):
        await fake.send_raw("{garbage")
        await fake.send_bytes(b"\x00\xff")
        await fake.push({"envelope_id": "no-payload", "type": "events_api"})
        await fake.push({"envelope_id": "odd", "type": "mystery", "payload": {}})
        await fake.push({"type": "events_api", "payload": {}})  # no envelope_id: cannot ack
        await fake.push(events_api(dm("first"), envelope_id="fails"))  # its handler raises
        await fake.push(events_api(dm("ok"), envelope_id="good"))
        await fake.wait_until(lambda: len(handler.envelopes) == 2)
    assert handler.ids == ["fails", "good"]
    assert [a["envelope_id"] for a in fake.acks] == ["no-payload", "odd", "fails", "good"]
    reasons = [str(getattr(r, "reason", "")) for r in caplog.records]
    assert any("not JSON" in r for r in reasons) and any("binary" in r for r in reasons)
    assert any("without a payload" in r for r in reasons)
    assert any(r.getMessage() == "slack envelope handler failed" for r in caplog.records)
    assert len(fake.connections) == 1


async def test_no_log_line_of_the_connection_carries_a_token_or_a_ticket(
    fake: FakeSlack, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.DEBUG):
        async with trio.open_nursery() as nursery:
            await nursery.start(client(fake, Recorder()).run)
            await fake.disconnect("refresh_requested")
            await fake.wait_until(lambda: len(fake.connections) == 2)
            nursery.cancel_scope.cancel()
        with pytest.raises(ConnectionRefused):
            await client(fake, Recorder(), app_token=APP_TOKEN + "x").run()
    tickets = [c.ticket for c in fake.connections]
    assert any(r.name.startswith("httpcore") for r in caplog.records), "httpcore logged nothing"
    for record in caplog.records:
        text = record.getMessage() + repr(vars(record))
        assert APP_TOKEN not in text, record
        assert not any(t in text for t in tickets), record


async def test_a_refused_handshake_is_retried_through_a_fresh_url(
    fake: FakeSlack, nursery: trio.Nursery
) -> None:
    used = f"ws://127.0.0.1:{fake.ws_port}/link/?ticket=already-used&app_id=A0FAKE"
    fake.scripted["apps.connections.open"].extend(
        [(200, {}, {"ok": True, "url": used}), (200, {}, {"ok": False, "error": "internal_error"})]
    )
    link = client(fake, Recorder())
    await nursery.start(link.run)
    # the single-use ticket refused (HTTP 401), a failed open, then a fresh URL that works
    assert len(fake.calls_of("apps.connections.open")) == 3
    assert len(fake.connections) == 1 and link.connects == 1
