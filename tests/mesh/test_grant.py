"""Handoff grants and acknowledgements: signed, bound to one transfer, checked in one order."""

from __future__ import annotations

import hashlib

import pytest

from robota.mesh import (
    GRANT_REASONS,
    MAX_GRANT_SECONDS,
    Grant,
    GrantRefused,
    channel_fingerprint,
    issue_grant,
    new_key,
    public_bytes,
    sign_ack,
    verify_ack,
    verify_grant,
)

NOW = 1_800_000_000
SOURCE = new_key()
DESTINATION = new_key()
CHANNEL = channel_fingerprint(b"dialler-cert", b"answerer-cert", b"link-nonce-1")
NONCE = bytes(range(16))
CLAIMS = {
    "user": "USER",
    "source": "SRC",
    "destination": "DST",
    "handoff": "h1",
    "session": "t1",
    "nonce": NONCE,
    "channel": CHANNEL,
    "issued_at": NOW,
    "expires_at": NOW + 300,
}
CHECK = {
    "user": "USER",
    "me": "DST",
    "handoff": "h1",
    "session": "t1",
    "channel": CHANNEL,
    "now": NOW + 10,
    "nonce_seen": frozenset[bytes](),
}


def _grant(**changes: object) -> Grant:
    return issue_grant(SOURCE, **{**CLAIMS, **changes})  # type: ignore[arg-type]


def _verify(blob: bytes, **changes: object) -> Grant:
    return verify_grant(blob, source_key=public_bytes(SOURCE), **{**CHECK, **changes})  # type: ignore[arg-type]


def test_a_grant_verifies_and_gives_back_its_claims() -> None:
    grant = _verify(_grant().blob)
    assert (grant.user, grant.source, grant.destination) == ("USER", "SRC", "DST")
    assert (grant.handoff, grant.session, grant.nonce) == ("h1", "t1", NONCE)
    assert (grant.channel, grant.issued_at, grant.expires_at) == (CHANNEL, NOW, NOW + 300)


def _flip(blob: bytes, index: int) -> bytes:
    return blob[:index] + bytes([blob[index] ^ 1]) + blob[index + 1 :]


@pytest.mark.parametrize(
    ("case", "reason"),
    [
        ("signed by another key", "signature-invalid"),
        ("a flipped byte in the claims", "signature-invalid"),
        ("a flipped byte in the signature", "signature-invalid"),
        ("truncated", "malformed"),
        ("another user", "wrong-user"),
        ("for another device", "wrong-destination"),
        ("for another handoff", "wrong-handoff"),
        ("for another task", "wrong-handoff"),
        ("made on another link", "wrong-channel"),
        ("made on another connection of the same two devices", "wrong-channel"),
        ("issued in the future", "not-yet-valid"),
        ("expired", "expired"),
        ("at the very end of its window", "expired"),
        ("replayed", "replayed"),
    ],
)
def test_a_bad_grant_is_refused_with_its_reason(case: str, reason: str) -> None:
    blob = _grant().blob
    check: dict[str, object] = {}
    if case == "signed by another key":
        blob = issue_grant(new_key(), **CLAIMS).blob  # type: ignore[arg-type]
    elif case == "a flipped byte in the claims":
        blob = _flip(blob, 40)
    elif case == "a flipped byte in the signature":
        blob = _flip(blob, len(blob) - 3)
    elif case == "truncated":
        blob = blob[:-1]
    elif case == "another user":
        check["user"] = "SOMEONE-ELSE"
    elif case == "for another device":
        check["me"] = "THIRD"
    elif case == "for another handoff":
        check["handoff"] = "h2"
    elif case == "for another task":
        check["session"] = "t2"
    elif case == "made on another link":
        check["channel"] = channel_fingerprint(b"other", b"answerer-cert", b"link-nonce-1")
    elif case == "made on another connection of the same two devices":
        check["channel"] = channel_fingerprint(b"dialler-cert", b"answerer-cert", b"link-nonce-2")
    elif case == "issued in the future":
        check["now"] = NOW - 31
    elif case == "expired":
        check["now"] = NOW + 301
    elif case == "at the very end of its window":
        check["now"] = NOW + 300
    elif case == "replayed":
        check["nonce_seen"] = frozenset({NONCE})
    with pytest.raises(GrantRefused) as refused:
        _verify(blob, **check)
    assert refused.value.reason == reason
    assert reason in GRANT_REASONS


