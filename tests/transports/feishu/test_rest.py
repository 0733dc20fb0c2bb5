"""The REST client against the fake platform: token, refresh, retries, timeouts, PATCH slots."""

from __future__ import annotations

import json
import logging
import socket
from collections.abc import AsyncIterator
from typing import Any

import pytest
import trio
import trio.testing

from robota.transports.feishu import ApiError, RestClient
from robota.transports.feishu._errors import TooLarge

from ...support.fake_feishu import APP_ID, APP_SECRET, FakePlatform, fake_platform

TOKEN = "/open-apis/auth/v3/tenant_access_token/internal"
BOT = "/open-apis/bot/v3/info"
FAST = (0.01, 0.02, 0.03, 0.04, 0.05)


@pytest.fixture
async def fake() -> AsyncIterator[FakePlatform]:
    async with fake_platform() as platform:
        yield platform


def rest(fake: FakePlatform, **options: Any) -> RestClient:
    return RestClient(
        domain=fake.domain,
        app_id=APP_ID,
        app_secret=options.pop("app_secret", APP_SECRET),
        backoff=options.pop("backoff", FAST),
        **options,
    )


async def test_the_token_is_fetched_once_and_sent_as_a_bearer(fake: FakePlatform) -> None:
    async with rest(fake) as client:
        bots = [await client.bot_info() for _ in range(3)]
    assert bots == [{"open_id": "ou_fakebot"}] * 3
    (token_call,) = fake.calls(TOKEN)
    assert json.loads(token_call.body) == {"app_id": APP_ID, "app_secret": APP_SECRET}
    assert {r.headers["authorization"] for r in fake.calls(BOT)} == {"Bearer t-fake0001"}


async def test_concurrent_first_calls_share_one_token_fetch(fake: FakePlatform) -> None:
    async with rest(fake) as client, trio.open_nursery() as nursery:
        for _ in range(5):
            nursery.start_soon(client.bot_info)
    assert len(fake.calls(TOKEN)) == 1 and len(fake.calls(BOT)) == 5


async def test_a_refused_token_is_refreshed_once_and_the_call_retried(fake: FakePlatform) -> None:
    async with rest(fake) as client:
        await client.bot_info()
        fake.revoked.add("t-fake0001")  # the platform answers 99991663 from now on
        assert await client.bot_info() == {"open_id": "ou_fakebot"}
    assert fake.tokens == ["t-fake0001", "t-fake0002"]
    assert [r.headers["authorization"] for r in fake.calls(BOT)] == [
        "Bearer t-fake0001",
        "Bearer t-fake0001",
        "Bearer t-fake0002",
    ]


async def test_a_token_refused_again_after_its_refresh_fails_without_a_loop(
    fake: FakePlatform,
) -> None:
    async with rest(fake) as client:
        fake.scripted["GET", BOT].extend([(400, {}, {"code": 99991664, "msg": "expired"})] * 5)
        with pytest.raises(ApiError) as raised:
            await client.bot_info()
    assert raised.value.code == 99991664 and raised.value.status == 400
    assert len(fake.calls(BOT)) == 2 and len(fake.tokens) == 2


async def test_the_token_is_refreshed_before_it_expires(fake: FakePlatform) -> None:
    fake.token_expire = 1  # refreshed at half its life, 0.5 s
    async with rest(fake) as client:
        await client.bot_info()
        await trio.sleep(0.5)
        await client.bot_info()
    assert fake.tokens == ["t-fake0001", "t-fake0002"]
    assert len(fake.calls(BOT)) == 2  # no refused call was needed


async def test_a_rate_limit_waits_the_reset_header_then_succeeds(fake: FakePlatform) -> None:
    fake.scripted["GET", BOT].extend(
        [
            (429, {"x-ogw-ratelimit-reset": "0.2"}, {"code": 99991400, "msg": "too fast"}),
            (400, {"x-ogw-ratelimit-reset": "0"}, {"code": 99991400, "msg": "too fast"}),
        ]
    )
    async with rest(fake) as client:
        started = trio.current_time()
        await client.bot_info()
        waited = trio.current_time() - started
    assert len(fake.calls(BOT)) == 3
    assert waited >= 0.2  # it honoured the header (FAST backoff alone would be 0.03)


