"""Link certificates: TLS 1.3 with mutual authentication on Python's ``ssl``, self-signed.

Each device presents a self-signed X.509 certificate for its device key (Ed25519). It is a
pure function of the key (``link_certificate``: Ed25519 signs deterministically, and the serial,
names and validity are fixed), so it never needs storing and never changes while the key does
not. Python's ``ssl`` has no verification callback: a peer's certificate is accepted in the
handshake only when that exact certificate is among the context's trust anchors. So each
device keeps the link certificates it knows (``KnownCertificates``: learned when pairing and
passed along by the links' gossip; anyone may pass one on, since only the device's own key can
have signed it), and a context trusts only those of devices the current roster admits (not
revoked). A stranger, a revoked device and a relay that presents its own certificate fail in
the TLS handshake, before any application frame; right after it ``admit_peer`` checks the
peer once more against the lists (and, for a dial, that it is the device dialled). A recorded
link cannot be replayed: TLS 1.3's handshake is fresh on both sides. Why a handshake failed
is named from the closed set of reasons (``handshake_refusal``): a certificate that is no
rostered device's, or one the peer would not take, is ``not-in-roster``; bytes that are no
handshake this device can complete (a replayed recording, a damaged stream, another protocol)
are ``malformed``.

The private key reaches OpenSSL through an anonymous in-memory file (``memfd_create``) or a
pipe, never a file on disk.
"""

from __future__ import annotations

import datetime
import os
import ssl
from collections.abc import Iterable, Iterator
from contextlib import contextmanager

from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.x509.oid import NameOID

from ._certs import Certificate
from ._errors import Malformed, Refused
from ._identity import DeviceId, device_id, public_bytes
from ._lists import Revocations, Roster, admit

__all__ = [
    "KnownCertificates",
    "admit_peer",
    "certificate_device",
    "certificate_key",
    "client_context",
    "handshake_refusal",
    "link_certificate",
    "pairing_context",
    "server_context",
]

_NOT_BEFORE = datetime.datetime(2000, 1, 1, tzinfo=datetime.UTC)
_NOT_AFTER = datetime.datetime(9999, 12, 31, 23, 59, 59, tzinfo=datetime.UTC)
MAX_CERTIFICATE = 4096
"""A link certificate is ~300 bytes; anything larger is not one."""


def link_certificate(key: Ed25519PrivateKey) -> bytes:
    """This device's link certificate (DER), the same bytes every time for the same key."""
    public = public_bytes(key)
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, device_id(public))])
    builder = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(int.from_bytes(public[:8], "big") >> 1 or 1)
        .not_valid_before(_NOT_BEFORE)
        .not_valid_after(_NOT_AFTER)
    )
    return builder.sign(key, None).public_bytes(serialization.Encoding.DER)


def certificate_key(der: bytes) -> bytes:
    """The raw Ed25519 public key a link certificate is for, once it proves self-signed by it;
    ``Malformed`` otherwise."""
    if len(der) > MAX_CERTIFICATE:
        raise Malformed("a link certificate larger than any is")
    try:
        cert = x509.load_der_x509_certificate(der)
        public = cert.public_key()
        if not isinstance(public, Ed25519PublicKey):
            raise Malformed("a link certificate whose key is not Ed25519")
        public.verify(cert.signature, cert.tbs_certificate_bytes)
    except InvalidSignature:
        raise Malformed("a link certificate not signed by its own key") from None
    except ValueError:
        raise Malformed("bytes that are not a link certificate") from None
    return public.public_bytes_raw()


def certificate_device(der: bytes) -> DeviceId:
    """The device a link certificate is for (``certificate_key``'s checks)."""
    return device_id(certificate_key(der))


class KnownCertificates:
    """The link certificates this device knows, by device (each verified self-signed)."""

    def __init__(self, certificates: Iterable[bytes] = ()) -> None:
        self._by_device: dict[DeviceId, bytes] = {}
        for der in certificates:
            self.add(der)

    def add(self, der: bytes) -> DeviceId:
        """Learn ``der``; its device. ``Malformed`` for what is no link certificate."""
        device = certificate_device(der)
        self._by_device[device] = der
        return device

    def get(self, device: DeviceId) -> bytes | None:
        return self._by_device.get(device)

    def devices(self) -> frozenset[DeviceId]:
        return frozenset(self._by_device)

    def all(self) -> list[bytes]:
        return [self._by_device[d] for d in sorted(self._by_device)]

    def trusted(self, roster: Roster, revocations: Revocations) -> list[bytes]:
        """The certificates of the devices the current lists admit (the trust anchors)."""
        admitted = []
        for device in sorted(self._by_device):
            try:
                admit(device, roster, revocations)
            except Refused:
                continue
            admitted.append(self._by_device[device])
        return admitted


