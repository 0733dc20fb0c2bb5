"""A session handoff's frames: the offer and the payload's chunks, and the bounds of all of them.

The handoff's messages (``_handoff``: ``HandoffAccepted``, ``HandoffDeclined``,
``HandoffStaged``, ``HandoffSaved``, ``HandoffReleased``, ``HandoffClosed``,
``HandoffAbandoned``) travel as they are, under the names ``HANDOFF_NAMES`` gives them; this
module adds the two frames that carry more than a message: ``HandoffOffer`` (the signed grant
and the manifest, its inventory flattened into one list per category so every field is one the
codec checks) and ``HandoffChunk`` (payload bytes from an offset, at most ``HANDOFF_CHUNK`` so a
chunk's frame, in base64, stays well under the link's 1 MiB). ``handoff_checked`` bounds every
field ``_frames.decode`` has typed: the handoff id, the task id, the grant's and
acknowledgement's sizes, the manifest's length and digest, the task's title, an abandonment's
reason.

There is no frame that asks for a session, a transcript or a task: a destination cannot pull
anything; the source offers, and a ``type`` the codec does not know is refused as such.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, TypeGuard

from ._handoff import (
    HandoffAbandoned,
    HandoffAccepted,
    HandoffClosed,
    HandoffDeclined,
    HandoffMessage,
    HandoffReleased,
    HandoffSaved,
    HandoffStaged,
)
from ._manifest import INVENTORY_CATEGORIES, MAX_PAYLOAD, MAX_TITLE, InventoryCategory, Manifest

__all__ = [
    "HANDOFF_CHUNK",
    "HANDOFF_NAMES",
    "MAX_REASON",
    "HandoffChunk",
    "HandoffFrame",
    "HandoffOffer",
    "handoff_checked",
    "is_handoff_frame",
    "is_handoff_id",
]

HANDOFF_CHUNK = 256 * 1024
"""Payload bytes one ``handoff.chunk`` carries (about 350 KiB of frame in base64)."""
MAX_REASON = 500
"""The longest reason an abandonment gives, in characters."""
_MAX_SIGNED = 4096
"""A grant or acknowledgement is a few hundred bytes; anything much larger is no such thing."""
_MAX_TASK = 128
_MAX_INVENTORY = 10_000
"""Paths one inventory category names (a checkout's uncommitted files), at most."""


@dataclass(frozen=True, slots=True)
class HandoffOffer:
    """Source -> destination (``handoff.offer``): the grant for this one transfer and the
    manifest (``length`` and ``sha256`` of the sealed payload, the inventory, and the source's
    git ``origin`` and ``head``, ``""`` when it has none) that the destination's operator is
    shown and its staging checked against."""

    TYPE: ClassVar[str] = "handoff.offer"
    handoff: str
    task: str
    grant: bytes
    length: int
    sha256: bytes
    transferred: tuple[str, ...]
    recreated: tuple[str, ...]
    source_local: tuple[str, ...]
    never_transferred: tuple[str, ...]
    origin: str
    head: str
    title: str = ""
    """The task's title (``offer_title``), which the grant signs: what the destination's
    operator is shown as the offer's name (``""``: none, the task's id is shown)."""

    @classmethod
    def of(cls, handoff: str, task: str, grant: bytes, manifest: Manifest) -> HandoffOffer:
        def listed(category: InventoryCategory) -> tuple[str, ...]:
            return tuple(manifest.inventory.get(category, ()))

        return cls(
            handoff,
            task,
            grant,
            manifest.length,
            manifest.sha256,
            listed("transferred"),
            listed("re-created"),
            listed("source-local"),
            listed("never-transferred"),
            manifest.origin or "",
            manifest.head or "",
            manifest.title,
        )

    def manifest(self) -> Manifest:
        lists = (self.transferred, self.recreated, self.source_local, self.never_transferred)
        return Manifest(
            self.length,
            self.sha256,
            dict(zip(INVENTORY_CATEGORIES, lists, strict=True)),
            self.origin or None,
            self.head or None,
            self.title,
        )


@dataclass(frozen=True, slots=True)
class HandoffChunk:
    """Source -> destination (``handoff.chunk``): payload bytes in order from ``offset``."""

    TYPE: ClassVar[str] = "handoff.chunk"
    handoff: str
    offset: int
    data: bytes


HANDOFF_NAMES: dict[type, str] = {
    HandoffOffer: HandoffOffer.TYPE,
    HandoffChunk: HandoffChunk.TYPE,
    HandoffAccepted: "handoff.accepted",
    HandoffDeclined: "handoff.declined",
    HandoffStaged: "handoff.staged",
    HandoffSaved: "handoff.saved",
    HandoffReleased: "handoff.released",
    HandoffClosed: "handoff.closed",
    HandoffAbandoned: "handoff.abandoned",
}
"""Each handoff frame's ``type`` on the wire."""

HandoffFrame = HandoffOffer | HandoffChunk | HandoffMessage


def is_handoff_id(text: str) -> bool:
    """A handoff id: 8 to 64 lowercase hex digits (the source draws 16)."""
    return 8 <= len(text) <= 64 and all(c in "0123456789abcdef" for c in text)


def _printable(text: str) -> bool:
    return text.isprintable()


_HANDOFF_TYPES = (
    HandoffOffer,
    HandoffChunk,
    HandoffAccepted,
    HandoffDeclined,
    HandoffStaged,
    HandoffSaved,
    HandoffReleased,
    HandoffClosed,
    HandoffAbandoned,
)


def is_handoff_frame(frame: object) -> TypeGuard[HandoffFrame]:
    return isinstance(frame, _HANDOFF_TYPES)


def handoff_checked(frame: object) -> str | None:
    """What is wrong with a typed handoff frame (``None``: nothing, or not a handoff's frame).
    ``_frames.decode`` raises ``BadFrame`` with it, so a peer's frame out of bounds closes the
    link with the reason."""
    if not isinstance(frame, _HANDOFF_TYPES):
        return None
    name = HANDOFF_NAMES[type(frame)]
    if not is_handoff_id(frame.handoff):
        return f"{name}: a handoff id of 8 to 64 lowercase hex digits"
    match frame:
        case HandoffOffer():
            return _offer_checked(frame)
        case HandoffChunk() if len(frame.data) > HANDOFF_CHUNK:
            return f"{name}: {len(frame.data)} bytes, over {HANDOFF_CHUNK}"
        case HandoffChunk() if frame.offset + len(frame.data) > MAX_PAYLOAD:
            return f"{name}: past the largest payload ({MAX_PAYLOAD} bytes)"
        case HandoffSaved() if not 0 < len(frame.ack) <= _MAX_SIGNED:
            return f"{name}: an acknowledgement of 1 to {_MAX_SIGNED} bytes"
        case HandoffAbandoned() if not (
            len(frame.reason) <= MAX_REASON and _printable(frame.reason)
        ):
            return f"{name}: a reason of at most {MAX_REASON} printable characters"
    return None


def _offer_checked(offer: HandoffOffer) -> str | None:
    if not (0 < len(offer.task) <= _MAX_TASK and _printable(offer.task)):
        return f"{offer.TYPE}: a task id of 1 to {_MAX_TASK} printable characters"
    if not 0 < len(offer.grant) <= _MAX_SIGNED:
        return f"{offer.TYPE}: a grant of 1 to {_MAX_SIGNED} bytes"
    if not 0 < offer.length <= MAX_PAYLOAD:
        return f"{offer.TYPE}: a payload of 1 to {MAX_PAYLOAD} bytes"
    if len(offer.sha256) != 32:
        return f"{offer.TYPE}: a SHA-256 digest of 32 bytes"
    lists = (offer.transferred, offer.recreated, offer.source_local, offer.never_transferred)
    if any(len(items) > _MAX_INVENTORY for items in lists):
        return f"{offer.TYPE}: an inventory category of more than {_MAX_INVENTORY} entries"
    if not all(_printable(text) for text in (offer.origin, offer.head)):
        return f"{offer.TYPE}: origin and head are printable text"
    if not (len(offer.title) <= MAX_TITLE and _printable(offer.title)):
        return f"{offer.TYPE}: a title of at most {MAX_TITLE} printable characters"
    return None
