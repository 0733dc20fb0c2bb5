"""A handoff's rows as tests write them straight into a store: an offer recorded on the source
(the task is then moving) and one received on the destination, their signed parts dummies."""

from __future__ import annotations

from robota.core.store import OfferHandoff, ReceiveHandoff

_SIGNED: dict[str, object] = {
    "manifest_length": 2,
    "manifest_sha256": b"\x07" * 32,
    "manifest": {},
    "grant": b"grant",
    "expires_at": 4_000_000_000.0,
}


def offered(task: str, handoff: str = "h1", peer: str = "DEST") -> OfferHandoff:
    """The source's offer of ``task`` to ``peer``."""
    return OfferHandoff(handoff=handoff, task=task, peer=peer, payload=b"{}", **_SIGNED)  # type: ignore[arg-type]


def received(task: str, handoff: str = "h1", peer: str = "SRC") -> ReceiveHandoff:
    """The destination's record of ``peer``'s offer of ``task``."""
    return ReceiveHandoff(handoff=handoff, task=task, peer=peer, nonce=b"\x01" * 16, **_SIGNED)  # type: ignore[arg-type]
