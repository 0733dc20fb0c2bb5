"""Socket Mode's machine under generated orders of inputs: whatever Slack, the network and the
clock do, it never raises, acknowledges every envelope once and first, keeps at most one live
and one new link, has at most one ``apps.connections.open`` under way, and stays silent once
stopped."""

from __future__ import annotations

import json
import math

from hypothesis import example, given, settings
from hypothesis import strategies as st

from robota.transports.slack import SocketMode
from robota.transports.slack._socket import Close, Dial, Effect, Fatal, Open, Send

HELLO = json.dumps({"type": "hello"})
FRAMES = [
    HELLO,
    HELLO,  # weighted: most orders worth trying need a live link
    HELLO,
    json.dumps({"type": "disconnect", "reason": "refresh_requested"}),
    json.dumps({"type": "disconnect", "reason": "warning"}),
    json.dumps({"type": "disconnect", "reason": "too_many_websockets"}),
    json.dumps({"type": "disconnect", "reason": "link_disabled"}),
    json.dumps({"type": "disconnect"}),
    json.dumps({"envelope_id": "e", "type": "events_api", "payload": {"event_id": "Ev"}}),
    json.dumps({"envelope_id": "e", "type": "interactive"}),
    json.dumps({"envelope_id": "e", "type": "nope", "payload": {}}),
    json.dumps({"type": "events_api", "payload": {}}),
    "garbage",
    "[]",
]

steps = st.lists(
    st.tuples(
        st.sampled_from(
            ["url", "open_failed", "fatal", "dialed", "dial_failed", "frame", "pong", "closed"]
            + ["tick"] * 3
        ),
        st.integers(0, 7),  # which link: one of those dialed, or (7) one that never existed
        st.integers(0, len(FRAMES) - 1),
        st.floats(0.0, 20.0),  # time passing
    ),
    max_size=60,
)


@settings(max_examples=300, deadline=None)
@given(steps)
# found by review: a stale dial failure of the live link once dropped it under the watchdog
@example(
    [("url", 0, 0, 0.0), ("frame", 0, 0, 0.0), ("dial_failed", 0, 0, 0.0), ("tick", 0, 0, 99.0)]
)
def test_the_machine_keeps_its_promises_whatever_the_order(  # noqa: PLR0915 (one driver)
    plan: list[tuple[str, int, int, float]],
) -> None:
    sm = SocketMode(ping_interval=5.0, hello_within=3.0, too_many_wait=10.0, jitter=lambda: 0.5)
    now = 0.0
    opening = 0
    links: set[int] = set()  # dialed and not closed by the machine
    stopped = False

    def apply(effects: list[Effect]) -> None:
        nonlocal opening, stopped
        assert not stopped or effects == [], effects
        for effect in effects:
            if isinstance(effect, Open):
                opening += 1
                assert opening == 1, "a second apps.connections.open while one is under way"
            elif isinstance(effect, Dial):
                links.add(effect.link)
            elif isinstance(effect, Close):
                links.discard(effect.link)
            elif isinstance(effect, Fatal):
                stopped = True
        assert len(links) <= 2
        assert not math.isnan(sm.deadline())
        if sm.state == "waiting":
            assert sm.deadline() < math.inf
        if stopped:
            assert sm.state == "stopped" and sm.deadline() == math.inf

    apply(sm.start())
    for kind, pick, frame, delta in plan:
        now += delta
        known = sorted(links)
        link = 99 if pick == 7 or not known else known[pick % len(known)]
        if kind == "url" and opening:
            opening -= 1
            apply(sm.opened_url("ws://127.0.0.1:1/link/?ticket=t"))
        elif kind in ("open_failed", "fatal") and opening:
            opening -= 1
            apply(sm.open_failed("apps.connections.open: x", now, fatal=kind == "fatal"))
        elif kind == "dialed":
            apply(sm.dialed(link, now))
        elif kind == "dial_failed":
            pending = link in links and link != sm.current
            apply(sm.dial_failed(link, now))
            if pending:
                links.discard(link)
        elif kind == "frame":
            effects = sm.received(link, FRAMES[frame], now)
            has_id = '"envelope_id"' in FRAMES[frame]
            acks = [e for e in effects if isinstance(e, Send)]
            if has_id and link in links and not stopped:
                assert effects[0] == acks[0] and len(acks) == 1  # acked once, and first
            else:
                assert acks == []
            apply(effects)
        elif kind == "pong":
            apply(sm.pong(link, now))
        elif kind == "closed":
            effects = sm.closed(link, now)
            links.discard(link)
            apply(effects)
        elif kind == "tick":
            apply(sm.tick(now))
