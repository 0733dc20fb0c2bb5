"""A session handoff's frames (robota.mesh._handoff_frames through the one codec, _frames): each
round-trips, each field is bounded, and no frame asks for a session."""

from __future__ import annotations

import json

import pytest

from robota.mesh._frames import MAX_FRAME, BadFrame, decode, encode
from robota.mesh._handoff import (
    HandoffAbandoned,
    HandoffAccepted,
    HandoffClosed,
    HandoffDeclined,
    HandoffReleased,
    HandoffSaved,
    HandoffStaged,
)
from robota.mesh._handoff_frames import (
    HANDOFF_CHUNK,
    HandoffChunk,
    HandoffFrame,
    HandoffOffer,
)
from robota.mesh._manifest import SourceCheckout, seal

ID = "0123456789abcdef"
DIGEST = bytes(range(32))


def offer(**changes: object) -> HandoffOffer:
    fields: dict[str, object] = {
        "handoff": ID,
        "task": "t-build",
        "grant": b"\x01" * 200,
        "length": 1234,
        "sha256": DIGEST,
        "transferred": ("settings", "2 turns", "0 queued prompts"),
        "recreated": ("the agent's session, primed with the transcript",),
        "source_local": ("src/a.py", "notes\nwith a line break.txt"),
        "never_transferred": (".env files",),
        "origin": "git@example.org:me/project.git",
        "head": "a" * 40,
    }
    fields.update(changes)
    return HandoffOffer(**fields)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "frame",
    [
        offer(),
        offer(origin="", head="", source_local=()),
        HandoffChunk(ID, 0, b""),
        HandoffChunk(ID, HANDOFF_CHUNK, b"\x00\xff" * (HANDOFF_CHUNK // 2)),
        HandoffAccepted(ID),
        HandoffDeclined(ID),
        HandoffStaged(ID),
        HandoffSaved(ID, b"\x02" * 300),
        HandoffReleased(ID),
        HandoffClosed(ID),
        HandoffAbandoned(ID, "the offer expired"),
        HandoffAbandoned(ID, ""),
    ],
)
def test_handoff_frames_round_trip(frame: HandoffFrame) -> None:
    text = encode(frame)
    assert len(text) <= MAX_FRAME
    assert decode(text) == frame


@pytest.mark.parametrize(
    ("frame", "type_name"),
    [
        (offer(), "handoff.offer"),
        (HandoffChunk(ID, 0, b"x"), "handoff.chunk"),
        (HandoffAccepted(ID), "handoff.accepted"),
        (HandoffDeclined(ID), "handoff.declined"),
        (HandoffStaged(ID), "handoff.staged"),
        (HandoffSaved(ID, b"a"), "handoff.saved"),
        (HandoffReleased(ID), "handoff.released"),
        (HandoffClosed(ID), "handoff.closed"),
        (HandoffAbandoned(ID, "why"), "handoff.abandoned"),
    ],
)
def test_each_handoff_frame_has_its_type_on_the_wire(frame: HandoffFrame, type_name: str) -> None:
    assert json.loads(encode(frame))["type"] == type_name


def test_the_offer_carries_the_sealed_manifest_whole() -> None:
    checkout = SourceCheckout("/work/p", "git@example.org:me/p.git", "b" * 40, ("dirty.py",))
    sealed = seal({"id": "t1"}, [{"prompt": "HELLO", "answer": "hi"}], [], checkout, busy=None)
    frame = HandoffOffer.of(ID, "t1", b"grant", sealed.manifest)
    arrived = decode(encode(frame))
    assert isinstance(arrived, HandoffOffer)
    assert arrived.manifest() == sealed.manifest
    assert arrived.source_local == ("dirty.py",)


def test_an_offer_without_a_checkout_keeps_origin_and_head_absent() -> None:
    sealed = seal({"id": "t1"}, [], [], SourceCheckout("/tmp/x"), busy=None)
    arrived = decode(encode(HandoffOffer.of(ID, "t1", b"grant", sealed.manifest)))
    assert isinstance(arrived, HandoffOffer)
    assert arrived.manifest() == sealed.manifest
    assert (arrived.manifest().origin, arrived.manifest().head) == (None, None)


@pytest.mark.parametrize(
    ("frame", "message"),
    [
        (HandoffAccepted("0123ABCD"), "handoff id"),
        (HandoffAccepted("0123"), "handoff id"),
        (HandoffStaged("../../etc0"), "handoff id"),
        (HandoffReleased("0" * 65), "handoff id"),
        (offer(handoff="nothex00"), "handoff id"),
        (offer(task=""), "task id"),
        (offer(task="t" * 129), "task id"),
        (offer(task="t\n1"), "task id"),
        (offer(grant=b""), "grant"),
        (offer(grant=b"g" * 4097), "grant"),
        (offer(length=0), "payload of 1"),
        (offer(length=64 * 1024 * 1024 + 1), "payload of 1"),
        (offer(sha256=b"\x00" * 31), "SHA-256"),
        (offer(source_local=("x",) * 10_001), "inventory"),
        (offer(head="a\x1b[2J"), "printable"),
        (HandoffChunk(ID, 0, b"x" * (HANDOFF_CHUNK + 1)), "over"),
        (HandoffChunk(ID, 64 * 1024 * 1024, b"x"), "largest payload"),
        (HandoffSaved(ID, b""), "acknowledgement"),
        (HandoffSaved(ID, b"a" * 4097), "acknowledgement"),
        (HandoffAbandoned(ID, "x" * 501), "reason"),
        (HandoffAbandoned(ID, "line\nbreak"), "reason"),
    ],
)
def test_handoff_frames_out_of_bounds_are_refused(frame: HandoffFrame, message: str) -> None:
    with pytest.raises(BadFrame, match=message):
        decode(encode(frame))


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        # A destination cannot ask for anything: there is no such frame.
        ({"type": "handoff.request", "handoff": ID, "task": "t1"}, "no known type"),
        ({"type": "handoff.session", "handoff": ID, "session": "s1"}, "no known type"),
        ({"type": "session.request", "session": "s1"}, "no known type"),
        ({"type": "handoff.pull", "task": "t1"}, "no known type"),
        # Fields are exactly the frame's, each of its type.
        ({"type": "handoff.accepted", "handoff": ID, "session": "s1"}, "fields"),
        ({"type": "handoff.saved", "handoff": ID}, "fields"),
        ({"type": "handoff.saved", "handoff": ID, "ack": "not base64!"}, "base64"),
        ({"type": "handoff.chunk", "handoff": ID, "offset": -1, "data": ""}, "whole number"),
        ({"type": "handoff.chunk", "handoff": ID, "offset": True, "data": ""}, "whole number"),
        ({"type": "handoff.abandoned", "handoff": ID, "reason": 3}, "text"),
    ],
)
def test_frames_outside_the_handoffs_vocabulary_are_refused(
    raw: dict[str, object], message: str
) -> None:
    with pytest.raises(BadFrame, match=message):
        decode(json.dumps(raw))


def test_an_offer_with_a_field_of_the_wrong_shape_is_refused() -> None:
    raw = json.loads(encode(offer()))
    raw["source_local"] = "src/a.py"
    with pytest.raises(BadFrame, match="source_local: expected a list"):
        decode(json.dumps(raw))
