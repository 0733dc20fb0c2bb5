"""Handoff grants and acknowledgements: the signed statements a session handoff rests on, sans-IO.

A **grant** is the source device's permission for exactly one transfer: the claims, in this
order, ``user`` (the id of the user's root key), ``source`` and ``destination`` (device ids),
``handoff`` (the transfer's id), ``session`` (the task that moves), ``title`` (the task's title
as the destination's operator is shown it, ``""`` when it has none), ``nonce`` (16 random bytes),
``channel`` (the fingerprint of the link it travels on), ``issued_at`` and ``expires_at``
(seconds since the epoch), packed by ``_codec`` under their own context and signed by the
source's device key. A grant read as another kind of signed object, or another kind read as a
grant, fails on the context before any claim is looked at.

``verify_grant`` checks in one fixed order and stops at the first failure, so the refusal a
log and ``--json`` name is the same whatever else is wrong: the signature (with the source's
key as the roster certifies it, before any claim is read), then the user, the destination
(this device), the handoff, session and title (the offer's), the channel (the link it arrived on),
the validity window (at most ``MAX_GRANT_SECONDS`` long, a little clock skew allowed), and
last the nonce (never seen before: the caller's store keeps the nonces it accepted, written
in the same transaction as the phase the grant moves). Each refusal is a ``GrantRefused``
with a reason of the closed ``GRANT_REASONS``.

An **acknowledgement** is the destination's signed statement that it saved the task (the
handoff, both devices, the task and the manifest's digest): the one message that moves a
task's authority from the source (``_handoff``). Pure apart from Ed25519.
"""

from __future__ import annotations

import hashlib
from collections.abc import Container
from dataclasses import dataclass
from typing import Literal, get_args

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from ._certs import sign, verify_signed
from ._codec import as_int, as_text, pack, unpack
from ._errors import MeshError, Refused
from ._manifest import MAX_TITLE

__all__ = [
    "CLOCK_SKEW",
    "GRANT_REASONS",
    "MAX_GRANT_SECONDS",
    "NONCE_BYTES",
    "Grant",
    "GrantReason",
    "GrantRefused",
    "SavedAck",
    "channel_fingerprint",
    "issue_grant",
    "sign_ack",
    "verify_ack",
    "verify_grant",
]

GRANT = b"robota.handoff-grant.v2"
"""v2: the task's title is a claim (v1 grants, without it, read as malformed)."""
ACK = b"robota.handoff-ack.v1"
CHANNEL = b"robota.handoff-channel.v1"

NONCE_BYTES = 16
MAX_GRANT_SECONDS = 15 * 60
"""The longest window a grant may state: an offer waits 10 minutes for its operator."""
CLOCK_SKEW = 30
"""Seconds a grant's ``issued_at`` may lie in this device's future (clocks differ a little)."""

GrantReason = Literal[
    "malformed",
    "signature-invalid",
    "wrong-user",
    "wrong-destination",
    "wrong-handoff",
    "wrong-channel",
    "not-yet-valid",
    "expired",
    "replayed",
]
"""Why a grant (or an acknowledgement) is refused: a closed set, named in logs and ``--json``."""

GRANT_REASONS: tuple[GrantReason, ...] = get_args(GrantReason)

_ID_LIMIT = 128


class GrantRefused(MeshError):
    """A grant or acknowledgement refused for ``reason`` (``detail`` says more, no secret)."""

    def __init__(self, reason: GrantReason, detail: str = "") -> None:
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason: GrantReason = reason
        self.detail = detail


@dataclass(frozen=True, slots=True)
class Grant:
    """A grant's claims (only ``issue_grant`` and ``verify_grant`` make one with its ``blob``)."""

    user: str
    source: str
    destination: str
    handoff: str
    session: str
    title: str
    nonce: bytes
    channel: bytes
    issued_at: int
    expires_at: int
    blob: bytes


def channel_fingerprint(dialler_cert: bytes, answerer_cert: bytes, link_nonce: bytes) -> bytes:
    """The fingerprint of one link: both link certificates (DER, the dialler's first) and the
    link's own nonce, so a grant made for one connection is refused on any other, even
    between the same two devices."""
    return hashlib.sha256(pack(CHANNEL, dialler_cert, answerer_cert, link_nonce)).digest()


def issue_grant(
    key: Ed25519PrivateKey,
    *,
    user: str,
    source: str,
    destination: str,
    handoff: str,
    session: str,
    nonce: bytes,
    channel: bytes,
    issued_at: int,
    expires_at: int,
    title: str = "",
) -> Grant:
    """The source's signed grant (``key``: the source's device key)."""
    if len(nonce) != NONCE_BYTES:
        raise ValueError(f"a grant's nonce is {NONCE_BYTES} bytes")
    if not 0 < expires_at - issued_at <= MAX_GRANT_SECONDS:
        raise ValueError(f"a grant is valid for 1 to {MAX_GRANT_SECONDS} seconds")
    if len(title) > MAX_TITLE or not title.isprintable():
        raise ValueError(f"a grant's title is at most {MAX_TITLE} printable characters")
    claims = (user, source, destination, handoff, session, title)
    bound = (nonce, channel, issued_at, expires_at)
    return Grant(*claims, *bound, sign(key, pack(GRANT, *claims, *bound)))


