"""Socket Mode's decisions, driven with clock readings: no socket, no sleep."""

from __future__ import annotations

import json
import math
from collections.abc import Callable

import pytest

from robota.transports.slack import Envelope, SocketMode, ack_text
from robota.transports.slack._socket import (
    Close,
    Deliver,
    Dial,
    Discarded,
    Effect,
    Fatal,
    Open,
    Ping,
    Send,
    Up,
)

URL = "ws://127.0.0.1:1/link/?ticket=t1"
HELLO = json.dumps({"type": "hello", "num_connections": 1})


def machine(**options: object) -> SocketMode:
    options.setdefault("jitter", lambda: 0.0)
    return SocketMode(ping_interval=10.0, hello_within=5.0, too_many_wait=30.0, **options)  # type: ignore[arg-type]


def connect(sm: SocketMode, now: float = 0.0, url: str = URL) -> int:
    """Open, dial and hello one link; returns it."""
    if sm.current is None and sm.state != "connecting":
        assert sm.start() == [Open()]
    (dial,) = sm.opened_url(url)
    assert isinstance(dial, Dial) and dial.url == url
    assert sm.dialed(dial.link, now) == []
    sm.received(dial.link, HELLO, now)
    assert sm.current == dial.link
    return dial.link


def envelope(envelope_id: object = "e1", kind: object = "events_api", **extra: object) -> str:
    frame: dict[str, object] = {"envelope_id": envelope_id, "type": kind}
    frame.setdefault("payload", {"type": "event_callback", "event_id": "Ev1"})
    frame.update(extra)
    return json.dumps(frame)


def test_the_first_hello_makes_it_up_and_pings_follow_every_interval() -> None:
    sm = machine()
    assert sm.state == "idle" and sm.start() == [Open()] and sm.state == "connecting"
    (dial,) = sm.opened_url(URL)
    assert sm.dialed(dial.link, 0.0) == [] and sm.state == "connecting"
    assert sm.received(dial.link, HELLO, 1.0) == [Up()]
    assert sm.state == "connected" and sm.deadline() == 11.0
    assert sm.tick(10.9) == []
    assert sm.tick(11.0) == [Ping(dial.link)]
    sm.pong(dial.link, 11.2)
    assert sm.deadline() == 21.0


def test_an_envelope_is_acked_first_with_exactly_its_id_then_delivered() -> None:
    sm = machine()
    link = connect(sm)
    ack, deliver = sm.received(link, envelope(retry_attempt=2, retry_reason="timeout"), 1.0)
    assert ack == Send(link, '{"envelope_id": "e1"}', "ack")
    assert json.loads(ack.text) == {"envelope_id": "e1"}
    assert isinstance(deliver, Deliver)
    assert deliver.envelope == Envelope(
        envelope_id="e1",
        type="events_api",
        payload={"type": "event_callback", "event_id": "Ev1"},
        retry_attempt=2,
        retry_reason="timeout",
    )


@pytest.mark.parametrize(
    ("frame", "acked", "says"),
    [
        ("not json", False, "not JSON"),
        ("[1, 2]", False, "not a JSON object"),
        (json.dumps({"type": "events_api", "payload": {}}), False, "without an envelope_id"),
        (json.dumps({"type": "surprise"}), False, "unknown type 'surprise'"),
        (json.dumps({"envelope_id": "e2", "type": "events_api"}), True, "without a payload"),
        (envelope("e3", payload="text"), True, "without a payload"),
        (envelope("e4", kind="mystery"), True, "unknown type 'mystery'"),
        (envelope(7), False, "without an envelope_id"),
    ],
)
def test_malformed_frames_are_dropped_and_acked_where_slack_expects_it(
    frame: str, acked: bool, says: str
) -> None:
    sm = machine()
    link = connect(sm)
    effects = sm.received(link, frame, 1.0)
    sends = [e for e in effects if isinstance(e, Send)]
    (dropped,) = [e for e in effects if isinstance(e, Discarded)]
    assert says in dropped.reason
    assert [json.loads(s.text) for s in sends] == (
        [{"envelope_id": json.loads(frame)["envelope_id"]}] if acked else []
    )
    assert not any(isinstance(e, Deliver) for e in effects)
    assert sm.current == link  # the link goes on


def test_a_binary_frame_is_dropped() -> None:
    sm = machine()
    link = connect(sm)
    assert sm.received(link, b"\x00\x01", 1.0) == [
        Discarded("a binary frame (Socket Mode sends text)")
    ]


