"""The host's handoff driver (robota.host._mesh_handoff) on two real stores, its frames through
the codec between two sides as a link would carry them: a task pushed, accepted into a chosen
folder, saved held with its transcript, let go only on the verified acknowledgement, then
released; a flipped payload byte abandons on both sides and unfreezes the source; a forged
acknowledgement moves nothing; a repeated offer records nothing twice."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from robota.core.store import (
    handoff_rows,
    imported_transcript,
    task_mobility,
)
from robota.mesh import (
    HandoffChunk,
    HandoffFrame,
    HandoffSaved,
    new_key,
    sign_ack,
)

from ._handoff_pair import CHANNEL, TURNS, Pair, make_pair, phases, sealed_task


@pytest.fixture
def pair(tmp_path: Path) -> Pair:
    return make_pair(tmp_path)


async def test_a_pushed_task_moves_only_on_the_acknowledgement_and_starts_after_release(
    pair: Pair,
) -> None:
    handoff = await pair.source.push("t-build", pair.dst, sealed_task())
    assert await pair.wire.pump() == ["HandoffOffer"]
    assert await phases(pair, handoff) == ("offered", "offered")
    assert any(f"robota mesh accept {handoff}" in text for text in pair.happened)
    mobility = await pair.src_book.read(lambda db: task_mobility(db, "t-build"))
    assert mobility is not None and mobility.state == "moving"

    assert await pair.destination.answer(handoff, yes=True, cwd="/here/p") == "transferring"
    seen = await pair.wire.pump()
    assert seen == [
        "HandoffAccepted",
        "HandoffChunk",
        "HandoffStaged",
        "HandoffSaved",
        "HandoffReleased",
        "HandoffClosed",
    ]
    assert await phases(pair, handoff) == ("committed", "committed")
    assert "source let go t-build" in pair.happened
    assert "destination may start t-build" in pair.happened
    assert pair.happened.index("source let go t-build") < pair.happened.index(
        "destination may start t-build"
    )
    moved = await pair.src_book.read(lambda db: task_mobility(db, "t-build"))
    assert moved is not None and (moved.state, moved.peer) == ("moved", pair.dst)
    assert await pair.dst_book.read(lambda db: task_mobility(db, "t-build")) is None
    assert await pair.dst_book.read(lambda db: imported_transcript(db, "t-build")) == TURNS
    cwd = await pair.dst_book.read(
        lambda db: db.execute("SELECT cwd FROM tasks WHERE id = 't-build'").fetchone()[0]
    )
    assert cwd == "/here/p"
    rows = await pair.src_book.read(handoff_rows)
    assert rows[0].released and rows[0].to_json(pair.src)["to"] == pair.dst

    # Everything again (a reconnect on both sides): nothing moves twice.
    await pair.source.reconnected(pair.dst)
    await pair.destination.reconnected(pair.src)
    await pair.wire.pump()
    assert await phases(pair, handoff) == ("committed", "committed")
    assert pair.happened.count("source let go t-build") == 1


async def test_a_flipped_payload_byte_abandons_both_sides_and_unfreezes_the_task(
    pair: Pair,
) -> None:
    def flip(frame: HandoffFrame) -> HandoffFrame:
        if isinstance(frame, HandoffChunk):
            data = bytearray(frame.data)
            data[len(data) // 2] ^= 1
            return HandoffChunk(frame.handoff, frame.offset, bytes(data))
        return frame

    pair.wire.tamper = flip
    handoff = await pair.source.push("t-build", pair.dst, sealed_task())
    await pair.wire.pump()
    await pair.destination.answer(handoff, yes=True)
    await pair.wire.pump()
    assert await phases(pair, handoff) == ("abandoned", "abandoned")
    assert "source unfroze t-build" in pair.happened
    assert "source let go t-build" not in pair.happened
    assert await pair.src_book.read(lambda db: task_mobility(db, "t-build")) is None
    assert await pair.dst_book.read(lambda db: imported_transcript(db, "t-build")) is None


async def test_a_forged_acknowledgement_moves_nothing(pair: Pair) -> None:
    handoff = await pair.source.push("t-build", pair.dst, sealed_task())
    await pair.wire.pump()
    await pair.destination.answer(handoff, yes=False)
    assert await pair.wire.pump() == ["HandoffDeclined"]
    assert await phases(pair, handoff) == ("abandoned", "abandoned")

    second = await pair.source.push("t-build", pair.dst, sealed_task())
    await pair.wire.pump()
    await pair.destination.answer(second, yes=True)
    _sender, _peer, accepted = pair.wire.queue.pop(0)
    pair.wire.queue.clear()
    await pair.source.on_handoff(pair.dst, CHANNEL, accepted)
    pair.wire.queue.clear()  # the payload never arrives: the source waits in transferring
    assert await phases(pair, second) == ("transferring", "transferring")

    def ack(key: Any, **changes: str) -> HandoffSaved:
        claims = {"handoff": second, "source": pair.src, "destination": pair.dst}
        claims.update(changes)
        signed = sign_ack(
            key, session="t-build", manifest_sha256=sealed_task().manifest.sha256, **claims
        )
        return HandoffSaved(second, signed.blob)

    for forged in (
        ack(new_key()),  # not the destination's key
        ack(pair.destination.keys.key, destination=pair.src),  # for another device
        ack(pair.destination.keys.key, handoff="fedcba9876543210"),  # of another handoff
    ):
        await pair.source.on_handoff(pair.dst, CHANNEL, forged)
        assert await phases(pair, second) == ("transferring", "transferring")
    assert "source let go t-build" not in pair.happened

    # The destination's own acknowledgement does move it (so the refusals above were theirs).
    await pair.source.on_handoff(pair.dst, CHANNEL, ack(pair.destination.keys.key))
    source_phase, _ = await phases(pair, second)
    assert source_phase == "committed"
    assert "source let go t-build" in pair.happened


async def test_a_repeated_offer_is_recorded_once(pair: Pair) -> None:
    handoff = await pair.source.push("t-build", pair.dst, sealed_task())
    offer = pair.wire.queue[0]
    await pair.wire.pump()
    pair.wire.queue.append(offer)
    await pair.wire.pump()
    rows = await pair.dst_book.read(handoff_rows)
    assert [(row.id, row.phase) for row in rows] == [(handoff, "offered")]


async def test_an_offer_left_unanswered_expires_on_both_sides_and_unfreezes(pair: Pair) -> None:
    handoff = await pair.source.push("t-build", pair.dst, sealed_task())
    await pair.wire.pump()
    await pair.source.expire()
    await pair.destination.expire()
    assert await phases(pair, handoff) == ("offered", "offered")  # not yet: ten minutes

    later = pair.source.clock() + 601
    pair.source.clock = pair.destination.clock = lambda: later
    await pair.destination.expire()
    assert await pair.wire.pump() == ["HandoffAbandoned"]
    assert await phases(pair, handoff) == ("abandoned", "abandoned")
    assert "source unfroze t-build" in pair.happened
    with pytest.raises(ValueError, match="is abandoned, not waiting for an answer"):
        await pair.destination.answer(handoff, yes=True)
