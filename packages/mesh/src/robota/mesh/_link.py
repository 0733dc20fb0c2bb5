"""A link between two devices, sans-IO: its hello and gossip, which of two links stays, the
redial delay and the keepalive.

A link starts once TLS proved the peer (``_linkcert``). Each side sends ``Hello`` (its id and
name, its lists' sequences, the link certificates it knows); the hello's id must be the one the
handshake proved, else the link closes: a request on a link is attributed only to that device.
Then gossip: the side whose roster or revocation list is newer sends it (``Lists``), and each
sends the link certificates the other did not list (``Certs``), so two devices that paired
with the same third one can link to each other. What arrives is handed to the shell to verify
and adopt (``Adopt``, ``Learn``); a list the shell adopted later (from another link) goes out
with ``LinkGossip.changed``. A revocation that names the peer closes the link (the shell says
so with ``revoked``). A conversation's frames (``_talk``) on an open link are handed to the
shell as they are (``Deliver``), attributed to the peer the handshake proved; so are a
session handoff's (``_handoff_frames``: ``DeliverHandoff``), but only once the peer's
``Channel`` nonce arrived (``Bind``: the shell then knows the link's channel fingerprint, to
which grants are bound).

One link per pair of devices (``settle``): of two connections in opposite directions (both
dialled at once) the one dialled by the lower device id stays, which both sides compute alike
whatever order they saw them in; a new one in the same direction replaces the old (its dialler
gave the old up). A peer that lost its end of a link the other side still holds is refused until
that side's keepalive finds the old link silent and drops it. Redials wait ``redial_delay`` (1 s
doubling to 60 s, with jitter); a link that hears nothing for ``SILENT_AFTER`` seconds (pings
every ``PING_EVERY``) is dead (``Keepalive``) and is replaced by a redial.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from ._frames import BadFrame, Certs, Channel, Frame, Hello, Lists
from ._handoff_frames import HandoffFrame, is_handoff_frame
from ._offers import FileChunk, OfferOutcome, PeerOffer
from ._talk import PeerEnd, PeerReply, PeerSay

__all__ = [
    "PING_EVERY",
    "REDIAL_MAX",
    "REDIAL_MIN",
    "SILENT_AFTER",
    "Adopt",
    "Bind",
    "Close",
    "Deliver",
    "DeliverHandoff",
    "Effect",
    "Keepalive",
    "Learn",
    "LinkGossip",
    "Send",
    "Seqs",
    "Settle",
    "redial_delay",
    "settle",
]

PING_EVERY = 15.0
SILENT_AFTER = 3 * PING_EVERY
REDIAL_MIN = 1.0
REDIAL_MAX = 60.0


@dataclass(frozen=True, slots=True)
class Seqs:
    """The sequences of this device's current lists."""

    roster: int
    revocations: int


@dataclass(frozen=True, slots=True)
class Send:
    frame: Frame


@dataclass(frozen=True, slots=True)
class Adopt:
    """Verify this list and, when it is newer, adopt it (the shell's lists and store)."""

    kind: Literal["roster", "revocations"]
    blob: bytes


@dataclass(frozen=True, slots=True)
class Learn:
    """Verify and keep these link certificates."""

    certs: tuple[bytes, ...]


@dataclass(frozen=True, slots=True)
class Close:
    reason: str


@dataclass(frozen=True, slots=True)
class Deliver:
    """A conversation's or an offer's frame (``_talk``, ``_offers``) for the shell, from the
    proven peer."""

    frame: PeerSay | PeerReply | PeerEnd | PeerOffer | OfferOutcome | FileChunk


@dataclass(frozen=True, slots=True)
class DeliverHandoff:
    """A session handoff's frame (``_handoff_frames``) for the shell, from the proven peer, on
    a link whose channel is bound."""

    frame: HandoffFrame


@dataclass(frozen=True, slots=True)
class Bind:
    """The peer's channel nonce arrived: the shell computes the link's channel fingerprint."""

    peer_nonce: bytes


Effect = Send | Adopt | Learn | Close | Deliver | DeliverHandoff | Bind


