"""The Web API client against the fake Slack: JSON bodies, the bearer token, ok: false,
429 with Retry-After, latest-state-wins updates, timeouts, reactions."""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator
from typing import Any

import pytest
import trio

from robota.core.testing import wait_until
from robota.transports.slack import ApiError, BotIdentity, RateLimited, WebApi

from ...support.fake_slack import BOT_ID, BOT_TOKEN, BOT_USER, TEAM, WAIT, FakeSlack, fake_slack

FAST = (0.01, 0.02, 0.03)


@pytest.fixture
async def fake() -> AsyncIterator[FakeSlack]:
    async with fake_slack() as slack:
        yield slack


def api(fake: FakeSlack, **options: Any) -> WebApi:
    return WebApi(
        api_url=fake.api_url,
        token=options.pop("token", BOT_TOKEN),
        backoff=options.pop("backoff", FAST),
        **options,
    )


def rate_limited(seconds: str = "0.05") -> tuple[int, dict[str, str], object]:
    return 429, {"retry-after": seconds}, {"ok": False, "error": "ratelimited"}


async def test_auth_test_gives_the_bots_ids_with_the_token_in_the_header(fake: FakeSlack) -> None:
    async with api(fake) as client:
        assert await client.auth_test() == BotIdentity(BOT_USER, TEAM, BOT_ID)
    (call,) = fake.calls_of("auth.test")
    assert call.headers["authorization"] == f"Bearer {BOT_TOKEN}"
    assert call.headers["content-type"] == "application/json"
    assert BOT_TOKEN not in json.dumps(call.args)


async def test_post_update_and_react_in_a_thread(fake: FakeSlack) -> None:
    blocks = [{"type": "section", "text": {"type": "mrkdwn", "text": "`ls` ... ok"}}]
    async with api(fake) as client:
        ts = await client.post_message(
            "D0ALICE", text="working…", blocks=blocks, thread_ts="1796015967.000001"
        )
        await client.update_message("D0ALICE", ts, text="done", blocks=[])
        await client.add_reaction("D0ALICE", "1796015967.000001", "eyes")
        await client.add_reaction("D0ALICE", "1796015967.000001", "eyes")  # already: fine
        await client.remove_reaction("D0ALICE", "1796015967.000001", "eyes")
        await client.remove_reaction("D0ALICE", "1796015967.000001", "eyes")  # gone: fine
    (post,) = fake.calls_of("chat.postMessage")
    assert post.args == {
        "channel": "D0ALICE",
        "text": "working…",
        "blocks": blocks,
        "thread_ts": "1796015967.000001",
    }
    message = fake.messages["D0ALICE", ts]
    assert (message["text"], message["thread_ts"], "edited" in message) == (
        "done",
        "1796015967.000001",
        True,
    )
    assert fake.reactions == set()
    assert len(fake.calls_of("reactions.add")) == 2


@pytest.mark.parametrize(
    ("call", "error"),
    [
        (lambda c: c.post_message("", text="x"), "channel_not_found"),
        (lambda c: c.post_message("C1", text=""), "no_text"),
        (lambda c: c.update_message("C1", "1.2", text="x"), "message_not_found"),
        (
            lambda c: c.post_message("C1", text="x", blocks=[{"type": "divider"}] * 51),
            "invalid_blocks",
        ),
    ],
)
async def test_ok_false_raises_naming_slacks_error_without_a_retry(
    fake: FakeSlack, call: Any, error: str
) -> None:
    async with api(fake) as client:
        with pytest.raises(ApiError) as raised:
            await call(client)
    assert raised.value.error == error and raised.value.status == 200
    assert error in str(raised.value) and not raised.value.fatal
    assert len(fake.calls) == 1


@pytest.mark.parametrize(("token", "error"), [("xoxb-wrong", "invalid_auth"), ("", "not_authed")])
async def test_a_refused_token_is_fatal_and_never_quoted(
    fake: FakeSlack, token: str, error: str
) -> None:
    async with api(fake, token=token) as client:
        with pytest.raises(ApiError) as raised:
            await client.auth_test()
    assert raised.value.error == error and raised.value.fatal
    assert len(fake.calls) == 1
    if token:
        assert token not in str(raised.value)


async def test_429_waits_retry_after_and_holds_the_method_back(fake: FakeSlack) -> None:
    fake.scripted["chat.postMessage"].extend([rate_limited("0.2"), rate_limited("0.1")])
    async with api(fake) as client:
        ts = await client.post_message("C1", text="hello")
    assert fake.messages["C1", ts]["text"] == "hello"
    first, second, third = (c.at for c in fake.calls_of("chat.postMessage"))
    assert second - first >= 0.2 and third - second >= 0.1


