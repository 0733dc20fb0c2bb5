"""The link's frames and their one codec: typed records in, JSON text out, field-checked back.

A frame is one WebSocket text message, a JSON object with ``type`` and that type's fields, at
most ``MAX_FRAME`` bytes (1 MiB); bytes travel as base64. ``decode`` checks every field's type
(and that no unknown field is there), so a peer's bad frame is a ``BadFrame`` naming what is
wrong: the link closes with that reason, never the host. This module is the one seam between
the link's state machines (``_link``, ``_pairing``, ``_talk``, ``_offers``, the handoff's
``_handoff_frames``) and the wire: the project's
shared wire vocabulary (``robota.core.protocol``, being unified) can replace it here alone.
"""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass, fields
from typing import Any, ClassVar, get_type_hints

from ._errors import MeshError
from ._handoff_frames import HANDOFF_NAMES, HandoffFrame, handoff_checked
from ._offers import CHUNK, OUTCOMES, FileChunk, OfferOutcome, PeerOffer
from ._pairing import FAILURES, Answer, Confirm, Enrol, Fail, Start
from ._talk import END_REASONS, MAX_TEXT, PeerEnd, PeerReply, PeerSay

__all__ = [
    "CHANNEL_NONCE",
    "MAX_FRAME",
    "BadFrame",
    "Certs",
    "Channel",
    "Frame",
    "Hello",
    "Lists",
    "decode",
    "encode",
]

MAX_FRAME = 1024 * 1024
"""The largest frame a link takes, in bytes of its JSON text."""


class BadFrame(MeshError, ValueError):
    """A frame that is not one of the link's (the link closes with this reason)."""


@dataclass(frozen=True, slots=True)
class Hello:
    """The first frame each side sends on a link: who it says it is (checked against what its
    handshake proved), its lists' sequences and the link certificates it knows."""

    TYPE: ClassVar[str] = "hello"
    device: str
    name: str
    roster: int
    revocations: int
    known: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Lists:
    """A signed list (``kind``: roster or revocations) for a side that is behind."""

    TYPE: ClassVar[str] = "lists"
    kind: str
    blob: bytes


@dataclass(frozen=True, slots=True)
class Certs:
    """Link certificates the other side did not list as known."""

    TYPE: ClassVar[str] = "certs"
    certs: tuple[bytes, ...]


@dataclass(frozen=True, slots=True)
class Channel:
    """Each side's fresh nonce for this one connection, sent right after its hello: with both
    link certificates they make the link's channel fingerprint (``_grant.channel_fingerprint``),
    to which a handoff's grant is bound, so a grant is good on no other connection."""

    TYPE: ClassVar[str] = "channel"
    nonce: bytes


CHANNEL_NONCE = 16
"""Bytes of a ``Channel`` nonce."""


_PAIRING = {Start: "pair.start", Answer: "pair.answer", Confirm: "pair.confirm"}
_PAIRING.update({Enrol: "pair.enrol", Fail: "pair.fail"})
_NAMED: dict[type, str] = {**_PAIRING, **HANDOFF_NAMES}
_TYPES: dict[str, type[Any]] = {
    cls.TYPE: cls
    for cls in (
        Hello,
        Lists,
        Certs,
        Channel,
        PeerSay,
        PeerReply,
        PeerEnd,
        PeerOffer,
        OfferOutcome,
        FileChunk,
    )
}
_TYPES.update({name: cls for cls, name in _NAMED.items()})

Frame = (
    Hello
    | Lists
    | Certs
    | Channel
    | Start
    | Answer
    | Confirm
    | Enrol
    | Fail
    | PeerSay
    | PeerReply
    | PeerEnd
    | PeerOffer
    | OfferOutcome
    | FileChunk
    | HandoffFrame
)


def _type_name(frame: Frame) -> str:
    name = getattr(type(frame), "TYPE", None)
    return name if isinstance(name, str) else _NAMED[type(frame)]


def _out(value: object) -> object:
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii")
    if isinstance(value, tuple):
        return [_out(item) for item in value]
    return value


def encode(frame: Frame) -> str:
    body = {f.name: _out(getattr(frame, f.name)) for f in fields(frame)}
    text = json.dumps({"type": _type_name(frame), **body}, separators=(",", ":"))
    if len(text) > MAX_FRAME:
        raise BadFrame(f"a {_type_name(frame)} frame of {len(text)} bytes is over the bound")
    return text


