"""Feishu's calls with and without a proxy: without one they take httpcore alone (robota's own
User-Agent, the pool), behind one every call goes through it on httpx (its User-Agent): the
REST calls and downloads, the endpoint call of the long connection, the open_id read at start."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest
import trio

from robota.transports.feishu import LongConnectionClient, RestClient
from robota.transports.feishu._bot_identity import bot_open_id

from ...support.fake_feishu import APP_ID, APP_SECRET, FakePlatform, fake_platform
from ...support.http_proxy import HttpProxy, clear_proxy_variables, http_proxy

TOKEN = "/open-apis/auth/v3/tenant_access_token/internal"
BOT = "/open-apis/bot/v3/info"
FILE = "/open-apis/im/v1/messages/om_1/resources/file_1"
ENDPOINT = "/callback/ws/endpoint"


@pytest.fixture(autouse=True)
def no_proxy_variables(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    clear_proxy_variables(monkeypatch)
    yield


@pytest.fixture
async def fake() -> AsyncIterator[FakePlatform]:
    async with fake_platform() as platform:
        platform.resources[("om_1", "file_1")] = ("file", b"x" * 1000, "text/csv")
        yield platform


@pytest.fixture
async def proxy() -> AsyncIterator[HttpProxy]:
    async with http_proxy() as running:
        yield running


def agents(fake: FakePlatform, path: str) -> set[str]:
    return {r.headers["user-agent"].split("/")[0] for r in fake.calls(path)}


async def rest_calls(fake: FakePlatform) -> int:
    """A JSON call and a download; the connections the pool holds after them."""
    async with RestClient(domain=fake.domain, app_id=APP_ID, app_secret=APP_SECRET) as client:
        assert await client.bot_info() == {"open_id": "ou_fakebot"}
        got = await client.download(FILE, params={"type": "file"}, limit=1000)
        assert got == (b"x" * 1000, "text/csv")
        return client.pooled


async def test_without_a_proxy_the_rest_calls_and_downloads_take_the_pool(
    fake: FakePlatform, proxy: HttpProxy
) -> None:
    assert await rest_calls(fake) >= 1
    assert agents(fake, TOKEN) == agents(fake, BOT) == agents(fake, FILE) == {"robota"}
    assert proxy.seen == []


async def test_behind_a_proxy_the_rest_calls_and_downloads_go_through_it_on_httpx(
    fake: FakePlatform, proxy: HttpProxy, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HTTP_PROXY", proxy.url)
    assert await rest_calls(fake) == 0
    assert agents(fake, TOKEN) == agents(fake, BOT) == agents(fake, FILE) == {"python-httpx"}
    assert [u.removeprefix(fake.domain).partition("?")[0] for u in proxy.urls()] == [
        TOKEN,
        BOT,
        FILE,
    ]


async def test_a_no_proxy_entry_for_the_domain_keeps_the_pool(
    fake: FakePlatform, proxy: HttpProxy, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HTTP_PROXY", proxy.url)
    monkeypatch.setenv("NO_PROXY", "localhost,127.0.0.1")
    assert await rest_calls(fake) >= 1
    assert proxy.seen == [] and agents(fake, BOT) == {"robota"}


@pytest.mark.parametrize("proxied", [False, True])
async def test_the_bots_open_id_at_start(
    fake: FakePlatform, proxy: HttpProxy, monkeypatch: pytest.MonkeyPatch, proxied: bool
) -> None:
    if proxied:
        monkeypatch.setenv("ALL_PROXY", proxy.url)
    found = await trio.to_thread.run_sync(bot_open_id, fake.domain, APP_ID, APP_SECRET)
    assert found == "ou_fakebot"
    assert agents(fake, TOKEN) == agents(fake, BOT) == {"python-httpx" if proxied else "robota"}
    assert len(proxy.seen) == (2 if proxied else 0)


async def test_the_bots_open_id_is_none_when_nothing_answers(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    async with fake_platform() as gone:
        domain = gone.domain
    assert await trio.to_thread.run_sync(bot_open_id, domain, APP_ID, APP_SECRET) is None
    assert "ConnectError" in caplog.text


@pytest.mark.parametrize("proxied", [False, True])
async def test_the_endpoint_call(
    fake: FakePlatform, proxy: HttpProxy, monkeypatch: pytest.MonkeyPatch, proxied: bool
) -> None:
    if proxied:
        monkeypatch.setenv("HTTP_PROXY", proxy.url)

    async def handler(_: object) -> None:
        return None

    link = LongConnectionClient(
        domain=fake.domain, app_id=APP_ID, app_secret=APP_SECRET, handler=handler
    )
    async with trio.open_nursery() as nursery:
        with trio.fail_after(10):
            await nursery.start(link.run)
        nursery.cancel_scope.cancel()
    assert link.connects == 1
    assert agents(fake, ENDPOINT) == {"python-httpx" if proxied else "robota"}
    assert proxy.urls() == ([fake.domain + ENDPOINT] if proxied else [])
