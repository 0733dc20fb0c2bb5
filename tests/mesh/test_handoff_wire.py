"""Between a handoff's frames and its machines (robota.mesh._handoff_wire): the acknowledgement
and the grant verified before they are events (tampered, replayed, for another device, another
link, another handoff), the payload staged chunk by chunk (a flipped byte, a gap, an extra
byte), and a whole handoff played through the codec from push to release."""

from __future__ import annotations

import hashlib
import json
from dataclasses import replace

import pytest

from robota.mesh import channel_fingerprint, new_key, public_bytes, sign_ack
from robota.mesh._frames import decode, encode
from robota.mesh._handoff import (
    AckArrived,
    Chunked,
    CommitHeld,
    Handoff,
    HandoffAbandoned,
    HandoffAccepted,
    HandoffClosed,
    HandoffDeclined,
    HandoffReleased,
    HandoffSaved,
    HandoffStaged,
    LetGo,
    OfferArrived,
    OperatorAnswered,
    PayloadChecked,
    ReleaseCopy,
    SendMessage,
    SendPayload,
    SendSaved,
    destination_step,
    source_step,
)
from robota.mesh._handoff_frames import HANDOFF_CHUNK, HandoffChunk, HandoffFrame, HandoffOffer
from robota.mesh._handoff_wire import (
    OFFER_SECONDS,
    Unwired,
    chunk_event,
    destination_event,
    manifest_document,
    manifest_of,
    offer_event,
    offer_frame,
    payload_chunks,
    source_event,
)
from robota.mesh._manifest import SourceCheckout, Staging, read_payload, seal

NOW = 1_800_000_000
SOURCE, DESTINATION, OTHER = new_key(), new_key(), new_key()
SRC, DST = "SOURCE-DEVICE", "DESTINATION-DEVICE"
CHANNEL = channel_fingerprint(b"dialler", b"answerer", b"nonces")
ID = "0123456789abcdef"
HANDOFF = Handoff(ID, "t-build", DST, "offered")
SEALED = seal(
    {"id": "t-build", "agent": "codex"},
    [{"prompt": "HELLO", "answer": "hi " * 200_000}],  # over two chunks
    [],
    SourceCheckout("/work/p", "git@example.org:me/p.git", "c" * 40, ("dirty.py",)),
    busy=None,
)


def offer(**changes: object) -> HandoffOffer:
    fields: dict[str, object] = {
        "user": "USER",
        "me": SRC,
        "handoff": HANDOFF,
        "manifest": SEALED.manifest,
        "channel": CHANNEL,
        "nonce": bytes(16),
        "now": NOW,
        "expires_at": NOW + OFFER_SECONDS,
    }
    fields.update(changes)
    key = fields.pop("key", SOURCE)
    return offer_frame(key, **fields)  # type: ignore[arg-type]


def arrive(frame: HandoffOffer, **changes: object) -> object:
    check: dict[str, object] = {
        "source_key": public_bytes(SOURCE),
        "user": "USER",
        "me": DST,
        "channel": CHANNEL,
        "now": NOW + 5,
        "nonce_seen": frozenset[bytes](),
    }
    check.update(changes)
    return offer_event(decode(encode(frame)), **check)  # type: ignore[arg-type]


def test_an_offer_arrives_with_its_grant_and_manifest() -> None:
    result = arrive(offer())
    assert isinstance(result, tuple)
    arrived, grant = result
    assert arrived == OfferArrived()
    assert (grant.source, grant.destination, grant.handoff, grant.session) == (
        SRC,
        DST,
        ID,
        "t-build",
    )
    assert grant.expires_at == NOW + OFFER_SECONDS


def flipped(blob: bytes, at: int) -> bytes:
    return blob[:at] + bytes([blob[at] ^ 1]) + blob[at + 1 :]


@pytest.mark.parametrize(
    ("frame", "changes", "reason"),
    [
        (offer(), {"nonce_seen": frozenset({bytes(16)})}, "replayed"),
        (offer(key=OTHER), {}, "signature-invalid"),
        (replace(offer(), grant=flipped(offer().grant, 40)), {}, "signature-invalid"),
        (replace(offer(), grant=flipped(offer().grant, -10)), {}, "signature-invalid"),
        (offer(), {"me": "A-THIRD-DEVICE"}, "wrong-destination"),
        (offer(), {"user": "SOMEONE-ELSE"}, "wrong-user"),
        (offer(), {"channel": channel_fingerprint(b"d", b"a", b"other")}, "wrong-channel"),
        (replace(offer(), handoff="fedcba9876543210"), {}, "wrong-handoff"),
        (replace(offer(), task="t-other"), {}, "wrong-handoff"),
        (offer(), {"now": NOW + OFFER_SECONDS}, "expired"),
        (offer(), {"now": NOW - 60}, "not-yet-valid"),
    ],
)
def test_an_offer_whose_grant_does_not_hold_is_refused(
    frame: HandoffOffer, changes: dict[str, object], reason: str
) -> None:
    result = arrive(frame, **changes)
    assert isinstance(result, Unwired)
    assert f"refused: {reason}" in result.reason


