"""The roster and revocation list: every refusal reason, rollback, expiry, admission, reissue."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from robota.mesh import (
    MAX_DEVICES,
    REASONS,
    Marks,
    Refused,
    admit,
    device_id,
    issue_certificate,
    issue_roster,
    lapsed,
    new_key,
    pack,
    public_bytes,
    reissue_due,
    revoke_signing_key,
    sign,
    unpack,
    verify_revocations,
    verify_roster,
)
from robota.mesh._lists import _BODY, LIST

from ._chain import LIFETIME, NOW, Chain


def test_an_issued_roster_verifies_and_lists_its_devices() -> None:
    chain = Chain()
    roster = verify_roster(chain.roster(3).blob, root=chain.root_public, now=NOW, high_water=3)
    assert roster.seq == 3
    assert roster.expires_at == NOW + LIFETIME
    assert [cert.device for cert in roster.devices] == [device_id(k) for k in chain.devices]
    assert roster.signer == public_bytes(chain.signing)


def test_an_issued_revocation_list_verifies() -> None:
    chain = Chain()
    gone = device_id(chain.devices[2])
    statement = revoke_signing_key(chain.root, public_bytes(new_key()), issued_at=NOW)
    lst = verify_revocations(
        chain.revocations((gone,), (statement,), seq=4).blob, root=chain.root_public, now=NOW
    )
    assert lst.devices == {gone}
    assert lst.revoked_signing_keys == {statement.key}


def _resign_roster(chain: Chain, edit: Callable[[list[bytes]], list[bytes]]) -> bytes:
    """The roster with its body's fields edited and signed again by the real signing key."""
    cert_blob, signed = unpack(LIST, chain.roster().blob, 2)
    body, _sig = unpack(b"robota-mesh/1 signed", signed, 2)
    fields = edit(unpack(_BODY["roster"], body))
    return pack(LIST, cert_blob, sign(chain.signing, pack(_BODY["roster"], *fields)))


def _stranger_device(chain: Chain) -> list[bytes]:
    other = new_key()
    cert = issue_certificate(other, "device", public_bytes(new_key()), name="x", issued_at=NOW)
    return [cert.blob]


# Each row: how the roster is made or tampered with, and the reason it must be refused for.
ROSTER_CASES: list[tuple[str, str]] = [
    ("garbage", "malformed"),
    ("truncated", "malformed"),
    ("a revocation list where a roster is expected", "malformed"),
    ("a body with no times", "malformed"),
    ("a device listed twice", "malformed"),
    ("more than 64 devices", "malformed"),
    ("another user's root", "signature-invalid"),
    ("signing cert signed by a stranger", "signature-invalid"),
    ("body signed by another key than the certified one", "signature-invalid"),
    ("a flipped byte in the body", "signature-invalid"),
    ("a device cert signed by a stranger", "signature-invalid"),
    ("expired", "expired"),
    ("expired exactly now", "expired"),
    ("older than the high-water mark", "rolled-back"),
    ("signed by a revoked signing key", "signing-key-revoked"),
]


@pytest.mark.parametrize(("case", "reason"), ROSTER_CASES)
def test_a_bad_roster_is_refused_with_its_reason(case: str, reason: str) -> None:
    chain = Chain()
    root = chain.root_public
    now, high_water, revoked_signing = NOW, 0, frozenset[bytes]()
    blob = chain.roster(5).blob
    if case == "garbage":
        blob = b"\x00\x01garbage"
    elif case == "truncated":
        blob = blob[:-3]
    elif case == "a revocation list where a roster is expected":
        blob = chain.revocations().blob
    elif case == "a body with no times":
        blob = _resign_roster(chain, lambda fields: fields[:2])
    elif case == "a device listed twice":
        blob = _resign_roster(chain, lambda fields: [*fields, fields[3]])
    elif case == "more than 64 devices":
        certs = [chain.device_cert(0).blob]
        extra = [
            issue_certificate(chain.signing, "device", public_bytes(new_key()), issued_at=NOW).blob
            for _ in range(MAX_DEVICES)
        ]
        blob = _resign_roster(chain, lambda fields: fields[:3] + certs + extra)
    elif case == "another user's root":
        root = public_bytes(new_key())
    elif case == "signing cert signed by a stranger":
        chain.root = new_key()  # an impostor root certifies the signing key; `root` is the real one
        blob = chain.roster().blob
    elif case == "body signed by another key than the certified one":
        cert_blob, signed = unpack(LIST, blob, 2)
        body, _sig = unpack(b"robota-mesh/1 signed", signed, 2)
        blob = pack(LIST, cert_blob, sign(new_key(), body))
    elif case == "a flipped byte in the body":
        index = len(blob) - 100
        blob = blob[:index] + bytes([blob[index] ^ 0x40]) + blob[index + 1 :]
    elif case == "a device cert signed by a stranger":
        blob = _resign_roster(chain, lambda fields: fields + _stranger_device(chain))
    elif case == "expired":
        now = NOW + LIFETIME + 1
    elif case == "expired exactly now":
        now = NOW + LIFETIME
    elif case == "older than the high-water mark":
        high_water = 6
    elif case == "signed by a revoked signing key":
        revoked_signing = frozenset({public_bytes(chain.signing)})
    with pytest.raises(Refused) as caught:
        verify_roster(
            blob, root=root, now=now, high_water=high_water, revoked_signing=revoked_signing
        )
    assert caught.value.reason == reason