@pytest.mark.parametrize("reason", ["refresh_requested", "warning", "something_new"])
def test_a_disconnect_opens_the_new_link_before_closing_the_old(reason: str) -> None:
    sm = machine()
    old = connect(sm)
    effects = sm.received(old, json.dumps({"type": "disconnect", "reason": reason}), 5.0)
    assert effects[-1] == Open()
    assert (reason == "something_new") == any(isinstance(e, Discarded) for e in effects)
    assert sm.current == old and sm.state == "connected"  # still serving meanwhile
    # a second disconnect while the new one is on its way opens nothing more
    assert sm.received(old, json.dumps({"type": "disconnect", "reason": reason}), 5.5) == []
    # the old link still acks what it carries
    assert sm.received(old, envelope("late"), 5.6)[0] == Send(old, ack_text("late"), "ack")
    (dial,) = sm.opened_url(URL + "2")
    sm.dialed(dial.link, 6.0)
    assert sm.received(dial.link, HELLO, 6.1) == [Close(old, "replaced by a new connection")]
    assert sm.current == dial.link  # no Up: readiness never dropped
    assert sm.received(old, envelope("stale"), 6.2) == []  # a closed link is ignored


def test_link_disabled_is_fatal() -> None:
    sm = machine()
    link = connect(sm)
    effects = sm.received(link, json.dumps({"type": "disconnect", "reason": "link_disabled"}), 1)
    assert effects == [
        Close(link, "Socket Mode is turned off for the app (link_disabled)"),
        Fatal("Socket Mode is turned off for the app (link_disabled)"),
    ]
    assert sm.state == "stopped" and sm.deadline() == math.inf and sm.tick(100.0) == []


def test_too_many_websockets_backs_off_instead_of_looping() -> None:
    sm = machine()
    link = connect(sm)
    effects = sm.received(
        link, json.dumps({"type": "disconnect", "reason": "too_many_websockets"}), 2.0
    )
    assert effects == [Close(link, "too_many_websockets: backing off")]
    assert sm.state == "waiting" and sm.deadline() == 32.0
    assert sm.tick(31.9) == []
    assert sm.tick(32.0) == [Open()]


def test_a_lost_link_reconnects_at_once_with_a_fresh_url() -> None:
    sm = machine()
    link = connect(sm)
    assert sm.closed(link, 3.0) == [Open()]
    assert sm.state == "connecting"
    second = connect(sm, 3.5, URL + "2")
    assert second != link


def test_the_watchdog_closes_a_silent_link_after_three_intervals_and_reopens() -> None:
    sm = machine()
    link = connect(sm)
    for at in (10.0, 20.0):
        assert sm.tick(at) == [Ping(link)]
    assert sm.tick(29.9) == []
    assert sm.tick(30.0) == [Close(link, "no frame for 3 ping intervals"), Open()]
    assert sm.current is None and sm.state == "connecting"


def test_any_frame_or_pong_feeds_the_watchdog() -> None:
    sm = machine()
    link = connect(sm)
    sm.pong(link, 25.0)
    sm.tick(10.0)
    sm.tick(20.0)
    sm.tick(30.0)
    assert sm.current == link
    assert sm.deadline() == 40.0  # the next ping; the watchdog fires at 55


def test_no_hello_in_time_closes_the_link_and_retries_with_backoff() -> None:
    sm = machine(backoff=(1.0, 2.0))
    sm.start()
    (dial,) = sm.opened_url(URL)
    sm.dialed(dial.link, 0.0)
    assert sm.deadline() == 5.0
    assert sm.tick(5.0) == [Close(dial.link, "no hello within 5 s")]
    assert sm.state == "waiting" and sm.deadline() == 6.0
    assert sm.tick(6.0) == [Open()]
    assert sm.open_failed("apps.connections.open: internal_error", 6.5, fatal=False) == []
    assert sm.deadline() == 8.5  # the second step
    assert sm.tick(8.5) == [Open()]
    (dial,) = sm.opened_url(URL)
    assert sm.dial_failed(dial.link, 9.0) == []
    assert sm.deadline() == 11.0  # the last step, kept
    assert sm.tick(11.0) == [Open()]
    connect(sm, 11.5)
    assert sm.state == "connected"


def test_jitter_lengthens_each_wait() -> None:
    sm = machine(backoff=(4.0,), jitter=lambda: 0.5)
    sm.start()
    sm.open_failed("apps.connections.open: no answer", 0.0, fatal=False)
    assert sm.deadline() == 6.0


def test_a_refused_app_token_is_fatal_at_once() -> None:
    sm = machine()
    sm.start()
    assert sm.open_failed("apps.connections.open: invalid_auth", 0.0, fatal=True) == [
        Fatal("apps.connections.open: invalid_auth")
    ]
    assert sm.state == "stopped" and sm.fatal_reason == "apps.connections.open: invalid_auth"


def test_a_failed_replacement_keeps_the_old_link_and_tries_again() -> None:
    sm = machine(backoff=(2.0,))
    old = connect(sm)
    sm.received(old, json.dumps({"type": "disconnect", "reason": "warning"}), 1.0)
    assert sm.open_failed("apps.connections.open: no answer", 1.5, fatal=False) == []
    assert sm.current == old and sm.state == "connected"
    assert sm.deadline() == 3.5
    effects: list[Effect] = sm.tick(3.5)
    assert effects == [Open()]


