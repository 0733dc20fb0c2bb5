"""Link certificates and TLS 1.3 with mutual authentication, on real loopback sockets: who
gets through the handshake (rostered devices whose certificates are known), who does not (a
stranger, a revoked device, a relay with its own certificate), and pairing's open channel."""

from __future__ import annotations

import ssl

import pytest
import trio

from robota.mesh import Malformed, Refused, device_id, new_key
from robota.mesh._linkcert import (
    KnownCertificates,
    admit_peer,
    certificate_device,
    client_context,
    link_certificate,
    pairing_context,
    server_context,
)

from ._chain import Chain


def test_a_link_certificate_is_a_pure_function_of_the_key() -> None:
    key = new_key()
    der = link_certificate(key)
    assert der == link_certificate(key)
    assert certificate_device(der) == device_id(key)
    assert link_certificate(new_key()) != der


@pytest.mark.parametrize(
    "bad",
    [b"", b"not DER", b"\x30" * 5000],
)
def test_what_is_no_link_certificate(bad: bytes) -> None:
    with pytest.raises(Malformed):
        certificate_device(bad)


def test_a_certificate_signed_by_another_key_is_refused() -> None:
    from cryptography import x509
    from cryptography.hazmat.primitives import serialization

    honest = x509.load_der_x509_certificate(link_certificate(new_key()))
    forger = new_key()
    forged = (
        x509.CertificateBuilder()
        .subject_name(honest.subject)
        .issuer_name(honest.issuer)
        .public_key(honest.public_key())  # the victim's key, signed by another
        .serial_number(honest.serial_number)
        .not_valid_before(honest.not_valid_before_utc)
        .not_valid_after(honest.not_valid_after_utc)
        .sign(forger, None)
        .public_bytes(serialization.Encoding.DER)
    )
    with pytest.raises(Malformed, match="not signed by its own key"):
        certificate_device(forged)
    with pytest.raises(Malformed):
        KnownCertificates([forged])


def test_known_certificates_trust_only_what_the_lists_admit() -> None:
    chain = Chain()
    a, b, c = chain.devices
    known = KnownCertificates(link_certificate(k) for k in (a, b, c, new_key()))
    assert len(known.devices()) == 4
    revoked = chain.revocations((device_id(c),), seq=2)
    trusted = known.trusted(chain.roster(), revoked)
    assert trusted == sorted([link_certificate(a), link_certificate(b)], key=certificate_device)
    roster, none = chain.roster(), chain.revocations()
    assert admit_peer(link_certificate(b), roster, none).device == device_id(b)
    with pytest.raises(Refused) as refused:
        admit_peer(link_certificate(c), roster, revoked)
    assert refused.value.reason == "revoked"
    with pytest.raises(Refused) as refused:
        admit_peer(link_certificate(new_key()), roster, none)
    assert refused.value.reason == "not-in-roster"
    with pytest.raises(Refused, match="dialled"):
        admit_peer(link_certificate(b), roster, none, expected=device_id(a))
    with pytest.raises(Refused):
        admit_peer(None, roster, none)


async def handshake(
    server: ssl.SSLContext, client: ssl.SSLContext
) -> tuple[bytes | None, bytes | None] | str:
    """Both sides' view of the peer's certificate after a TLS handshake on loopback, or how
    it failed."""
    listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
    port = listeners[0].socket.getsockname()[1]
    seen: dict[str, bytes | None] = {}
    failures: list[str] = []

    async def serve() -> None:
        stream = await listeners[0].accept()
        tls = trio.SSLStream(stream, server, server_side=True)
        try:
            await tls.do_handshake()
            seen["server"] = tls.getpeercert(binary_form=True)
            await tls.send_all(b"x")
        except (trio.BrokenResourceError, ssl.SSLError) as error:
            failures.append(f"server: {error}")
        finally:
            await trio.aclose_forcefully(tls)

    with trio.fail_after(20):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(serve)
            tls = trio.SSLStream(await trio.open_tcp_stream("127.0.0.1", port), client)
            try:
                await tls.do_handshake()
                seen["client"] = tls.getpeercert(binary_form=True)
                # TLS 1.3: the server judges the client's certificate after the client's
                # handshake is done, so a refusal shows on the first read.
                if not await tls.receive_some(1):
                    failures.append("client: closed")
            except (trio.BrokenResourceError, ssl.SSLError) as error:
                failures.append(f"client: {error}")
            finally:
                await trio.aclose_forcefully(tls)
    await listeners[0].aclose()
    if failures:
        return "; ".join(failures)
    return seen.get("server"), seen.get("client")


async def test_two_rostered_devices_link_and_see_each_other() -> None:
    chain = Chain()
    a, b, _c = chain.devices
    known = KnownCertificates([link_certificate(a), link_certificate(b)])
    trusted = known.trusted(chain.roster(), chain.revocations())
    outcome = await handshake(server_context(a, trusted), client_context(b, trusted))
    assert outcome == (link_certificate(b), link_certificate(a))


@pytest.mark.parametrize("who", ["stranger", "revoked", "relay"])
async def test_impostors_fail_in_the_handshake(who: str) -> None:
    chain = Chain()
    a, b, c = chain.devices
    stranger = new_key()
    known = KnownCertificates(link_certificate(k) for k in (a, b, c))
    revocations = chain.revocations((device_id(c),))
    trusted = known.trusted(chain.roster(), revocations)
    if who == "stranger":
        # It dials A with its own keys (and trusts A: it might know A's certificate).
        outcome = await handshake(
            server_context(a, trusted), client_context(stranger, [link_certificate(a)])
        )
    elif who == "revoked":
        outcome = await handshake(
            server_context(a, trusted), client_context(c, [link_certificate(a)])
        )
    else:
        # B dials A's address; a relay answers with its own certificate.
        outcome = await handshake(
            server_context(stranger, [link_certificate(b)]), client_context(b, trusted)
        )
    assert isinstance(outcome, str), outcome


async def test_pairing_shows_the_joiner_the_pairers_certificate() -> None:
    pairer, joiner = new_key(), new_key()
    outcome = await handshake(
        pairing_context(pairer, server_side=True), pairing_context(joiner, server_side=False)
    )
    assert outcome == (None, link_certificate(pairer))
