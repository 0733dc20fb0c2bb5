"""Between a handoff's frames and its phase machines, sans-IO: what the host's shell does with
each frame that arrives, and makes for each message it sends.

A frame from the peer becomes one of the machines' events only once the signed parts hold:
``source_event`` verifies a ``handoff.saved`` acknowledgement (``_grant.verify_ack``: this
handoff, these two devices, this task, this manifest's digest) before it is an
``AckArrived``, the one event that lets a task go (``destination_event`` passes the source's
``released`` and ``abandoned`` on as they are); ``offer_event`` verifies an offer's grant
(``_grant.verify_grant``, in the spec's order, against the channel of the link it came on and
the nonces this device accepted) before it is an ``OfferArrived``. ``chunk_event`` feeds a
chunk to ``Staging`` and says ``PayloadChecked`` once the stated length arrived (length, then
digest; a gap, an overlap or an extra byte ends it at once). A frame with no place on a side
(a source's frame arriving at a source) is ``Unwired``, named, and changes nothing.

The other way, ``offer_frame`` issues a fresh grant each time the offer goes out, bound to the
link it goes on (a reconnect is a new channel, so the offer is re-granted, never re-sent as it
was), and ``payload_chunks`` cuts the sealed payload into ``handoff.chunk`` frames.
``manifest_document`` and ``manifest_of`` are the manifest as a store row keeps it.
"""

from __future__ import annotations

from collections.abc import Container, Iterator, Mapping
from dataclasses import dataclass

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from ._grant import Grant, GrantRefused, issue_grant, verify_ack, verify_grant
from ._handoff import (
    AckArrived,
    Chunked,
    Handoff,
    HandoffAbandoned,
    HandoffAccepted,
    HandoffClosed,
    HandoffDeclined,
    HandoffReleased,
    HandoffSaved,
    HandoffStaged,
    OfferArrived,
    PayloadChecked,
    SourceEvent,
)
from ._handoff_frames import HANDOFF_CHUNK, HandoffChunk, HandoffFrame, HandoffOffer
from ._manifest import INVENTORY_CATEGORIES, Manifest, PayloadMismatch, Staging

__all__ = [
    "OFFER_SECONDS",
    "Unwired",
    "chunk_event",
    "destination_event",
    "manifest_document",
    "manifest_of",
    "offer_event",
    "offer_frame",
    "payload_chunks",
    "source_event",
]

OFFER_SECONDS = 600
"""How long an offer waits for the destination's operator (its grant's window, at most)."""


@dataclass(frozen=True, slots=True)
class Unwired:
    """A frame that becomes no event: ``reason`` says why (logged; nothing changes)."""

    reason: str


def source_event(
    frame: HandoffFrame,
    *,
    handoff: Handoff,
    me: str,
    destination_key: bytes,
    manifest_sha256: bytes,
) -> SourceEvent | Unwired:
    """The source's event for a frame of ``handoff`` from its destination (``handoff.peer``,
    whose raw public key the roster gives as ``destination_key``)."""
    match frame:
        case (
            HandoffAccepted()
            | HandoffDeclined()
            | HandoffStaged()
            | HandoffClosed()
            | HandoffAbandoned()
        ):
            return frame
        case HandoffSaved():
            try:
                verify_ack(
                    frame.ack,
                    destination_key=destination_key,
                    handoff=handoff.id,
                    source=me,
                    destination=handoff.peer,
                    session=handoff.task,
                    manifest_sha256=manifest_sha256,
                )
            except GrantRefused as refused:
                return Unwired(f"an acknowledgement refused: {refused}")
            return AckArrived()
    return Unwired(f"a {type(frame).__name__} is no frame a source takes")


def destination_event(frame: HandoffFrame) -> HandoffReleased | HandoffAbandoned | Unwired:
    """The destination's event for a message from its source other than the offer
    (``offer_event``) and the chunks (``chunk_event``)."""
    if isinstance(frame, HandoffReleased | HandoffAbandoned):
        return frame
    return Unwired(f"a {type(frame).__name__} is no frame a destination takes here")