def test_the_checks_run_in_order_and_the_first_failure_is_named() -> None:
    """Everything wrong at once: the reasons come out in the spec's order as each is fixed."""
    wrong: dict[str, object] = {
        "user": "X",
        "me": "X",
        "handoff": "X",
        "channel": b"\0" * 32,
        "now": NOW + 999,
        "nonce_seen": frozenset({NONCE}),
    }
    order = ["wrong-user", "wrong-destination", "wrong-handoff", "wrong-channel", "expired"]
    fixes = ["user", "me", "handoff", "channel", "now"]
    blob = _grant().blob
    for reason, fix in zip(order, fixes, strict=True):
        with pytest.raises(GrantRefused) as refused:
            _verify(blob, **wrong)
        assert refused.value.reason == reason
        del wrong[fix]
    with pytest.raises(GrantRefused) as refused:
        _verify(blob, **wrong)
    assert refused.value.reason == "replayed"
    # A forged signature is named first whatever else is wrong.
    with pytest.raises(GrantRefused) as refused:
        _verify(_flip(blob, 40), user="X", me="X", now=NOW + 999)
    assert refused.value.reason == "signature-invalid"


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"nonce": b"short"}, "nonce"),
        ({"expires_at": NOW}, "valid for"),
        ({"expires_at": NOW + MAX_GRANT_SECONDS + 1}, "valid for"),
    ],
)
def test_a_grant_outside_the_rules_is_not_issued(changes: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        _grant(**changes)


def test_the_refusal_names_no_secret() -> None:
    with pytest.raises(GrantRefused) as refused:
        _verify(_grant().blob, nonce_seen=frozenset({NONCE}))
    assert NONCE.hex() not in str(refused.value) and "USER" not in str(refused.value)


DIGEST = hashlib.sha256(b"payload").digest()
ACK_CLAIMS = {"handoff": "h1", "source": "SRC", "destination": "DST", "session": "t1"}


def test_an_acknowledgement_verifies_for_exactly_its_handoff() -> None:
    ack = sign_ack(DESTINATION, manifest_sha256=DIGEST, **ACK_CLAIMS)
    key = public_bytes(DESTINATION)
    assert verify_ack(ack.blob, destination_key=key, manifest_sha256=DIGEST, **ACK_CLAIMS).blob
    for field, value in [
        ("handoff", "h2"),
        ("source", "X"),
        ("destination", "X"),
        ("session", "t2"),
    ]:
        with pytest.raises(GrantRefused) as refused:
            verify_ack(
                ack.blob,
                destination_key=key,
                manifest_sha256=DIGEST,
                **{**ACK_CLAIMS, field: value},
            )
        assert refused.value.reason == "wrong-handoff", field
    with pytest.raises(GrantRefused) as refused:
        verify_ack(ack.blob, destination_key=key, manifest_sha256=b"\0" * 32, **ACK_CLAIMS)
    assert refused.value.reason == "wrong-handoff"
    with pytest.raises(GrantRefused) as refused:
        verify_ack(
            ack.blob, destination_key=public_bytes(SOURCE), manifest_sha256=DIGEST, **ACK_CLAIMS
        )
    assert refused.value.reason == "signature-invalid"
    # A grant is not an acknowledgement, whoever signed it.
    with pytest.raises(GrantRefused) as refused:
        verify_ack(
            issue_grant(DESTINATION, **CLAIMS).blob,  # type: ignore[arg-type]
            destination_key=key,
            manifest_sha256=DIGEST,
            **ACK_CLAIMS,
        )
    assert refused.value.reason == "malformed"
