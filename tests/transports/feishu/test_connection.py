"""The long connection's decisions, driven with clock readings: no socket, no sleep."""

from __future__ import annotations

import base64
import json
from collections.abc import Callable

import pytest

from robota.transports.feishu import (
    METHOD_CONTROL,
    METHOD_DATA,
    ClientConfig,
    Endpoint,
    Frame,
    Header,
    LongConnection,
    Refusal,
    decode,
    encode,
    endpoint_outcome,
    handshake_outcome,
)
from robota.transports.feishu._connection import (
    Close,
    Deliver,
    Dial,
    Discarded,
    Discover,
    Effect,
    Fatal,
    Overdue,
    Send,
    Up,
)

URL = "ws://127.0.0.1:1/ws?device_id=d1&service_id=42"
CONFIG = {"PingInterval": 10, "ReconnectCount": -1, "ReconnectInterval": 4, "ReconnectNonce": 30}


def connected(config: object = CONFIG, *, jitter: float = 0.5) -> LongConnection:
    machine = LongConnection(jitter=lambda: jitter)
    assert machine.start() == [Discover()]
    assert machine.discovered(URL, config, 0.0) == [Dial(URL)]
    effects = machine.opened(0.0)
    assert [type(e) for e in effects] == [Up, Send]
    return machine


def sent(effects: list[Effect]) -> list[Frame]:
    return [decode(e.data) for e in effects if isinstance(e, Send)]


def event(message_id: str = "m1", *, total: int = 1, seq: int = 0, payload: bytes = b"{}") -> bytes:
    frame = Frame(
        seq_id=5 + seq,
        log_id=77,
        service=42,
        method=METHOD_DATA,
        headers=(
            Header("type", "event"),
            Header("message_id", message_id),
            Header("sum", str(total)),
            Header("seq", str(seq)),
            Header("trace_id", "tr"),
        ),
        payload=payload,
    )
    return encode(frame)


def pong(config: dict[str, object] | None = None) -> bytes:
    payload = json.dumps(config).encode() if config is not None else None
    return encode(
        Frame(service=42, method=METHOD_CONTROL, headers=(Header("type", "pong"),), payload=payload)
    )


def test_the_first_ping_goes_out_at_connect_with_the_urls_service_id() -> None:
    machine = LongConnection()
    machine.start()
    machine.discovered(URL, CONFIG, 0.0)
    up, ping = machine.opened(0.0)
    assert up == Up()
    assert isinstance(ping, Send) and ping.what == "ping"
    assert decode(ping.data) == Frame(
        service=42, method=METHOD_CONTROL, headers=(Header("type", "ping"),)
    )
    assert machine.state == "connected" and machine.config.ping_interval == 10


def test_pings_follow_every_ping_interval() -> None:
    machine = connected()
    assert machine.deadline() == 10
    assert machine.tick(9.99) == []
    assert [f.header("type") for f in sent(machine.tick(10.0))] == ["ping"]
    machine.received(pong(), 10.1)
    assert machine.deadline() == 20


def test_a_pongs_client_config_is_applied() -> None:
    machine = connected()
    machine.received(
        pong({"PingInterval": 3, "ReconnectCount": 2, "ReconnectInterval": 1, "ReconnectNonce": 0}),
        1.0,
    )
    assert machine.config == ClientConfig(3, 2, 1, 0)
    assert machine.deadline() == 3  # the last ping (at 0) plus the new interval
    assert sent(machine.tick(3.0))[0].header("type") == "ping"


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ({"PingInterval": 5}, ClientConfig(5, -1, 120, 30)),
        ({"PingInterval": 0}, ClientConfig()),
        ({"PingInterval": -1, "ReconnectNonce": -2}, ClientConfig()),
        ({"PingInterval": "5", "ReconnectCount": True}, ClientConfig()),
        ({"ReconnectCount": -2}, ClientConfig()),
        ({"ReconnectCount": 3, "ReconnectInterval": 0.5}, ClientConfig(120, 3, 0.5, 30)),
        ({"PingInterval": float("inf")}, ClientConfig()),
        ([1, 2], ClientConfig()),
        (None, ClientConfig()),
    ],
)
def test_client_config_keeps_its_values_against_invalid_ones(
    raw: object, expected: ClientConfig
) -> None:
    assert ClientConfig().merged(raw) == expected


