"""The link's sans-IO parts as tables: frames and their field checks, the hello and gossip,
one link per pair, the redial delay and the keepalive."""

from __future__ import annotations

import json

import pytest

from robota.mesh._frames import MAX_FRAME, BadFrame, Certs, Frame, Hello, Lists, decode, encode
from robota.mesh._link import (
    PING_EVERY,
    SILENT_AFTER,
    Adopt,
    Close,
    Keepalive,
    Learn,
    LinkGossip,
    Send,
    Seqs,
    redial_delay,
    settle,
)
from robota.mesh._pairing import Answer, Confirm, Enrol, Fail, Start

FRAMES: list[Frame] = [
    Hello("AAAA-BBBB", "laptop", 3, 2, ("AAAA-BBBB", "CCCC")),
    Lists("roster", b"\x00signed\xff"),
    Lists("revocations", b""),
    Certs((b"one", b"two")),
    Start("laptop", b"cert", b"pake"),
    Answer(b"pake", b"mac"),
    Confirm(b"mac"),
    Enrol(b"bundle"),
    Fail("wrong-code"),
]


@pytest.mark.parametrize("frame", FRAMES, ids=lambda f: type(f).__name__)
def test_frames_round_trip(frame: Frame) -> None:
    assert decode(encode(frame)) == frame


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("nope", "not JSON"),
        ("[1]", "not a JSON object"),
        ('{"type": "launch"}', "no known type"),
        ('{"kind": "roster", "blob": ""}', "no known type"),
        ('{"type": "lists", "kind": "roster"}', "fields"),
        ('{"type": "lists", "kind": "roster", "blob": "", "x": 1}', "fields"),
        ('{"type": "lists", "kind": "roster", "blob": "!!"}', "blob: not base64"),
        ('{"type": "lists", "kind": "roster", "blob": 5}', "blob: expected base64"),
        ('{"type": "lists", "kind": "keys", "blob": ""}', "no kind 'keys'"),
        ('{"type": "certs", "certs": "AA=="}', "certs: expected a list"),
        (
            '{"type": "hello", "device": "A", "name": "n", "roster": -1, "revocations": 0, '
            '"known": []}',
            "roster: expected a whole number",
        ),
        (
            '{"type": "hello", "device": "A", "name": "n", "roster": true, "revocations": 0, '
            '"known": []}',
            "roster: expected a whole number",
        ),
        (
            '{"type": "hello", "device": 7, "name": "n", "roster": 1, "revocations": 0, '
            '"known": []}',
            "device: expected text",
        ),
        ('{"type": "pair.fail", "reason": "because"}', "no reason 'because'"),
        (b'{"type": "certs", "certs": []}', "binary"),
        (json.dumps({"type": "certs", "certs": ["A" * MAX_FRAME]}), "over the bound"),
    ],
)
def test_bad_frames_say_why(text: str | bytes, why: str) -> None:
    with pytest.raises(BadFrame, match=why):
        decode(text)


def test_an_oversized_frame_is_not_sent() -> None:
    with pytest.raises(BadFrame, match="over the bound"):
        encode(Lists("roster", b"x" * MAX_FRAME))


ME, PEER, THIRD = "AAAA", "BBBB", "CCCC"


def gossip(roster: int = 1, revocations: int = 1) -> LinkGossip:
    blobs = {"roster": f"roster-{roster}".encode(), "revocations": f"rev-{revocations}".encode()}
    certs = {ME: b"my cert", PEER: b"peer cert", THIRD: b"third cert"}
    return LinkGossip(ME, "desk", PEER, Seqs(roster, revocations), blobs, certs)


def test_the_hello_says_who_and_what_it_has() -> None:
    assert gossip(4, 2).hello() == Hello(ME, "desk", 4, 2, (ME, PEER, THIRD))


@pytest.mark.parametrize(
    ("mine", "theirs", "known", "effects"),
    [
        ((1, 1), (1, 1), (ME, PEER, THIRD), []),
        ((2, 1), (1, 1), (ME, PEER, THIRD), [Send(Lists("roster", b"roster-2"))]),
        ((1, 3), (1, 1), (ME, PEER, THIRD), [Send(Lists("revocations", b"rev-3"))]),
        ((1, 1), (5, 5), (ME, PEER, THIRD), []),  # behind: the peer sends, not us
        ((1, 1), (1, 1), (PEER,), [Send(Certs((b"my cert", b"third cert")))]),
        (
            (3, 3),
            (0, 0),
            (),
            [
                Send(Lists("roster", b"roster-3")),
                Send(Lists("revocations", b"rev-3")),
                Send(Certs((b"my cert", b"third cert"))),
            ],
        ),
    ],
)
def test_gossip_after_the_hello(
    mine: tuple[int, int], theirs: tuple[int, int], known: tuple[str, ...], effects: list[object]
) -> None:
    link = gossip(*mine)
    assert link.receive(Hello(PEER, "laptop", *theirs, known)) == effects
    assert (link.state, link.peer_name) == ("open", "laptop")