def test_the_old_link_closing_during_its_replacement_waits_for_the_new_one() -> None:
    sm = machine()
    old = connect(sm)
    sm.received(old, json.dumps({"type": "disconnect", "reason": "refresh_requested"}), 1.0)
    assert sm.closed(old, 1.2) == []  # the replacement is on its way: no second Open
    assert sm.current is None and sm.state == "connecting"
    (dial,) = sm.opened_url(URL + "2")
    sm.dialed(dial.link, 1.5)
    assert sm.received(dial.link, HELLO, 1.6) == [Up()]


def test_stop_closes_every_link() -> None:
    sm = machine()
    old = connect(sm)
    sm.received(old, json.dumps({"type": "disconnect", "reason": "warning"}), 1.0)
    (dial,) = sm.opened_url(URL + "2")
    assert sm.stop() == [Close(old, "stopped"), Close(dial.link, "stopped")]
    assert sm.state == "stopped" and sm.received(old, envelope(), 2.0) == []


def test_a_link_closed_before_its_hello_is_a_failed_attempt() -> None:
    sm = machine(backoff=(1.0,))
    sm.start()
    (dial,) = sm.opened_url(URL)
    sm.dialed(dial.link, 0.0)
    assert sm.closed(dial.link, 0.5) == []
    assert sm.state == "waiting" and sm.deadline() == 1.5
    assert sm.received(dial.link, HELLO, 0.6) == []  # whatever it still says is stale


def test_a_failure_during_a_too_many_websockets_wait_does_not_shorten_it() -> None:
    sm = machine(backoff=(1.0,))
    old = connect(sm)
    sm.received(old, json.dumps({"type": "disconnect", "reason": "warning"}), 1.0)  # Open
    too_many = json.dumps({"type": "disconnect", "reason": "too_many_websockets"})
    assert sm.received(old, too_many, 2.0) == [Close(old, "too_many_websockets: backing off")]
    assert sm.open_failed("apps.connections.open: no answer", 2.5, fatal=False) == []
    assert sm.deadline() == 32.0


def _opened(sm: SocketMode) -> int:
    """Start (once) and get a URL: the link being dialed."""
    if sm.state == "idle":
        sm.start()
    (dial,) = sm.opened_url(URL)
    assert isinstance(dial, Dial)
    return dial.link


def _dial_fails(sm: SocketMode, now: float) -> None:
    sm.dial_failed(_opened(sm), now, "WebSocket handshake: OSError")


def _open_fails(sm: SocketMode, now: float) -> None:
    sm.start()
    sm.open_failed("apps.connections.open: HTTP 0, error ConnectError", now, fatal=False)


@pytest.mark.parametrize(
    ("steps", "status"),
    [
        ([], ("connecting", None)),
        ([lambda sm: sm.start()], ("connecting", None)),
        (
            [lambda sm: _dial_fails(sm, 0.0)],
            ("connecting", "WebSocket handshake: OSError; next attempt within 1 s"),
        ),
        (  # while the next attempt runs, the last error still stands
            [lambda sm: _dial_fails(sm, 0.0), lambda sm: sm.tick(1.0)],
            ("connecting", "WebSocket handshake: OSError; next attempt within 1 s"),
        ),
        (  # the backoff's second step
            [
                lambda sm: _dial_fails(sm, 0.0),
                lambda sm: sm.tick(1.0),
                lambda sm: _dial_fails(sm, 1.1),
            ],
            ("connecting", "WebSocket handshake: OSError; next attempt in 2 s"),
        ),
        (
            [lambda sm: _open_fails(sm, 0.0)],
            (
                "connecting",
                "apps.connections.open: HTTP 0, error ConnectError; next attempt within 1 s",
            ),
        ),
        (
            [lambda sm: sm.start(), lambda sm: sm.open_failed("invalid_auth", 0.0, fatal=True)],
            ("failed", "invalid_auth"),
        ),
        (
            [lambda sm: sm.dialed(_opened(sm), 0.0), lambda sm: sm.tick(5.0)],
            ("connecting", "no hello within 5 s; next attempt within 1 s"),
        ),
        ([lambda sm: _dial_fails(sm, 0.0), lambda sm: sm.tick(1.0), connect], ("connected", None)),
        (
            [connect, lambda sm: sm.closed(sm.current, 3.0)],
            ("connecting", "the link was lost; next attempt within 1 s"),
        ),
        (
            [
                lambda sm: sm.dialed(_opened(sm), 0.0),
                lambda sm: sm.received(
                    1, json.dumps({"type": "disconnect", "reason": "too_many_websockets"}), 0.5
                ),
            ],
            ("connecting", "too_many_websockets; next attempt in 30 s"),
        ),
        ([lambda sm: sm.start(), lambda sm: sm.stop()], ("failed", "stopped")),
    ],
)
def test_what_the_link_reports(
    steps: list[Callable[[SocketMode], object]], status: tuple[str, str | None]
) -> None:
    sm = machine()
    for step in steps:
        step(sm)
    assert sm.status() == status