def test_the_watchdog_reconnects_after_three_ping_intervals_without_a_frame() -> None:
    machine = connected(jitter=0.5)
    machine.received(pong(), 25.0)  # any frame feeds the watchdog
    for at in (10.0, 20.0, 30.0, 40.0, 50.0):  # pings go out, nothing comes back
        assert [f.header("type") for f in sent(machine.tick(at))] == ["ping"]
    assert machine.tick(54.9) == []
    effects = machine.tick(55.0)
    assert effects == [Close("no frame for 3 ping intervals")]
    assert machine.state == "waiting"
    assert machine.deadline() == 55.0 + 0.5 * 30  # the server's jitter
    assert machine.tick(69.9) == []
    assert machine.tick(70.0) == [Discover()]


def test_an_event_is_delivered_and_acked_with_biz_rt_and_the_handlers_result() -> None:
    machine = connected()
    (deliver,) = machine.received(event(payload=b'{"a":1}'), 1.0)
    assert isinstance(deliver, Deliver)
    delivery = deliver.delivery
    assert (delivery.message_id, delivery.trace_id, delivery.payload) == ("m1", "tr", b'{"a":1}')
    toast = {"toast": {"type": "info", "content": "stopping"}}
    (ack,) = sent(machine.handled(delivery.ack_id, 1.2, result=toast))
    original = decode(event(payload=b'{"a":1}'))
    assert ack.headers == (*original.headers, Header("biz_rt", "200"))
    assert (ack.seq_id, ack.log_id, ack.service, ack.method) == (5, 77, 42, METHOD_DATA)
    answer = json.loads(ack.payload or b"")
    assert answer["code"] == 200
    assert json.loads(base64.b64decode(answer["data"])) == toast
    assert machine.handled(delivery.ack_id, 1.3) == []  # one ACK only


@pytest.mark.parametrize(
    ("answered", "ticks", "acked_at", "overdue_at"),
    [
        (1.2, [], 1.2, None),  # the handler answered at once: ACKed then
        (3.4, [3.4], 3.4, None),  # just within the platform's window
        (3.6, [3.5], 3.6, 3.5),  # the window passed first: reported, no ACK until answered
        (9.0, [3.5, 6.0, 8.9], 9.0, 3.5),  # a slow store: ACKed late, reported once
        (None, [3.5, 6.0, 9.9], None, 3.5),  # never answered: never ACKed
    ],
)
def test_an_event_is_acked_only_once_its_handler_answered(
    answered: float | None, ticks: list[float], acked_at: float | None, overdue_at: float | None
) -> None:
    """The handler commits the message's accept before it answers, and the platform never
    delivers an ACKed event again: an ACK ahead of the answer (at a deadline) and a kill in
    between lost the message. Received at 1.0; ``ack_within`` is 2.5 s."""
    machine = connected()
    (deliver,) = machine.received(event(), 1.0)
    assert isinstance(deliver, Deliver)
    assert machine.deadline() == 3.5
    steps: list[tuple[float, str]] = sorted(
        [(at, "tick") for at in ticks] + ([(answered, "handled")] if answered else [])
    )
    acks: list[tuple[float, Frame]] = []
    overdue: list[tuple[float, Overdue]] = []
    for at, step in steps:
        if step == "tick":
            effects = machine.tick(at)
        else:
            effects = machine.handled(deliver.delivery.ack_id, at, result={"ok": True})
        acks += [(at, frame) for frame in sent(effects)]
        overdue += [(at, e) for e in effects if isinstance(e, Overdue)]
    if acked_at is None:
        assert acks == []
    else:
        ((at, ack),) = acks
        assert at == acked_at
        assert ack.header("biz_rt") == str(round((acked_at - 1.0) * 1000))
        assert json.loads(ack.payload or b"")["code"] == 200
        assert machine.handled(deliver.delivery.ack_id, 9.9) == [], "one ACK only"
    if overdue_at is None:
        assert overdue == []
    else:
        assert overdue == [(overdue_at, Overdue("m1", overdue_at - 1.0))]
        assert machine.deadline() == 10, "reported once: the next ping is what comes next"


