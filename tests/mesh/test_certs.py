"""Certificates: root -> signing key -> device key; the signature is checked before any field."""

from __future__ import annotations

import pytest

from robota.mesh import (
    Malformed,
    Refused,
    device_id,
    issue_certificate,
    new_key,
    pack,
    public_bytes,
    revoke_signing_key,
    sign,
    unpack,
    verify_certificate,
    verify_signing_revocation,
)
from robota.mesh._certs import CERT, SIGNED

from ._chain import NOW, Chain


def test_the_chain_verifies_link_by_link() -> None:
    chain = Chain()
    signing = verify_certificate(chain.signing_cert.blob, chain.root_public, "signing")
    assert signing.subject == public_bytes(chain.signing)
    device = verify_certificate(chain.device_cert(0, "laptop").blob, signing.subject, "device")
    assert device.name == "laptop"
    assert device.device == device_id(chain.devices[0])
    assert device.issued_at == NOW - 5


def _flip(blob: bytes, index: int) -> bytes:
    return blob[:index] + bytes([blob[index] ^ 1]) + blob[index + 1 :]


@pytest.mark.parametrize(
    ("case", "reason"),
    [
        ("another issuer's key", "signature-invalid"),
        ("a flipped byte in the body", "signature-invalid"),
        ("a flipped byte in the signature", "signature-invalid"),
        ("the signing cert read as a device cert", "malformed"),
        ("truncated", "malformed"),
        ("a trailing byte", "malformed"),
        ("not a signed object", "malformed"),
        ("a body that names another issuer", "malformed"),
        ("a body with a field too few", "malformed"),
    ],
)
def test_a_bad_certificate_is_refused_with_its_reason(case: str, reason: str) -> None:
    chain = Chain()
    good = chain.device_cert(0).blob
    issuer = public_bytes(chain.signing)
    role = "device"
    body, signature = unpack(SIGNED, good, 2)
    if case == "another issuer's key":
        issuer = public_bytes(new_key())
    elif case == "a flipped byte in the body":
        good = pack(SIGNED, _flip(body, len(body) - 40), signature)
    elif case == "a flipped byte in the signature":
        good = pack(SIGNED, body, _flip(signature, 3))
    elif case == "the signing cert read as a device cert":
        good, issuer = chain.signing_cert.blob, chain.root_public
    elif case == "truncated":
        good = good[:-1]
    elif case == "a trailing byte":
        good += b"\x00"
    elif case == "not a signed object":
        good = pack(b"something else", body, signature)
    elif case == "a body that names another issuer":
        fields = unpack(CERT, body, 5)
        fields[4] = public_bytes(new_key())
        good = sign(chain.signing, pack(CERT, *fields))
    elif case == "a body with a field too few":
        good = sign(chain.signing, pack(CERT, *unpack(CERT, body, 5)[:4]))
    with pytest.raises(Refused) as caught:
        verify_certificate(good, issuer, role)
    assert caught.value.reason == reason
    if reason == "malformed":
        assert isinstance(caught.value, Malformed)


def test_the_signature_is_checked_before_any_field_is_read() -> None:
    # A body that is garbage as a certificate, but signed by someone else: the refusal is the
    # signature's, so nothing of the body was parsed first.
    chain = Chain()
    blob = sign(new_key(), b"\xff" * 40)
    with pytest.raises(Refused) as caught:
        verify_certificate(blob, public_bytes(chain.signing), "device")
    assert caught.value.reason == "signature-invalid"


def test_a_device_name_is_bounded_text() -> None:
    chain = Chain()
    with pytest.raises(ValueError):
        issue_certificate(
            chain.signing, "device", public_bytes(new_key()), name="x" * 65, issued_at=1
        )
    with pytest.raises(ValueError):
        issue_certificate(
            chain.signing, "device", public_bytes(new_key()), name="a\nb", issued_at=1
        )


def test_a_signing_key_revocation_is_the_roots_statement() -> None:
    chain = Chain()
    old = public_bytes(chain.signing)
    statement = revoke_signing_key(chain.root, old, issued_at=NOW)
    assert verify_signing_revocation(statement.blob, chain.root_public).key == old
    with pytest.raises(Refused) as caught:
        verify_signing_revocation(
            revoke_signing_key(chain.signing, old, issued_at=NOW).blob, chain.root_public
        )
    assert caught.value.reason == "signature-invalid"
