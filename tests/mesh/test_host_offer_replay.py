"""A handoff's offer replayed or sent to another device (issue 30 §3), at the host's handoff
driver (robota.host._mesh_handoff) on real stores, the frames through the link's codec: the
offer recorded on the link it was granted for; the same frame again over another link (another
channel) is refused ``wrong-channel``, the reason in the log, answered nothing and changes
nothing; the same offer reaching a device it was not granted for is refused
``wrong-destination`` and recorded nowhere; the source's own re-send after a reconnect,
granted afresh for the new link, is taken as the repeat it is.

These run in one process rather than across the namespaces: a replay needs the source's
device key to speak on a new link, which no tooling of the namespace tests holds."""

from __future__ import annotations

import logging
from collections.abc import Callable
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from robota.core.store import handoff_rows, open_reader, write_once
from robota.host._handoff_staging import HandoffStaging
from robota.host._mesh_handoff import HandoffHooks, HandoffKeys, MeshHandoffs
from robota.mesh import (
    OFFER_SECONDS,
    Handoff,
    HandoffFrame,
    HandoffOffer,
    SourceCheckout,
    device_id,
    new_key,
    offer_frame,
    public_bytes,
    seal,
)
from robota.mesh._frames import decode, encode

NOW = 1_800_000_000
LINK, OTHER_LINK = b"\x01" * 32, b"\x02" * 32
HANDOFF = "0123456789abcdef"
SOURCE, DESK, STRANGER = new_key(), new_key(), new_key()
SRC = device_id(SOURCE)


class _Empty:
    def apply(self, _db: Any) -> None:
        return None


class _Store:
    """One device's store, each write its own transaction."""

    def __init__(self, path: Path) -> None:
        self.path = path
        write_once(path, _Empty())

    async def write(self, op: Any) -> Any:
        return write_once(self.path, op)

    async def read(self, query: Callable[[Any], Any]) -> Any:
        with closing(open_reader(self.path)) as db:
            return query(db)


class _Links:
    """The device's links as its handoffs see them: what it sends, kept."""

    def __init__(self) -> None:
        self.sent: list[HandoffFrame] = []

    def channel(self, _peer: str) -> bytes:
        return LINK

    async def send_handoff(self, _peer: str, frame: HandoffFrame, *, channel: bytes) -> bool:
        self.sent.append(frame)
        return True


def _device(tmp_path: Path, key: Any, told: list[str]) -> tuple[MeshHandoffs, _Links]:
    links = _Links()
    me = device_id(key)
    handoffs = MeshHandoffs(
        _Store(tmp_path / f"{me[:8]}.db"),
        HandoffKeys(
            me, "USER", key, lambda device: public_bytes(SOURCE) if device == SRC else None
        ),
        lambda: links,  # type: ignore[arg-type,return-value]
        staging=HandoffStaging(tmp_path / f"{me[:8]}-staging"),
        hooks=HandoffHooks(told=told.append),
        clock=lambda: NOW + 5,
    )
    return handoffs, links


def _offer(channel: bytes, nonce: bytes) -> HandoffOffer:
    sealed = seal(
        {"id": "t-build", "agent": "codex", "title": "build"},
        [{"prompt": "HELLO", "answer": "hi"}],
        [],
        SourceCheckout("/src/p"),
        busy=None,
    )
    frame = offer_frame(
        SOURCE,
        user="USER",
        me=SRC,
        handoff=Handoff(HANDOFF, "t-build", device_id(DESK), "offered"),
        manifest=sealed.manifest,
        channel=channel,
        nonce=nonce,
        now=NOW,
        expires_at=NOW + OFFER_SECONDS,
    )
    arrived = decode(encode(frame))
    assert isinstance(arrived, HandoffOffer)
    return arrived


def _refusals(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if "refused" in r.getMessage()]


async def test_a_replayed_offer_and_one_for_another_device_are_refused_in_the_log(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    told: list[str] = []
    desk, desk_links = _device(tmp_path, DESK, told)
    offer = _offer(LINK, bytes(16))
    await desk.on_handoff(SRC, LINK, offer)
    [row] = await desk.book.read(handoff_rows)
    assert (row.id, row.side, row.phase) == (HANDOFF, "destination", "offered")
    assert told and _refusals(caplog) == []

    # The recorded frame, sent again over another link: refused, answered nothing.
    told.clear()
    await desk.on_handoff(SRC, OTHER_LINK, offer)
    assert _refusals(caplog) == [
        f"mesh: an offer from {SRC} refused: an offer's grant refused: wrong-channel: "
        "a grant made for another link"
    ]
    assert desk_links.sent == [] and told == []
    assert [(r.id, r.phase) for r in await desk.book.read(handoff_rows)] == [(HANDOFF, "offered")]

    # The same offer at a device it was not granted for: refused, recorded nowhere.
    caplog.clear()
    stranger, stranger_links = _device(tmp_path, STRANGER, [])
    await stranger.on_handoff(SRC, LINK, offer)
    assert _refusals(caplog) == [
        f"mesh: an offer from {SRC} refused: an offer's grant refused: wrong-destination: "
        "a grant for another device"
    ]
    assert await stranger.book.read(handoff_rows) == [] and stranger_links.sent == []

    # The source's own re-send over the new link, granted afresh for it: the repeat it is.
    caplog.clear()
    await desk.on_handoff(SRC, OTHER_LINK, _offer(OTHER_LINK, b"\x07" * 16))
    assert _refusals(caplog) == []
    assert [(r.id, r.phase) for r in await desk.book.read(handoff_rows)] == [(HANDOFF, "offered")]