async def test_frequency_limits_and_server_errors_back_off_then_succeed(
    fake: FakePlatform,
) -> None:
    fake.scripted["GET", BOT].extend(
        [
            (400, {}, {"code": 230020, "msg": "frequency limit"}),
            (502, {}, {"code": 0, "msg": "bad gateway"}),
            (500, {}, "not json at all"),
        ]
    )
    async with rest(fake) as client:
        assert await client.bot_info() == {"open_id": "ou_fakebot"}
    assert len(fake.calls(BOT)) == 4


async def test_retries_are_bounded_and_the_error_names_the_call(fake: FakePlatform) -> None:
    fake.scripted["GET", BOT].extend([(503, {}, {"code": 1, "msg": "unavailable"})] * 10)
    async with rest(fake, retries=2) as client:
        with pytest.raises(ApiError, match=r"GET /open-apis/bot/v3/info: HTTP 503, code 1"):
            await client.bot_info()
    assert len(fake.calls(BOT)) == 3


async def test_a_request_error_is_not_retried(fake: FakePlatform) -> None:
    fake.scripted["POST", "/open-apis/im/v1/messages"].append(
        (400, {}, {"code": 230001, "msg": "invalid message content"})
    )
    async with rest(fake) as client:
        with pytest.raises(ApiError) as raised:
            await client.call("POST", "/open-apis/im/v1/messages", json_body={"receive_id": "x"})
    assert (raised.value.status, raised.value.code) == (400, 230001)
    assert len(fake.calls("/open-apis/im/v1/messages")) == 1


async def test_every_call_has_a_timeout(fake: FakePlatform) -> None:
    fake.scripted["GET", BOT].extend([(200, {}, ...)] * 3)  # never answered
    async with rest(fake, timeout=0.2, retries=1) as client:
        with trio.fail_after(5), pytest.raises(ApiError, match="ReadTimeout"):
            await client.bot_info()
    assert len(fake.calls(BOT)) == 2


async def test_bad_credentials_fail_with_the_platforms_message_and_no_secret(
    fake: FakePlatform,
) -> None:
    async with rest(fake, app_secret="not-the-secret-4242") as client:
        with pytest.raises(ApiError, match="app secret invalid") as raised:
            await client.bot_info()
    assert "not-the-secret-4242" not in str(raised.value)
    assert fake.calls(BOT) == []


async def test_patches_of_one_message_keep_within_five_per_second(fake: FakePlatform) -> None:
    path = "/open-apis/im/v1/messages/om_card"
    async with rest(fake, retries=0) as client, trio.open_nursery() as nursery:
        for n in range(7):
            nursery.start_soon(client.patch_message, "om_card", json.dumps({"n": n}))
        nursery.start_soon(client.patch_message, "om_other", "{}")
    # The fake answers 230020 to a sixth PATCH within a second; with no retries allowed,
    # any such answer would have failed the nursery.
    assert len(fake.calls(path)) == 7
    assert len(fake.calls("/open-apis/im/v1/messages/om_other")) == 1


async def test_no_log_line_carries_the_app_secret(
    fake: FakePlatform, caplog: pytest.LogCaptureFixture
) -> None:
    fake.revoked.add("t-fake0001")
    fake.scripted["GET", BOT].append((429, {"x-ogw-ratelimit-reset": "0"}, {"code": 99991400}))
    with caplog.at_level(logging.DEBUG):
        async with rest(fake) as client:
            await client.bot_info()
        async with rest(fake, app_secret=APP_SECRET + "-wrong") as client:
            with pytest.raises(ApiError):
                await client.bot_info()
    assert caplog.records, "the calls logged nothing at all"
    for record in caplog.records:
        text = record.getMessage() + repr(vars(record))
        assert APP_SECRET not in text, record