def test_a_handler_failing_after_the_window_is_acked_500_then() -> None:
    machine = connected()
    (deliver,) = machine.received(event(), 1.0)
    assert isinstance(deliver, Deliver)
    assert sent(machine.tick(4.0)) == []
    (ack,) = sent(machine.handled(deliver.delivery.ack_id, 5.0, failed=True))
    assert json.loads(ack.payload or b"") == {"code": 500}
    assert ack.header("biz_rt") == "4000"


def test_an_event_unanswered_when_its_link_was_lost_is_left_to_the_platform() -> None:
    """The platform delivers it again on the next link; the old delivery's answer ACKs
    nothing there (its frame belongs to the lost link)."""
    machine = connected()
    (deliver,) = machine.received(event(), 1.0)
    assert isinstance(deliver, Deliver)
    machine.closed(2.0)
    assert machine.tick(machine.deadline()) == [Discover()]
    machine.discovered(URL, CONFIG, 20.0)
    machine.opened(20.0)
    assert machine.handled(deliver.delivery.ack_id, 20.5) == []
    (again,) = machine.received(event(), 21.0)
    assert isinstance(again, Deliver) and again.delivery.ack_id != deliver.delivery.ack_id
    (ack,) = sent(machine.handled(again.delivery.ack_id, 21.5))
    assert ack.header("biz_rt") == "500"


def test_a_failed_handler_is_acked_with_code_500() -> None:
    machine = connected()
    (deliver,) = machine.received(event(), 1.0)
    assert isinstance(deliver, Deliver)
    (ack,) = sent(machine.handled(deliver.delivery.ack_id, 1.0, failed=True))
    assert json.loads(ack.payload or b"") == {"code": 500}
    assert ack.header("biz_rt") == "0"


def test_fragments_are_joined_in_order_and_the_last_one_is_acked() -> None:
    machine = connected()
    assert machine.received(event("big", total=3, seq=2, payload=b"C"), 1.0) == []
    assert machine.received(event("big", total=3, seq=0, payload=b"A"), 1.1) == []
    (deliver,) = machine.received(event("big", total=3, seq=1, payload=b"B"), 1.2)
    assert isinstance(deliver, Deliver) and deliver.delivery.payload == b"ABC"
    (ack,) = sent(machine.handled(deliver.delivery.ack_id, 1.2))
    assert (ack.seq_id, ack.header("seq")) == (6, "1")  # the fragment that completed it


def test_incomplete_fragments_expire_after_five_seconds() -> None:
    machine = connected()
    machine.received(event("big", total=2, seq=0, payload=b"A"), 1.0)
    assert machine.deadline() == 6.0
    assert machine.tick(6.0) == [Discarded("fragments of big expired incomplete")]
    assert machine.received(event("big", total=2, seq=1, payload=b"B"), 6.5) == []


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b"\xff\xff", "malformed frame"),
        (encode(Frame(service=42, method=7)), "unknown method 7"),
        (encode(Frame(service=42, headers=(Header("type", "weird"),))), "control frame of unknown"),
        (
            encode(Frame(service=42, headers=(Header("type", "pong"),), payload=b"not json")),
            "not JSON",
        ),
        (
            encode(Frame(service=42, method=METHOD_DATA, headers=(Header("type", "card"),))),
            "legacy card",
        ),
        (
            encode(Frame(service=42, method=METHOD_DATA, headers=(Header("type", "other"),))),
            "data frame of unknown type 'other'",
        ),
        (
            encode(
                Frame(
                    service=42,
                    method=METHOD_DATA,
                    headers=(Header("type", "event"), Header("sum", "x")),
                )
            ),
            "non-numeric sum",
        ),
        (event(total=2, seq=5), "fragment 5 of 2 is out of range"),
    ],
)
def test_bad_input_is_discarded_and_the_link_stays_up(data: bytes, reason: str) -> None:
    machine = connected()
    (effect,) = machine.received(data, 1.0)
    assert isinstance(effect, Discarded) and reason in effect.reason
    assert machine.state == "connected"
    assert isinstance(machine.received(event(), 2.0)[0], Deliver)