def offer_event(
    offer: HandoffOffer,
    *,
    source_key: bytes,
    user: str,
    me: str,
    channel: bytes,
    now: int,
    nonce_seen: Container[bytes],
) -> tuple[OfferArrived, Grant] | Unwired:
    """The destination's ``OfferArrived`` and the verified grant (its nonce is to be kept in
    the transaction that records the offer), or why the offer is refused."""
    try:
        grant = verify_grant(
            offer.grant,
            source_key=source_key,
            user=user,
            me=me,
            handoff=offer.handoff,
            session=offer.task,
            title=offer.title,
            channel=channel,
            now=now,
            nonce_seen=nonce_seen,
        )
    except GrantRefused as refused:
        return Unwired(f"an offer's grant refused: {refused}")
    return OfferArrived(), grant


def chunk_event(staging: Staging, chunk: HandoffChunk) -> Chunked | PayloadChecked:
    """Feed ``chunk`` to ``staging``: ``Chunked`` while bytes are still to come (the shell
    writes the chunk to its staging file), ``PayloadChecked`` once the stated length arrived
    or a chunk cannot be taken (its ``problem`` says why; empty when length and digest hold)."""
    try:
        staging.feed(chunk.offset, chunk.data)
        if not staging.complete:
            return Chunked()
        staging.finish()
    except PayloadMismatch as mismatch:
        return PayloadChecked(str(mismatch))
    return PayloadChecked()


def offer_frame(
    key: Ed25519PrivateKey,
    *,
    user: str,
    me: str,
    handoff: Handoff,
    manifest: Manifest,
    channel: bytes,
    nonce: bytes,
    now: int,
    expires_at: int,
) -> HandoffOffer:
    """The offer of ``handoff`` with a grant issued now by this device's ``key`` for the link
    whose fingerprint is ``channel``, valid until the offer's own expiry."""
    grant = issue_grant(
        key,
        user=user,
        source=me,
        destination=handoff.peer,
        handoff=handoff.id,
        session=handoff.task,
        title=manifest.title,
        nonce=nonce,
        channel=channel,
        issued_at=now,
        expires_at=max(expires_at, now + 1),
    )
    return HandoffOffer.of(handoff.id, handoff.task, grant.blob, manifest)


def manifest_document(manifest: Manifest) -> dict[str, object]:
    """What the store keeps of a manifest beside its length and digest (``manifest_json``):
    the inventory by category, the source's git origin and head, and the task's title."""
    inventory = {c: list(manifest.inventory.get(c, ())) for c in INVENTORY_CATEGORIES}
    return {
        "inventory": inventory,
        "origin": manifest.origin,
        "head": manifest.head,
        "title": manifest.title,
    }


def manifest_of(length: int, sha256: bytes, document: Mapping[str, object]) -> Manifest:
    """The manifest a store row keeps (``manifest_document``), field-checked: a category that
    is not a list of texts reads as empty, an origin, head or title that is not text as absent."""
    raw = document.get("inventory")
    inventory = raw if isinstance(raw, Mapping) else {}

    def listed(category: str) -> tuple[str, ...]:
        items = inventory.get(category)
        if not isinstance(items, list) or not all(isinstance(i, str) for i in items):
            return ()
        return tuple(items)

    def text(key: str) -> str | None:
        value = document.get(key)
        return value if isinstance(value, str) else None

    return Manifest(
        length,
        sha256,
        {c: listed(c) for c in INVENTORY_CATEGORIES},
        text("origin"),
        text("head"),
        text("title") or "",
    )


def payload_chunks(handoff: str, payload: bytes) -> Iterator[HandoffChunk]:
    """The sealed payload as ``handoff.chunk`` frames, in order from its first byte."""
    for offset in range(0, len(payload), HANDOFF_CHUNK):
        yield HandoffChunk(handoff, offset, payload[offset : offset + HANDOFF_CHUNK])