def test_the_cases_cover_every_list_reason() -> None:
    reasons = {reason for _case, reason in ROSTER_CASES} | {"revoked", "not-in-roster"}
    assert reasons == set(REASONS)


@pytest.mark.parametrize(
    ("seq", "high_water", "accepted"),
    [(5, 0, True), (5, 4, True), (5, 5, True), (5, 6, False), (0, 1, False)],
)
def test_rollback_is_a_sequence_below_the_high_water_mark(
    seq: int, high_water: int, accepted: bool
) -> None:
    chain = Chain()
    blob = chain.roster(seq).blob
    if accepted:
        assert (
            verify_roster(blob, root=chain.root_public, now=NOW, high_water=high_water).seq == seq
        )
    else:
        with pytest.raises(Refused) as caught:
            verify_roster(blob, root=chain.root_public, now=NOW, high_water=high_water)
        assert caught.value.reason == "rolled-back"


@pytest.mark.parametrize(
    ("case", "reason"),
    [
        ("expired", "expired"),
        ("rolled back", "rolled-back"),
        ("revokes its own signing key", "signing-key-revoked"),
        ("a root statement signed by another key", "signature-invalid"),
        ("a revoked entry that is no device id", "malformed"),
    ],
)
def test_a_bad_revocation_list_is_refused_with_its_reason(case: str, reason: str) -> None:
    chain = Chain()
    now, high_water = NOW, 0
    blob = chain.revocations(seq=3).blob
    if case == "expired":
        now = NOW + LIFETIME
    elif case == "rolled back":
        high_water = 4
    elif case == "revokes its own signing key":
        own = revoke_signing_key(chain.root, public_bytes(chain.signing), issued_at=NOW)
        blob = chain.revocations((), (own,)).blob
    elif case == "a root statement signed by another key":
        fake = revoke_signing_key(new_key(), public_bytes(new_key()), issued_at=NOW)
        blob = chain.revocations((), (fake,)).blob
    elif case == "a revoked entry that is no device id":
        blob = chain.revocations(("not-an-id",)).blob  # type: ignore[arg-type]
    with pytest.raises(Refused) as caught:
        verify_revocations(blob, root=chain.root_public, now=now, high_water=high_water)
    assert caught.value.reason == reason


@pytest.mark.parametrize(
    ("device", "reason"),
    [(0, None), (1, "revoked"), ("stranger", "not-in-roster")],
)
def test_admission_by_the_current_lists(device: int | str, reason: str | None) -> None:
    chain = Chain()
    roster = chain.roster()
    revocations = chain.revocations((device_id(chain.devices[1]),))
    who = device_id(new_key()) if device == "stranger" else device_id(chain.devices[int(device)])
    if reason is None:
        assert admit(who, roster, revocations).device == who
        return
    with pytest.raises(Refused) as caught:
        admit(who, roster, revocations)
    assert caught.value.reason == reason


@pytest.mark.parametrize(
    ("elapsed", "due", "is_lapsed"),
    [
        (0, False, False),
        (LIFETIME // 2 - 1, False, False),
        (LIFETIME // 2, True, False),
        (LIFETIME - 1, True, False),
        (LIFETIME, True, True),
    ],
)
def test_reissue_at_half_life_and_lapse_at_expiry(elapsed: int, due: bool, is_lapsed: bool) -> None:
    assert reissue_due(NOW, NOW + LIFETIME, NOW + elapsed) is due
    assert lapsed(NOW + LIFETIME, NOW + elapsed) is is_lapsed


def test_issuing_refuses_what_no_device_would_accept() -> None:
    chain = Chain()
    with pytest.raises(ValueError):
        chain.roster(lifetime=59)
    with pytest.raises(ValueError):  # a certificate of another signing key
        issue_roster(
            chain.signing,
            chain.signing_cert,
            [issue_certificate(new_key(), "device", public_bytes(new_key()), issued_at=NOW)],
            seq=1,
            issued_at=NOW,
            lifetime=LIFETIME,
        )


def test_marks_read_by_kind() -> None:
    assert Marks(roster=3, revocations=7).of("roster") == 3
    assert Marks(roster=3, revocations=7).of("revocations") == 7


def test_a_list_read_back_without_a_clock_is_not_refused_for_its_age() -> None:
    # This device's own accepted lists are read back with now=None: status reports them
    # lapsed instead of refusing them, and rollback still counts.
    chain = Chain()
    blob = chain.roster(2, issued_at=0).blob
    assert verify_roster(blob, root=chain.root_public, now=None).seq == 2
    with pytest.raises(Refused) as caught:
        verify_roster(blob, root=chain.root_public, now=None, high_water=3)
    assert caught.value.reason == "rolled-back"