def test_a_reconnect_regrants_the_offer_for_the_new_link() -> None:
    new_channel = channel_fingerprint(b"dialler", b"answerer", b"new nonces")
    again = offer(channel=new_channel, nonce=b"\x01" * 16, now=NOW + 60)
    later = NOW + 65
    assert isinstance(arrive(again, channel=new_channel, nonce_seen={bytes(16)}, now=later), tuple)
    assert isinstance(arrive(offer(), channel=new_channel, now=later), Unwired)  # the old grant


def ack(key: object = DESTINATION, **changes: object) -> HandoffSaved:
    claims: dict[str, object] = {
        "handoff": ID,
        "source": SRC,
        "destination": DST,
        "session": "t-build",
        "manifest_sha256": SEALED.manifest.sha256,
    }
    claims.update(changes)
    return HandoffSaved(ID, sign_ack(key, **claims).blob)  # type: ignore[arg-type]


def at_source(frame: HandoffFrame, handoff: Handoff = HANDOFF) -> object:
    return source_event(
        decode(encode(frame)),  # type: ignore[arg-type]
        handoff=handoff,
        me=SRC,
        destination_key=public_bytes(DESTINATION),
        manifest_sha256=SEALED.manifest.sha256,
    )


@pytest.mark.parametrize(
    ("frame", "event"),
    [
        (HandoffAccepted(ID), HandoffAccepted(ID)),
        (HandoffDeclined(ID), HandoffDeclined(ID)),
        (HandoffStaged(ID), HandoffStaged(ID)),
        (HandoffClosed(ID), HandoffClosed(ID)),
        (HandoffAbandoned(ID, "why"), HandoffAbandoned(ID, "why")),
        (ack(), AckArrived()),
        (ack(OTHER), "refused: signature-invalid"),
        (ack(handoff="fedcba9876543210"), "wrong-handoff"),
        (ack(destination="A-THIRD-DEVICE"), "wrong-handoff"),
        (ack(session="t-other"), "wrong-handoff"),
        (ack(manifest_sha256=hashlib.sha256(b"other").digest()), "wrong-handoff"),
        (HandoffSaved(ID, flipped(ack().ack, -10)), "signature-invalid"),
        (HandoffReleased(ID), "no frame a source takes"),
        (HandoffChunk(ID, 0, b"x"), "no frame a source takes"),
    ],
)
def test_what_the_source_makes_of_each_frame(frame: HandoffFrame, event: object) -> None:
    result = at_source(frame)
    if isinstance(event, str):
        assert isinstance(result, Unwired) and event in result.reason
    else:
        assert result == event


@pytest.mark.parametrize(
    ("frame", "event"),
    [
        (HandoffReleased(ID), HandoffReleased(ID)),
        (HandoffAbandoned(ID, "expired"), HandoffAbandoned(ID, "expired")),
        (HandoffAccepted(ID), Unwired("a HandoffAccepted is no frame a destination takes here")),
        (ack(), Unwired("a HandoffSaved is no frame a destination takes here")),
    ],
)
def test_what_the_destination_makes_of_the_sources_messages(
    frame: HandoffFrame, event: object
) -> None:
    assert destination_event(decode(encode(frame))) == event