@pytest.mark.parametrize(
    ("first", "reason"),
    [
        (Hello(THIRD, "x", 1, 1, ()), f"the hello claims {THIRD}, the handshake proved {PEER}"),
        (Lists("roster", b""), "expected hello, got Lists"),
        (BadFrame("not JSON"), "malformed frame: not JSON"),
    ],
)
def test_a_link_that_starts_wrong_closes(first: Frame | BadFrame, reason: str) -> None:
    link = gossip()
    assert link.receive(first) == [Close(reason)]
    assert link.state == "closed"
    assert link.receive(Hello(PEER, "x", 1, 1, ())) == []


def test_an_open_link_hands_over_lists_and_certs_and_closes_on_the_rest() -> None:
    link = gossip()
    link.receive(Hello(PEER, "laptop", 1, 1, (ME, PEER, THIRD)))
    assert link.receive(Lists("revocations", b"newer")) == [Adopt("revocations", b"newer")]
    assert link.receive(Certs((b"c",))) == [Learn((b"c",))]
    link.peer_adopted("revocations", 2)
    # This device adopted the peer's revocation list: nothing to send back; a newer roster
    # from elsewhere goes out.
    blobs = {"roster": b"roster-2", "revocations": b"rev-2"}
    assert link.changed(Seqs(2, 2), blobs, link.certs) == [Send(Lists("roster", b"roster-2"))]
    assert link.receive(Hello(PEER, "x", 1, 1, ())) == [Close("unexpected Hello on an open link")]


def test_a_revoked_peer_is_closed() -> None:
    link = gossip()
    link.receive(Hello(PEER, "laptop", 1, 1, ()))
    assert link.revoked() == [Close(f"device {PEER} is revoked")]


@pytest.mark.parametrize(
    ("me", "peer", "existing_by_me", "new_by_me", "kept"),
    [
        ("A", "B", None, True, "keep-new"),
        ("A", "B", None, False, "keep-new"),
        ("A", "B", True, True, "keep-new"),  # a redial replaces the attempt before it
        ("A", "B", False, False, "keep-new"),
        # Both dialled at once: the lower id's dial stays, on both sides, in either order.
        ("A", "B", False, True, "keep-new"),  # A's own dial is the new one: it stays
        ("A", "B", True, False, "keep-existing"),  # A's own dial is the old one: it stays
        ("B", "A", False, True, "keep-existing"),  # at B: A's dial (existing) stays
        ("B", "A", True, False, "keep-new"),  # at B: A's dial (new) stays
    ],
)
def test_one_link_per_pair(
    me: str, peer: str, existing_by_me: bool | None, new_by_me: bool, kept: str
) -> None:
    assert (
        settle(me, peer, existing_dialled_by_me=existing_by_me, new_dialled_by_me=new_by_me) == kept
    )


@pytest.mark.parametrize(
    ("attempt", "jitter", "delay"),
    [
        (0, 0.0, 1.0),
        (0, 0.999, 1.0),
        (1, 0.0, 1.0),
        (1, 0.5, 1.5),
        (3, 0.0, 4.0),
        (3, 0.5, 6.0),
        (6, 0.0, 30.0),
        (6, 0.999, 59.97),
        (40, 0.0, 30.0),
        (40, 0.999, 59.97),
    ],
)
def test_redial_delay(attempt: int, jitter: float, delay: float) -> None:
    assert redial_delay(attempt, jitter) == pytest.approx(delay)
    assert 1.0 <= redial_delay(attempt, jitter) <= 60.0


@pytest.mark.parametrize(
    ("heard", "now", "due"),
    [
        (0.0, 1.0, None),
        (0.0, PING_EVERY, "ping"),
        (0.0, SILENT_AFTER - 0.1, "ping"),
        (0.0, SILENT_AFTER, "dead"),
        (10.0, 10.0 + PING_EVERY - 0.1, None),
    ],
)
def test_keepalive(heard: float, now: float, due: str | None) -> None:
    assert Keepalive(heard).due(now) == due


def test_keepalive_pings_once_per_interval() -> None:
    alive = Keepalive(0.0)
    assert alive.due(PING_EVERY) == "ping"
    assert alive.due(PING_EVERY + 1) is None
    assert alive.due(2 * PING_EVERY) == "ping"
    alive.on_receive(2 * PING_EVERY + 1)  # heard: the silence starts again
    assert alive.due(2 * PING_EVERY + 2) is None
    assert alive.due(2 * PING_EVERY + 1 + SILENT_AFTER) == "dead"