def _in(name: str, hint: object, value: object) -> object:
    if hint is bytes:
        if not isinstance(value, str):
            raise BadFrame(f"{name}: expected base64 text")
        try:
            return base64.b64decode(value, validate=True)
        except (binascii.Error, ValueError):
            raise BadFrame(f"{name}: not base64") from None
    if hint in (tuple[str, ...], tuple[bytes, ...]):
        if not isinstance(value, list):
            raise BadFrame(f"{name}: expected a list")
        item = str if hint == tuple[str, ...] else bytes
        return tuple(_in(name, item, v) for v in value)
    if hint is int:
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise BadFrame(f"{name}: expected a whole number")
        return value
    if not isinstance(value, str):
        raise BadFrame(f"{name}: expected text")
    return value


def decode(text: str | bytes) -> Frame:
    """The frame in ``text``; ``BadFrame`` saying what is wrong."""
    if isinstance(text, bytes):
        raise BadFrame("a binary frame (the link speaks JSON text)")
    if len(text) > MAX_FRAME:
        raise BadFrame(f"a frame of {len(text)} characters is over the bound")
    try:
        raw = json.loads(text)
    except ValueError:
        raise BadFrame("not JSON") from None
    if not isinstance(raw, dict):
        raise BadFrame("not a JSON object")
    cls = _TYPES.get(raw.pop("type", None))
    if cls is None:
        raise BadFrame("no known type")
    hints = get_type_hints(cls)
    names = [f.name for f in fields(cls)]
    if sorted(raw) != sorted(names):
        raise BadFrame(f"{cls.__name__}: fields {sorted(raw)}, expected {sorted(names)}")
    values = {n: _in(n, hints[n], raw[n]) for n in names}
    try:
        frame: Frame = cls(**values)
    except (TypeError, ValueError) as error:
        raise BadFrame(f"{cls.__name__}: {error}") from None
    if isinstance(frame, Fail) and frame.reason not in FAILURES:
        raise BadFrame(f"pair.fail: no reason {frame.reason!r}")
    if isinstance(frame, Lists) and frame.kind not in ("roster", "revocations"):
        raise BadFrame(f"lists: no kind {frame.kind!r}")
    if isinstance(frame, Channel) and len(frame.nonce) != CHANNEL_NONCE:
        raise BadFrame(f"channel: a nonce of {CHANNEL_NONCE} bytes")
    return _talk_checked(frame)


def _talk_checked(frame: Frame) -> Frame:
    """A conversation's frame within its bounds (``_talk``)."""
    if isinstance(frame, PeerEnd) and frame.reason not in END_REASONS:
        raise BadFrame(f"peer.end: no reason {frame.reason!r}")
    if isinstance(frame, PeerSay | PeerReply) and len(frame.text) > MAX_TEXT:
        raise BadFrame(f"{frame.TYPE}: a text of {len(frame.text)} characters is over the bound")
    if isinstance(frame, PeerSay | PeerReply | PeerEnd) and not 0 < len(frame.conversation) <= 64:
        raise BadFrame(f"{frame.TYPE}: a conversation id of 1 to 64 characters")
    return _offer_checked(frame)


def _offer_checked(frame: Frame) -> Frame:
    """An offer's frame within its bounds (``_offers``)."""
    if isinstance(frame, PeerOffer | OfferOutcome | FileChunk) and not (
        8 <= len(frame.offer) <= 64 and all(c in "0123456789abcdef" for c in frame.offer)
    ):
        raise BadFrame(f"{frame.TYPE}: an offer id of 8 to 64 lowercase hex digits")
    if isinstance(frame, PeerOffer) and (
        len(frame.sha256) != 64 or any(c not in "0123456789abcdef" for c in frame.sha256)
    ):
        raise BadFrame("peer.offer: sha256 must be 64 lowercase hex digits")
    if isinstance(frame, PeerOffer) and len(frame.name.encode("utf-8")) > 1024:
        raise BadFrame("peer.offer: a name over 1024 bytes")
    if isinstance(frame, OfferOutcome) and frame.outcome not in OUTCOMES:
        raise BadFrame(f"peer.offer.outcome: no outcome {frame.outcome!r}")
    if isinstance(frame, FileChunk) and len(frame.data) > CHUNK:
        raise BadFrame(f"peer.chunk: {len(frame.data)} bytes, over {CHUNK}")
    if (wrong := handoff_checked(frame)) is not None:
        raise BadFrame(wrong)
    return frame