def test_a_lost_link_reconnects_after_jitter_then_interval_between_failed_attempts() -> None:
    machine = connected(jitter=0.25)
    machine.received(event(), 1.0)  # its ACK cannot go out on a dead link
    machine.closed(2.0)
    assert machine.state == "waiting" and machine.deadline() == 2.0 + 0.25 * 30
    assert machine.tick(9.5) == [Discover()]
    assert machine.failed("endpoint busy", 9.6, fatal=False) == []
    assert machine.deadline() == pytest.approx(9.6 + 4)
    assert machine.tick(13.6) == [Discover()]
    assert machine.discovered(URL, None, 13.7) == [Dial(URL)]
    effects = machine.opened(13.8)
    assert [type(e) for e in effects] == [Up, Send]
    assert machine.tick(20.0) == []  # nothing pending from the old link


def test_reconnect_count_bounds_the_attempts_then_it_is_fatal() -> None:
    machine = connected({**CONFIG, "ReconnectCount": 2, "ReconnectNonce": 0})
    machine.closed(1.0)
    assert machine.tick(1.05) == [Discover()]
    assert machine.failed("busy", 1.1, fatal=False) == []
    assert machine.tick(5.1) == [Discover()]
    assert machine.failed("busy", 5.2, fatal=False) == [Fatal("busy; gave up after 2 attempt(s)")]
    assert machine.state == "stopped" and machine.tick(100.0) == []


def test_a_fatal_refusal_stops_at_once_without_retrying() -> None:
    machine = LongConnection()
    machine.start()
    effects = machine.failed(
        "endpoint call refused: code 10003: invalid app_secret", 0.0, fatal=True
    )
    assert effects == [Fatal("endpoint call refused: code 10003: invalid app_secret")]
    assert machine.state == "stopped" and machine.deadline() == float("inf")
    assert machine.tick(1e9) == [] and machine.start() == []


def test_an_endpoint_url_without_a_service_id_is_a_failed_attempt() -> None:
    machine = LongConnection()
    machine.start()
    assert machine.discovered("ws://127.0.0.1:1/ws?device_id=d", CONFIG, 0.0) == []
    assert machine.state == "waiting" and machine.deadline() == 4.0


def test_stop_closes_an_open_link() -> None:
    machine = connected()
    assert machine.stop() == [Close("stopped")]
    assert machine.state == "stopped" and machine.received(event(), 1.0) == []


def _answer(code: int, msg: str = "m", data: object = None) -> bytes:
    return json.dumps({"code": code, "msg": msg, "data": data}).encode()


@pytest.mark.parametrize(
    ("status", "body", "expected"),
    [
        (
            200,
            _answer(0, data={"URL": URL, "ClientConfig": {"PingInterval": 1}}),
            Endpoint(URL, {"PingInterval": 1}),
        ),
        (200, _answer(0, data={}), Refusal("endpoint call: the answer has no data.URL", False)),
        (200, b"<html>", Refusal("endpoint call: the answer is not a JSON object", False)),
        (503, b"", Refusal("endpoint call: HTTP 503 (no message)", False)),
        (401, _answer(1, "nope"), Refusal("endpoint call: HTTP 401 (nope)", False)),
        (200, _answer(1, "busy"), Refusal("endpoint call busy: code 1: busy", False)),
        (200, _answer(1000040343, "x"), Refusal("endpoint call busy: code 1000040343: x", False)),
        (
            200,
            _answer(10003, "invalid app_secret"),
            Refusal("endpoint call refused: code 10003: invalid app_secret", True),
        ),
    ],
)
def test_what_the_endpoint_answer_means(
    status: int, body: bytes, expected: Endpoint | Refusal
) -> None:
    assert endpoint_outcome(status, body) == expected