@dataclass
class LinkGossip:
    """One link's conversation after the handshake. ``peer`` is the device the handshake
    proved; ``blobs`` give this device's current signed lists, ``certs`` its known link
    certificates by device."""

    me: str
    name: str
    peer: str
    seqs: Seqs
    blobs: dict[str, bytes]
    certs: dict[str, bytes]
    state: Literal["new", "open", "closed"] = "new"
    peer_name: str = ""
    _peer_seqs: Seqs = field(default_factory=lambda: Seqs(0, 0))
    _peer_known: set[str] = field(default_factory=set)
    bound: bool = False
    """The peer's ``Channel`` nonce arrived (once per link; a handoff's frame waits for it)."""

    def hello(self) -> Hello:
        return Hello(self.me, self.name, self.seqs.roster, self.seqs.revocations, tuple(self.certs))

    def receive(self, frame: Frame | BadFrame) -> list[Effect]:
        """A frame from the peer (or why its bytes were none): what to do."""
        if self.state == "closed":
            return []
        if isinstance(frame, BadFrame):
            return self._close(f"malformed frame: {frame}")
        if self.state == "new":
            if not isinstance(frame, Hello):
                return self._close(f"expected hello, got {type(frame).__name__}")
            if frame.device != self.peer:
                return self._close(
                    f"the hello claims {frame.device}, the handshake proved {self.peer}"
                )
            self.state, self.peer_name = "open", frame.name
            self._peer_seqs = Seqs(frame.roster, frame.revocations)
            self._peer_known = set(frame.known)
            return self._gossip()
        if isinstance(frame, Lists):
            kind: Literal["roster", "revocations"] = (
                "roster" if frame.kind == "roster" else "revocations"
            )
            return [Adopt(kind, frame.blob)]
        if isinstance(frame, Certs):
            return [Learn(frame.certs)]
        if isinstance(frame, Channel):
            if self.bound:
                return self._close("a second channel nonce on one link")
            self.bound = True
            return [Bind(frame.nonce)]
        if isinstance(frame, PeerSay | PeerReply | PeerEnd | PeerOffer | OfferOutcome | FileChunk):
            return [Deliver(frame)]
        if is_handoff_frame(frame):
            if not self.bound:
                return self._close("a handoff frame before the link's channel nonce")
            return [DeliverHandoff(frame)]
        return self._close(f"unexpected {type(frame).__name__} on an open link")

    def changed(self, seqs: Seqs, blobs: dict[str, bytes], certs: dict[str, bytes]) -> list[Effect]:
        """This device adopted newer lists or learned certificates: pass on what the peer
        lacks."""
        self.seqs, self.blobs, self.certs = seqs, blobs, certs
        return self._gossip() if self.state == "open" else []

    def peer_adopted(self, kind: Literal["roster", "revocations"], seq: int) -> None:
        """The peer sent a list this device now holds (no need to send it back)."""
        if kind == "roster":
            self._peer_seqs = Seqs(max(seq, self._peer_seqs.roster), self._peer_seqs.revocations)
        else:
            self._peer_seqs = Seqs(self._peer_seqs.roster, max(seq, self._peer_seqs.revocations))

    def revoked(self) -> list[Effect]:
        """A revocation list this device adopted names the peer."""
        return self._close(f"device {self.peer} is revoked")

    def _gossip(self) -> list[Effect]:
        effects: list[Effect] = []
        if self.seqs.roster > self._peer_seqs.roster and "roster" in self.blobs:
            effects.append(Send(Lists("roster", self.blobs["roster"])))
            self._peer_seqs = Seqs(self.seqs.roster, self._peer_seqs.revocations)
        if self.seqs.revocations > self._peer_seqs.revocations and "revocations" in self.blobs:
            effects.append(Send(Lists("revocations", self.blobs["revocations"])))
            self._peer_seqs = Seqs(self._peer_seqs.roster, self.seqs.revocations)
        missing = sorted(set(self.certs) - self._peer_known - {self.peer})
        if missing:
            effects.append(Send(Certs(tuple(self.certs[d] for d in missing))))
            self._peer_known |= set(missing)
        return effects

    def _close(self, reason: str) -> list[Effect]:
        self.state = "closed"
        return [Close(reason)]


Settle = Literal["keep-new", "keep-existing"]


def settle(
    me: str, peer: str, *, existing_dialled_by_me: bool | None, new_dialled_by_me: bool
) -> Settle:
    """Which of two connections to the same peer stays (one link per pair);
    ``existing_dialled_by_me`` is ``None`` when there is no other."""
    if existing_dialled_by_me is None or existing_dialled_by_me == new_dialled_by_me:
        return "keep-new"  # the only one, or a redial in the same direction (the old is stale)
    lower_dials = me < peer
    return "keep-new" if new_dialled_by_me == lower_dials else "keep-existing"


def redial_delay(attempt: int, jitter: float) -> float:
    """Seconds before redial number ``attempt`` (0 for the first after a loss): 1 s doubling to
    60 s, then a random point in its upper half (``jitter`` in [0, 1)), never below 1 s."""
    ceiling = min(REDIAL_MAX, REDIAL_MIN * float(2 ** min(attempt, 16)))
    return max(REDIAL_MIN, ceiling * (0.5 + jitter / 2))


@dataclass
class Keepalive:
    """When to ping and when a link is dead, from when it last heard anything."""

    heard: float
    pinged: float = 0.0

    def on_receive(self, now: float) -> None:
        self.heard = now

    def due(self, now: float) -> Literal["ping", "dead"] | None:
        if now - self.heard >= SILENT_AFTER:
            return "dead"
        if now - max(self.heard, self.pinged) >= PING_EVERY:
            self.pinged = now
            return "ping"
        return None