def verify_grant(
    blob: bytes,
    *,
    source_key: bytes,
    user: str,
    me: str,
    handoff: str,
    session: str,
    channel: bytes,
    now: int,
    nonce_seen: Container[bytes],
    title: str = "",
) -> Grant:
    """The grant in ``blob`` once every check holds, in the module docstring's order;
    ``GrantRefused`` naming the first that fails. ``source_key``: the source device's raw
    public key from the roster; ``me``: this device's id; ``handoff``/``session``/``title``:
    what the offer carrying the grant names; ``channel``: the fingerprint of the link it came on;
    ``nonce_seen``: the nonces this device already accepted."""
    try:
        body = verify_signed(blob, source_key)
    except Refused as refused:
        raise _refused(refused) from None
    grant = _read_grant(body, blob)
    checks: tuple[tuple[bool, GrantReason, str], ...] = (
        (grant.user == user, "wrong-user", "a grant of another user"),
        (grant.destination == me, "wrong-destination", "a grant for another device"),
        (
            grant.handoff == handoff and grant.session == session and grant.title == title,
            "wrong-handoff",
            "a grant for another handoff, task or title",
        ),
        (grant.channel == channel, "wrong-channel", "a grant made for another link"),
        (grant.issued_at <= now + CLOCK_SKEW, "not-yet-valid", "issued in the future"),
        (now < grant.expires_at, "expired", "its time window has passed"),
        (grant.nonce not in nonce_seen, "replayed", "its nonce was used before"),
    )
    for holds, reason, detail in checks:
        if not holds:
            raise GrantRefused(reason, detail)
    return grant


def _refused(refused: Refused) -> GrantRefused:
    """A signed object's refusal as a grant's: malformed stays so, anything else is a bad
    signature (the only other check before a claim is read)."""
    reason: GrantReason = "malformed" if refused.reason == "malformed" else "signature-invalid"
    return GrantRefused(reason, refused.detail)


def _read_grant(body: bytes, blob: bytes) -> Grant:
    try:
        fields = unpack(GRANT, body, 10)
        user, source, destination, handoff, session = (
            as_text(field, limit=_ID_LIMIT) for field in fields[:5]
        )
        title = as_text(fields[5], limit=4 * MAX_TITLE)  # UTF-8: 4 bytes a character at most
        nonce, channel = fields[6], fields[7]
        issued_at, expires_at = as_int(fields[8]), as_int(fields[9])
    except Refused as refused:
        raise GrantRefused("malformed", refused.detail) from None
    if len(nonce) != NONCE_BYTES or len(channel) != hashlib.sha256().digest_size:
        raise GrantRefused("malformed", "a nonce or channel of the wrong length")
    if not 0 < expires_at - issued_at <= MAX_GRANT_SECONDS:
        raise GrantRefused("malformed", "a time window longer than a grant may state")
    if len(title) > MAX_TITLE:
        raise GrantRefused("malformed", f"a title over {MAX_TITLE} characters")
    claims = (user, source, destination, handoff, session, title)
    return Grant(*claims, nonce, channel, issued_at, expires_at, blob)


@dataclass(frozen=True, slots=True)
class SavedAck:
    """The destination's statement that it saved the task (``verify_ack`` makes one)."""

    handoff: str
    source: str
    destination: str
    session: str
    manifest_sha256: bytes
    blob: bytes


def sign_ack(
    key: Ed25519PrivateKey,
    *,
    handoff: str,
    source: str,
    destination: str,
    session: str,
    manifest_sha256: bytes,
) -> SavedAck:
    """The destination's signed acknowledgement (``key``: its device key)."""
    body = pack(ACK, handoff, source, destination, session, manifest_sha256, "persisted")
    return SavedAck(handoff, source, destination, session, manifest_sha256, sign(key, body))


def verify_ack(
    blob: bytes,
    *,
    destination_key: bytes,
    handoff: str,
    source: str,
    destination: str,
    session: str,
    manifest_sha256: bytes,
) -> SavedAck:
    """The acknowledgement in ``blob`` when the destination signed it for exactly this
    handoff, these devices, this task and this manifest; ``GrantRefused`` otherwise."""
    try:
        body = verify_signed(blob, destination_key)
        fields = unpack(ACK, body, 6)
        claimed = tuple(as_text(field, limit=_ID_LIMIT) for field in fields[:4])
        digest, state = fields[4], as_text(fields[5])
    except Refused as refused:
        raise _refused(refused) from None
    if state != "persisted":
        raise GrantRefused("malformed", "an acknowledgement that is not of a saved task")
    if claimed != (handoff, source, destination, session) or digest != manifest_sha256:
        raise GrantRefused("wrong-handoff", "an acknowledgement of another handoff")
    return SavedAck(handoff, source, destination, session, manifest_sha256, blob)