async def test_a_download_streams_within_its_limit_and_refreshes_a_refused_token(
    fake: FakePlatform,
) -> None:
    fake.resources[("om_1", "file_1")] = ("file", b"x" * 1000, "text/csv")
    path = "/open-apis/im/v1/messages/om_1/resources/file_1"
    async with rest(fake) as client:
        assert await client.download(path, params={"type": "file"}, limit=1000) == (
            b"x" * 1000,
            "text/csv",
        )
        fake.revoked.add("t-fake0001")
        data, _ = await client.download(path, params={"type": "file"}, limit=1000)
        assert data == b"x" * 1000 and fake.tokens == ["t-fake0001", "t-fake0002"]
        with pytest.raises(TooLarge) as large:
            await client.download(path, params={"type": "file"}, limit=999)
        assert large.value.size == 1000
        with pytest.raises(ApiError) as refused:  # the key is not this message's
            await client.download(path, params={"type": "image"}, limit=1000)
        assert refused.value.code == 234003


PROXIES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY")


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.mark.parametrize(
    ("env", "path"),
    [
        ({}, "pool"),
        ({"HTTP_PROXY": "http://127.0.0.1:{port}"}, "proxy"),
        ({"ALL_PROXY": "http://127.0.0.1:{port}"}, "proxy"),
        ({"HTTPS_PROXY": "http://127.0.0.1:{port}"}, "pool"),  # the fake is plain http
        ({"HTTP_PROXY": "http://127.0.0.1:{port}", "NO_PROXY": "127.0.0.1"}, "pool"),
    ],
)
async def test_json_calls_take_the_pool_unless_httpx_would_use_a_proxy(
    fake: FakePlatform, monkeypatch: pytest.MonkeyPatch, env: dict[str, str], path: str
) -> None:
    for name in PROXIES:
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)
    port = closed_port()
    for name, value in env.items():
        monkeypatch.setenv(name, value.format(port=port))
    async with rest(fake, retries=0) as client:
        if path == "proxy":  # httpx's, to a proxy that is not there
            with pytest.raises(ApiError) as raised:
                await client.bot_info()
            assert raised.value.status == 0 and fake.calls(TOKEN) == []
            return
        assert await client.bot_info() == {"open_id": "ou_fakebot"}
    assert {r.headers["user-agent"] for r in fake.calls(BOT) + fake.calls(TOKEN)} == {"robota"}


async def test_a_quiet_client_lets_its_idle_connections_and_closed_windows_go(
    fake: FakePlatform,
) -> None:
    """Issue 28 s.3: ``went_quiet`` swaps a pool whose connections all sit idle for an empty one
    and forgets the PATCH windows that closed; the next call opens a connection again."""
    async with rest(fake) as client:
        async with trio.open_nursery() as nursery:
            for _ in range(4):
                nursery.start_soon(client.bot_info)
        await client.patch_message("om_1", "{}")
        assert client.pooled >= 1 and len(client.patch_limiter) == 1
        await trio.sleep(client.patch_limiter.per)
        await client.went_quiet()
        assert client.pooled == 0 and len(client.patch_limiter) == 0
        assert await client.bot_info() == {"open_id": "ou_fakebot"}
        assert client.pooled == 1


async def test_a_client_with_a_call_on_its_way_keeps_its_pool_when_told_it_is_quiet(
    fake: FakePlatform,
) -> None:
    async with rest(fake, timeout=30.0) as client:
        await client.bot_info()
        fake.scripted["GET", BOT].append((200, {}, ...))  # never answered
        async with trio.open_nursery() as nursery:
            nursery.start_soon(client.bot_info)
            await trio.testing.wait_all_tasks_blocked(0.05)
            await client.went_quiet()
            assert client.pooled == 1  # the busy connection is still the pool's
            nursery.cancel_scope.cancel()
        await client.went_quiet()
        assert client.pooled == 0