def admit_peer(
    der: bytes | None,
    roster: Roster,
    revocations: Revocations,
    *,
    expected: DeviceId | None = None,
) -> Certificate:
    """After the handshake: the peer's device certificate if the lists admit the device its
    link certificate names (and it is ``expected``, for a dial); ``Refused`` otherwise."""
    if der is None:
        raise Refused("not-in-roster", "the peer presented no certificate")
    device = certificate_device(der)
    cert = admit(device, roster, revocations)
    if expected is not None and device != expected:
        raise Refused("not-in-roster", f"dialled {expected}, reached {device}")
    return cert


_ENDED = "the connection ended during the TLS handshake"
_NOT_TAKEN = {
    "CERTIFICATE_VERIFY_FAILED": "its certificate is no rostered device's",
    "PEER_DID_NOT_RETURN_A_CERTIFICATE": "it presented no certificate",
    "TLSV13_ALERT_CERTIFICATE_REQUIRED": "the peer wants a certificate this device has not",
    "TLSV1_ALERT_UNKNOWN_CA": "the peer does not take this device's certificate",
    "SSLV3_ALERT_BAD_CERTIFICATE": "the peer does not take this device's certificate",
    "SSLV3_ALERT_CERTIFICATE_UNKNOWN": "the peer does not take this device's certificate",
}
"""TLS failures that are a certificate refused, on this side or the peer's."""


def handshake_refusal(error: BaseException) -> Refused:
    """Why a link's handshake failed, as a reason from the closed set (see the docstring):
    ``error`` is what the handshake (its ``ssl.SSLError`` the cause) or ``admit_peer`` raised."""
    if isinstance(error, Refused):
        return error
    cause: BaseException | None = error
    while cause is not None and not isinstance(cause, ssl.SSLError):
        cause = cause.__cause__ or cause.__context__
    if cause is None:
        return Refused("malformed", _ENDED)
    reason = str(getattr(cause, "reason", "") or "")
    if isinstance(cause, ssl.SSLEOFError) or reason == "UNEXPECTED_EOF_WHILE_READING":
        return Refused("malformed", _ENDED)  # the peer hung up: its refusal, if any, is its own
    if isinstance(cause, ssl.SSLCertVerificationError) or reason in _NOT_TAKEN:
        return Refused(
            "not-in-roster", _NOT_TAKEN.get(reason, _NOT_TAKEN["CERTIFICATE_VERIFY_FAILED"])
        )
    return Refused(
        "malformed", f"no TLS 1.3 handshake this device can complete ({reason or cause})"
    )


@contextmanager
def _key_file(pem: bytes) -> Iterator[str]:
    """A path OpenSSL reads ``pem`` from that is no file on disk."""
    if hasattr(os, "memfd_create"):
        fd = os.memfd_create("robota-mesh-link", os.MFD_CLOEXEC)
        try:
            os.write(fd, pem)
            yield f"/proc/self/fd/{fd}"
        finally:
            os.close(fd)
        return
    read, write = os.pipe()
    try:
        os.write(write, pem)  # a PEM key and certificate fit a pipe's buffer
        os.close(write)
        write = -1
        yield f"/dev/fd/{read}"
    finally:
        os.close(read)
        if write >= 0:
            os.close(write)


def _context(
    server_side: bool, key: Ed25519PrivateKey, trusted: Iterable[bytes] | None
) -> ssl.SSLContext:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER if server_side else ssl.PROTOCOL_TLS_CLIENT)
    context.minimum_version = ssl.TLSVersion.TLSv1_3
    context.maximum_version = ssl.TLSVersion.TLSv1_3
    context.check_hostname = False  # a device is its key, not a host name
    if trusted is None:
        context.verify_mode = ssl.CERT_NONE  # pairing: the PAKE proves the channel (_pairing)
    else:
        context.verify_mode = ssl.CERT_REQUIRED
        anchors = list(trusted)
        if anchors:
            context.load_verify_locations(cadata=b"".join(anchors))
    cert = x509.load_der_x509_certificate(link_certificate(key))
    pem = cert.public_bytes(serialization.Encoding.PEM) + key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    with _key_file(pem) as path:
        context.load_cert_chain(path)
    return context


def server_context(key: Ed25519PrivateKey, trusted: Iterable[bytes]) -> ssl.SSLContext:
    """The listener's context: presents this device's link certificate, demands one of
    ``trusted`` from the peer."""
    return _context(True, key, trusted)


def client_context(key: Ed25519PrivateKey, trusted: Iterable[bytes]) -> ssl.SSLContext:
    """The dialler's context: the same, from the other side."""
    return _context(False, key, trusted)


def pairing_context(key: Ed25519PrivateKey, *, server_side: bool) -> ssl.SSLContext:
    """A pairing connection's context: this device's link certificate, nothing checked of
    the peer's (it cannot be yet; the code's confirmation binds both, ``_pairing``). The
    pairer (server) asks for none; the joiner reads the pairer's from the handshake."""
    return _context(server_side, key, None)