@pytest.mark.parametrize(
    ("status", "headers", "fatal"),
    [
        (403, {}, True),
        (400, {"handshake-status": "403", "handshake-msg": "forbidden"}, True),
        (
            400,
            {"handshake-status": "514", "handshake-autherrcode": "1000040350"},
            True,
        ),
        (400, {"handshake-status": "514", "handshake-autherrcode": "1"}, False),
        (500, {}, False),
        (400, {"handshake-status": "x"}, False),
    ],
)
def test_what_a_refused_handshake_means(status: int, headers: dict[str, str], fatal: bool) -> None:
    outcome = handshake_outcome(status, headers)
    assert outcome.fatal is fatal
    assert outcome.reason.startswith("WebSocket handshake")


def _fail(reason: str, now: float, *, fatal: bool = False) -> Callable[[LongConnection], object]:
    return lambda m: m.failed(reason, now, fatal=fatal)


DEAD = "WebSocket handshake failed: OSError"


@pytest.mark.parametrize(
    ("config", "steps", "status"),
    [
        ({}, [], ("connecting", None)),
        ({}, [lambda m: m.start()], ("connecting", None)),
        (
            {"ReconnectInterval": 1},
            [
                lambda m: m.start(),
                lambda m: m.discovered(URL, {"ReconnectInterval": 1}, 0.0),
                _fail(DEAD, 0.1),
            ],
            ("connecting", f"{DEAD}; next attempt within 1 s"),
        ),
        (  # the same failure, attempt after attempt, reads the same (reported once)
            {"ReconnectInterval": 1},
            [lambda m: m.start(), _fail(DEAD, 0.1), lambda m: m.tick(1.2), _fail(DEAD, 1.3)],
            ("connecting", f"{DEAD}; next attempt within 1 s"),
        ),
        (  # while the next attempt runs, the last error still stands
            {"ReconnectInterval": 1},
            [lambda m: m.start(), _fail(DEAD, 0.1), lambda m: m.tick(1.2)],
            ("connecting", f"{DEAD}; next attempt within 1 s"),
        ),
        (
            {},
            [lambda m: m.start(), _fail("endpoint call: HTTP 502 (no message)", 0.0)],
            ("connecting", "endpoint call: HTTP 502 (no message); next attempt in 120 s"),
        ),
        (
            {},
            [lambda m: m.start(), _fail("endpoint call refused: code 10014: x", 0.0, fatal=True)],
            ("failed", "endpoint call refused: code 10014: x"),
        ),
        (
            {"ReconnectInterval": 1},
            [
                lambda m: m.start(),
                _fail(DEAD, 0.1),
                lambda m: m.tick(1.2),
                lambda m: m.discovered(URL, None, 1.3),
                lambda m: m.opened(1.4),
            ],
            ("connected", None),
        ),
        (
            {"ReconnectNonce": 10},
            [
                lambda m: m.start(),
                lambda m: m.discovered(URL, None, 0.0),
                lambda m: m.opened(0.0),
                lambda m: m.closed(5.0),
            ],
            ("connecting", "the link was lost; next attempt in 5 s"),
        ),
        ({}, [lambda m: m.start(), lambda m: m.stop()], ("failed", "stopped")),
    ],
)
def test_what_the_link_reports(
    config: dict[str, float],
    steps: list[Callable[[LongConnection], object]],
    status: tuple[str, str | None],
) -> None:
    machine = LongConnection(config=ClientConfig().merged(config), jitter=lambda: 0.5)
    for step in steps:
        step(machine)
    assert machine.status() == status
