"""TLS without httpx, against an HTTPS server with a certificate of its own: the context the
calls verify with is httpx's default (certifi's bundle, or ``SSL_CERT_FILE``), and the one a
transport hands its clients (``tls=``) is the one they use."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from robota.transports._direct import AsyncHttp, Unanswered
from robota.transports._net import ssl_context
from robota.transports.feishu import ApiError, RestClient
from robota.transports.slack import WebApi

from ..support.tls_server import TlsServer, tls_server


@pytest.fixture(autouse=True)
def no_proxy_and_no_certificate_variables(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for name in list(os.environ):
        if name.lower().endswith("_proxy") or name in ("SSL_CERT_FILE", "SSL_CERT_DIR"):
            monkeypatch.delenv(name)
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