async def test_5xx_and_internal_errors_back_off_then_fail_with_the_last_answer(
    fake: FakeSlack,
) -> None:
    fake.scripted["auth.test"].extend(
        [(503, {}, {"ok": False}), (200, {}, {"ok": False, "error": "internal_error"})] * 3
    )
    async with api(fake, retries=2) as client:
        with pytest.raises(ApiError) as raised:
            await client.auth_test()
    assert len(fake.calls_of("auth.test")) == 3
    assert raised.value.status == 503


async def test_every_call_is_bounded_by_the_timeout(fake: FakeSlack) -> None:
    fake.scripted["auth.test"].extend([(200, {}, Ellipsis)] * 2)
    async with api(fake, timeout=0.2, retries=1) as client:
        with trio.fail_after(WAIT), pytest.raises(ApiError) as raised:
            await client.auth_test()
    assert "no answer" in raised.value.error and raised.value.status == 0
    assert len(fake.calls_of("auth.test")) == 2


async def test_updates_waiting_on_a_rate_limit_coalesce_to_the_latest_state(
    fake: FakeSlack,
) -> None:
    async with api(fake) as client:
        ts = await client.post_message("C1", text="v0")
        fake.scripted["chat.update"].extend([rate_limited("0.3")] * 3)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(lambda: client.update_message("C1", ts, text="v1"))
            await fake.wait_until(lambda: fake.calls_of("chat.update"))
            for n in range(2, 30):  # a long turn keeps producing states meanwhile
                await client.update_message("C1", ts, text=f"v{n}")
    sent = [c.args["text"] for c in fake.calls_of("chat.update")]
    # v1 refused three times, then only the newest state went out: nothing queued behind it
    assert sent == ["v1", "v29", "v29", "v29"]
    assert fake.messages["C1", ts]["text"] == "v29"
    assert client.updates.superseded >= 28


async def test_an_update_storm_of_429s_gives_up_after_its_rate_retries(fake: FakeSlack) -> None:
    async with api(fake, rate_retries=2) as client:
        ts = await client.post_message("C1", text="v0")
        fake.scripted["chat.update"].extend([rate_limited("0.01")] * 5)
        with pytest.raises(RateLimited):
            await client.update_message("C1", ts, text="v1")
        assert not client.updates.sending(("C1", ts))
        await client.update_message("C1", ts, text="v2")  # the next state goes out
    assert fake.messages["C1", ts]["text"] == "v2"


async def test_no_log_line_carries_the_token(
    fake: FakeSlack, caplog: pytest.LogCaptureFixture
) -> None:
    fake.scripted["auth.test"].append(rate_limited("0.01"))
    with caplog.at_level(logging.DEBUG):
        async with api(fake) as client:
            await client.auth_test()
            ts = await client.post_message("C1", text="x")
            await client.update_message("C1", ts, text="y")
    assert any(r.name.startswith("httpcore") for r in caplog.records), "httpcore logged nothing"
    for record in caplog.records:
        assert BOT_TOKEN not in record.getMessage() + repr(vars(record)), record


async def test_a_quiet_client_is_swapped_for_a_fresh_one_and_its_connections_closed(
    fake: FakeSlack,
) -> None:
    """Issue 28 s.3: ``went_quiet`` closes an idle client's pooled connections (a fresh client
    takes its place); the next call connects again."""
    async with api(fake) as web:
        async with trio.open_nursery() as nursery:
            for _ in range(3):
                nursery.start_soon(web.auth_test)
        assert fake.http_open >= 1
        accepted = fake.http_accepted
        await web.went_quiet()
        await wait_until(lambda: fake.http_open == 0, timeout=5)
        assert (await web.auth_test()).user_id == BOT_USER
        assert fake.http_accepted == accepted + 1


async def test_a_client_with_a_call_on_its_way_is_kept_when_told_it_is_quiet(
    fake: FakeSlack,
) -> None:
    async with api(fake, timeout=30.0) as web:
        await web.auth_test()
        fake.scripted["auth.test"].append((200, {}, ...))  # never answered
        ended: list[object] = []

        async def held() -> None:
            try:
                ended.append(await web.auth_test())
            except ApiError as error:
                ended.append(error)

        async with trio.open_nursery() as nursery:
            nursery.start_soon(held)
            await wait_until(lambda: len(fake.calls_of("auth.test")) == 2, timeout=5)
            await web.went_quiet()
            await trio.sleep(0.2)
            assert ended == []  # its connection was not closed under it
            nursery.cancel_scope.cancel()
        accepted = fake.http_accepted
        await web.went_quiet()  # nothing on its way now
        assert (await web.auth_test()).user_id == BOT_USER
        assert fake.http_accepted == accepted + 1