def test_the_payload_travels_in_bounded_chunks_that_rebuild_it() -> None:
    chunks = list(payload_chunks(ID, SEALED.payload))
    assert len(chunks) == -(-len(SEALED.payload) // HANDOFF_CHUNK) >= 3
    assert all(len(c.data) <= HANDOFF_CHUNK for c in chunks)
    assert b"".join(c.data for c in chunks) == SEALED.payload
    staging = Staging(SEALED.manifest.length, SEALED.manifest.sha256)
    events = [chunk_event(staging, decode(encode(c))) for c in chunks]  # type: ignore[arg-type]
    assert events == [Chunked()] * (len(chunks) - 1) + [PayloadChecked()]


def staged(chunks: list[HandoffChunk]) -> list[object]:
    staging = Staging(SEALED.manifest.length, SEALED.manifest.sha256)
    return [chunk_event(staging, chunk) for chunk in chunks]


def test_a_flipped_payload_byte_fails_the_digest_once_all_bytes_arrived() -> None:
    chunks = list(payload_chunks(ID, SEALED.payload))
    chunks[1] = replace(chunks[1], data=flipped(chunks[1].data, 7))
    events = staged(chunks)
    assert events[:-1] == [Chunked()] * (len(chunks) - 1)
    last = events[-1]
    assert isinstance(last, PayloadChecked) and "digest" in last.problem


@pytest.mark.parametrize(
    ("change", "what"),
    [
        (lambda cs: [cs[0], cs[2]], "order"),  # a gap
        (lambda cs: [cs[0], cs[0]], "order"),  # an overlap
        (lambda cs: [*cs[:-1], replace(cs[-1], data=cs[-1].data + b"x")], "length"),
    ],
)
def test_a_gap_an_overlap_or_an_extra_byte_ends_the_staging_at_once(
    change: object, what: str
) -> None:
    chunks = change(list(payload_chunks(ID, SEALED.payload)))  # type: ignore[operator]
    last = staged(chunks)[-1]
    assert isinstance(last, PayloadChecked) and what in last.problem


def test_a_whole_handoff_through_the_codec_moves_authority_only_on_the_ack() -> None:
    """Both machines driven only by frames that went through encode and decode."""
    source = HANDOFF
    result = arrive(offer())
    assert isinstance(result, tuple)
    step = destination_step(None, result[0], new=Handoff(ID, "t-build", SRC, "offered"))
    destination = step.handoff
    step = destination_step(destination, OperatorAnswered(yes=True), new=destination)
    destination = step.handoff
    assert step.effects[-1] == SendMessage(HandoffAccepted(ID))

    event = at_source(HandoffAccepted(ID), source)
    assert isinstance(event, HandoffAccepted)
    step = source_step(source, event)
    source = step.handoff
    assert SendPayload() in step.effects and source.phase == "transferring"

    staging = Staging(SEALED.manifest.length, SEALED.manifest.sha256)
    for chunk in payload_chunks(ID, SEALED.payload):
        step = destination_step(
            destination, chunk_event(staging, decode(encode(chunk))), new=destination
        )  # type: ignore[arg-type]
        destination = step.handoff
    assert destination.phase == "committed"
    assert CommitHeld() in step.effects and SendSaved() in step.effects
    assert read_payload(SEALED.payload).turns[0]["prompt"] == "HELLO"
    assert source.phase == "transferring"  # nothing moved at the source yet

    event = at_source(ack(), source)
    assert event == AckArrived()
    step = source_step(source, event)  # type: ignore[arg-type]
    source = step.handoff
    assert source.phase == "committed" and LetGo() in step.effects
    assert SendMessage(HandoffReleased(ID)) in step.effects

    released = destination_event(decode(encode(HandoffReleased(ID))))
    step = destination_step(destination, released, new=destination)  # type: ignore[arg-type]
    assert step.handoff.released and ReleaseCopy() in step.effects


def test_the_manifest_as_the_store_keeps_it_reads_back_whole() -> None:
    manifest = SEALED.manifest
    document = json.loads(json.dumps(manifest_document(manifest)))
    assert manifest_of(manifest.length, manifest.sha256, document) == manifest
    bare = seal({"id": "t"}, [], [], SourceCheckout("/x"), busy=None).manifest
    assert manifest_of(bare.length, bare.sha256, manifest_document(bare)) == bare


@pytest.mark.parametrize(
    ("document", "source_local", "origin"),
    [
        ({}, (), None),
        ({"inventory": [], "origin": 3}, (), None),
        ({"inventory": {"source-local": "a.py"}, "origin": "o"}, (), "o"),
        ({"inventory": {"source-local": ["a.py", 2]}}, (), None),
        ({"inventory": {"source-local": ["a.py"]}, "head": None}, ("a.py",), None),
    ],
)
def test_a_stored_manifest_of_the_wrong_shape_reads_as_empty_not_as_an_error(
    document: dict[str, object], source_local: tuple[str, ...], origin: str | None
) -> None:
    manifest = manifest_of(5, b"\x00" * 32, document)
    assert manifest.inventory["source-local"] == source_local
    assert manifest.origin == origin
