"""Slack's Web API with and without a proxy: without one the calls and downloads take httpcore
alone (robota's own User-Agent), behind one every request goes through it on httpx (its
User-Agent), a redirected download included."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

from robota.transports.slack import WebApi

from ...support.fake_slack import BOT_TOKEN, BOT_USER, FakeSlack, fake_slack
from ...support.http_proxy import HttpProxy, clear_proxy_variables, http_proxy


@pytest.fixture(autouse=True)
def no_proxy_variables(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    clear_proxy_variables(monkeypatch)
    yield


@pytest.fixture
async def fake() -> AsyncIterator[FakeSlack]:
    async with fake_slack() as slack:
        yield slack


@pytest.fixture
async def proxy() -> AsyncIterator[HttpProxy]:
    async with http_proxy() as running:
        yield running


async def calls(fake: FakeSlack) -> list[str]:
    """A JSON call, a form call, a download through a redirect; the User-Agents seen."""
    entry: dict[str, Any] = fake.share("a.txt", b"hello", "text/plain", "text")
    url = entry["url_private_download"]
    fake.redirects["/files-pri/moved"] = url
    async with WebApi(api_url=fake.api_url, token=BOT_TOKEN) as web:
        assert (await web.auth_test()).user_id == BOT_USER
        await web.messages("C1", None, pages=1)
        assert await web.download(fake.base_url + "/files-pri/moved", limit=5) == b"hello"
    seen = [c.headers["user-agent"] for c in fake.calls_of("auth.test")]
    seen += [c.headers["user-agent"] for c in fake.calls_of("conversations.history")]
    return seen + [d.headers["user-agent"] for d in fake.downloads]


async def test_without_a_proxy_the_calls_and_downloads_take_httpcore(
    fake: FakeSlack, proxy: HttpProxy
) -> None:
    assert set(await calls(fake)) == {"robota"}
    assert proxy.seen == []


async def test_behind_a_proxy_every_request_goes_through_it_on_httpx(
    fake: FakeSlack, proxy: HttpProxy, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HTTP_PROXY", proxy.url)
    agents = await calls(fake)
    assert {agent.split("/")[0] for agent in agents} == {"python-httpx"}
    paths = [url.removeprefix(fake.base_url) for url in proxy.urls()]
    assert paths[:3] == ["/api/auth.test", "/api/conversations.history", "/files-pri/moved"]
    assert paths[3].endswith("/download/a.txt")  # where the redirect pointed
    assert len(agents) == len(paths) == 4
