"""An HTTPS server on loopback with a self-signed certificate of its own (``localhost`` and
127.0.0.1), answering every request with one JSON object that satisfies the Feishu and Slack
clients' first calls (a token, the bot's info, ``auth.test``). ``cert_file`` is the certificate
as a PEM bundle: trusting it (``SSL_CERT_FILE``, or a context of one's own) is what lets a
client in."""

from __future__ import annotations

import datetime
import ipaddress
import json
import ssl
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

import trio
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

ANSWER = {
    "code": 0,
    "ok": True,
    "tenant_access_token": "t-tls",
    "expire": 7200,
    "bot": {"open_id": "ou_tls"},
    "user_id": "U0TLS",
    "team_id": "T0TLS",
    "bot_id": "B0TLS",
}


@dataclass
class TlsServer:
    port: int
    cert_file: Path
    paths: list[str] = field(default_factory=list)

    @property
    def url(self) -> str:
        return f"https://localhost:{self.port}"

    def trusting(self) -> ssl.SSLContext:
        return ssl.create_default_context(cafile=str(self.cert_file))


def _certificate(folder: Path) -> tuple[Path, Path]:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(hours=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.SubjectAlternativeName(
                [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
            ),
            critical=False,
        )
        .sign(key, hashes.SHA256())
    )
    cert_file, key_file = folder / "cert.pem", folder / "key.pem"
    cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_file, key_file


async def _serve(server: TlsServer, stream: trio.SSLStream[trio.SocketStream]) -> None:
    buffer = b""
    try:
        while True:
            while b"\r\n\r\n" not in buffer:
                chunk = await stream.receive_some(65536)
                if not chunk:
                    return
                buffer += chunk
            head, _, buffer = buffer.partition(b"\r\n\r\n")
            lines = head.decode("latin-1").split("\r\n")
            length = next(
                (
                    int(v)
                    for k, _, v in (x.partition(":") for x in lines[1:])
                    if k.strip().lower() == "content-length"
                ),
                0,
            )
            while len(buffer) < length:
                buffer += await stream.receive_some(65536)
            buffer = buffer[length:]
            server.paths.append(lines[0].split(" ")[1])
            body = json.dumps(ANSWER).encode()
            await stream.send_all(
                b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                + f"Content-Length: {len(body)}\r\n\r\n".encode()
                + body
            )
    except (trio.BrokenResourceError, trio.ClosedResourceError):
        return


def self_signed(folder: Path) -> tuple[ssl.SSLContext, Path]:
    """A server's TLS context with a new certificate of its own (written to ``folder``), and
    that certificate as a PEM file for a client to trust."""
    cert_file, key_file = _certificate(folder)
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert_file, key_file)
    return context, cert_file


@asynccontextmanager
async def tls_server(folder: Path) -> AsyncIterator[TlsServer]:
    context, cert_file = self_signed(folder)
    async with trio.open_nursery() as nursery:
        server = TlsServer(0, cert_file)
        listeners = await nursery.start(
            partial(trio.serve_ssl_over_tcp, partial(_serve, server), 0, context, host="127.0.0.1")
        )
        server.port = listeners[0].transport_listener.socket.getsockname()[1]
        try:
            yield server
        finally:
            nursery.cancel_scope.cancel()
