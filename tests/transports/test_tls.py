"""TLS without httpx, against an HTTPS server with a certificate of its own: the context the
calls verify with is httpx's default (certifi's bundle, or ``SSL_CERT_FILE``), and the one a
transport hands its clients (``tls=``) is the one they use."""

from __future__ import annotations

import ssl
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
import trio

from robota.transports._direct import AsyncHttp, Unanswered
from robota.transports._net import ssl_context
from robota.transports.feishu import ApiError, Delivery, LongConnectionClient, RestClient
from robota.transports.slack import Envelope, SocketModeClient, WebApi

from ..support.fake_feishu import APP_ID, APP_SECRET, WAIT, fake_platform
from ..support.fake_slack import APP_TOKEN, fake_slack
from ..support.http_proxy import clear_proxy_variables
from ..support.tls_server import TlsServer, self_signed, tls_server


@pytest.fixture(autouse=True)
def no_proxy_and_no_certificate_variables(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    clear_proxy_variables(monkeypatch, also=("SSL_CERT_FILE", "SSL_CERT_DIR"))
    yield


@pytest.fixture
async def server(tmp_path: Path) -> AsyncIterator[TlsServer]:
    async with tls_server(tmp_path) as running:
        yield running


async def test_certifis_bundle_does_not_trust_a_certificate_of_its_own(server: TlsServer) -> None:
    async with AsyncHttp(timeout=5.0, proxied=False, context=ssl_context()) as http:
        with pytest.raises(Unanswered) as raised:
            await http.request("GET", server.url + "/x", headers={})
    assert raised.value.name == "ConnectError" and server.paths == []


async def test_ssl_cert_file_is_honoured(
    server: TlsServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SSL_CERT_FILE", str(server.cert_file))
    async with AsyncHttp(timeout=5.0, proxied=False, context=ssl_context()) as http:
        reply = await http.request("GET", server.url + "/x", headers={})
    assert reply.status == 200 and server.paths == ["/x"]


async def test_the_clients_use_the_context_they_are_given(server: TlsServer) -> None:
    shared = server.trusting()  # the environment trusts certifi's bundle alone
    async with RestClient(domain=server.url, app_id="a", app_secret="s", tls=shared) as rest:
        assert await rest.bot_info() == {"open_id": "ou_tls"}
    async with WebApi(api_url=server.url + "/api/", token="xoxb-t", tls=shared) as web:
        assert (await web.auth_test()).user_id == "U0TLS"
    async with RestClient(domain=server.url, app_id="a", app_secret="s") as own:
        with pytest.raises(ApiError, match="ConnectError"):
            await own.call("GET", "/open-apis/bot/v3/info", retries=0, authorized=False)


async def ignore(_: Delivery) -> dict[str, Any] | None:
    return None


async def test_the_long_connections_wss_dial_trusts_what_the_transports_context_trusts(
    tmp_path: Path,
) -> None:
    server_side, cert_file = self_signed(tmp_path)
    async with fake_platform(ws_tls=server_side) as fake, trio.open_nursery() as nursery:
        trusting = ssl.create_default_context(cafile=str(cert_file))
        link = LongConnectionClient(
            domain=fake.domain, app_id=APP_ID, app_secret=APP_SECRET, handler=ignore, tls=trusting
        )
        with trio.fail_after(WAIT):  # a dial that ignored ``tls`` would retry for good
            await nursery.start(link.run)
        assert link.state == "connected" and link.connects == 1
        await fake.wait_until(lambda: bool(fake.current.pings))
        # The same wss endpoint with httpx's default context (certifi's bundle): no link.
        told: list[str | None] = []
        default = LongConnectionClient(
            domain=fake.domain,
            app_id=APP_ID,
            app_secret=APP_SECRET,
            handler=ignore,
            on_status=lambda _, detail: told.append(detail),
            handshake_timeout=60.0,  # longer than the wait below: only TLS's refusal ends it
        )
        nursery.start_soon(default.run)
        # Told by what TLS refused (trio-websocket alone waited out the handshake's timeout,
        # then said TooSlowError).
        await fake.wait_until(lambda: any(d and "handshake failed" in d for d in told))
        assert "WebSocket handshake failed: SSLCertVerificationError" in told[-1]
        assert default.state != "connected" and default.connects == 0
        assert len(fake.connections) == 1
        nursery.cancel_scope.cancel()


async def nothing(_: Envelope) -> None:
    return None


async def test_socket_modes_wss_dial_trusts_what_the_transports_context_trusts(
    tmp_path: Path,
) -> None:
    server_side, cert_file = self_signed(tmp_path)
    async with fake_slack(ws_tls=server_side) as fake, trio.open_nursery() as nursery:
        trusting = ssl.create_default_context(cafile=str(cert_file))
        link = SocketModeClient(
            api_url=fake.api_url, app_token=APP_TOKEN, handler=nothing, tls=trusting
        )
        with trio.fail_after(WAIT):  # a dial that ignored ``tls`` would retry for good
            await nursery.start(link.run)
        assert link.state == "connected" and link.connects == 1
        told: list[str | None] = []
        default = SocketModeClient(
            api_url=fake.api_url,
            app_token=APP_TOKEN,
            handler=nothing,
            on_status=lambda _, detail: told.append(detail),
            handshake_timeout=60.0,  # longer than the wait below: only TLS's refusal ends it
        )
        nursery.start_soon(default.run)
        await fake.wait_until(lambda: any(d and "handshake" in d for d in told))
        assert any("SSLCertVerificationError" in (d or "") for d in told), told
        assert default.state != "connected" and default.connects == 0
        assert len(fake.connections) == 1
        nursery.cancel_scope.cancel()
