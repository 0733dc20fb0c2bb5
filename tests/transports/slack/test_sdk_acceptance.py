"""The fake is proven against the real client: the official SDK (``slack_sdk``) calls the
fake's Web API (answers, ``SlackApiError`` on ``invalid_blocks``, a thread read after
``oldest`` page by page through its cursor, with a post's metadata; a private channel made,
a person invited, Slack's refusals of both, the channel archived) and its builtin Socket Mode
client connects, receives ``events_api`` envelopes, acknowledges them as Slack expects, and
follows a ``refresh_requested`` disconnect to a fresh URL. If the fake's shapes were off, the
SDK would refuse them, and our own client's tests against the fake would prove nothing."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import trio

from ...support.fake_slack import (
    APP_TOKEN,
    BOT_TOKEN,
    BOT_USER,
    WAIT,
    FakeSlack,
    dm,
    events_api,
    fake_slack,
)
from ...support.json_lines import JsonLines

SDK_CLIENT = Path(__file__).with_name("sdk_client.py")
STARTUP = 120.0


@pytest.fixture
async def fake() -> AsyncIterator[FakeSlack]:
    async with fake_slack() as slack:
        yield slack


async def test_the_official_sdk_talks_to_the_fake_and_receives_an_event(fake: FakeSlack) -> None:
    env = {**os.environ, "FAKE_SLACK_BOT_TOKEN": BOT_TOKEN, "FAKE_SLACK_APP_TOKEN": APP_TOKEN}
    process = await trio.lowlevel.open_process(
        [sys.executable, str(SDK_CLIENT), fake.api_url],
        stdout=subprocess.PIPE,
        env=env,
        start_new_session=True,
    )
    try:
        assert process.stdout is not None
        # Each line within STARTUP: the first comes after the child imported slack_sdk, which a
        # loaded machine can make slow (lark_oapi's import took 19 s on one).
        lines = JsonLines(process.stdout, timeout=STARTUP)
        assert await lines.next() == {"kind": "auth.test", "user_id": BOT_USER}
        posted = await lines.next()
        assert posted["kind"] == "posted" and posted["thread_ts"] == "1796015967.000001"
        assert fake.messages["D0ALICE", posted["ts"]]["text"] == "done"
        assert ("D0ALICE", "1796015967.000001", "eyes") in fake.reactions
        refused = await lines.next()
        assert refused["kind"] == "refused" and refused["error"] == "invalid_blocks"
        assert refused["errors"] == ["must provide no more than 50 items [json-pointer:/blocks]"]
        replies = await lines.next()
        assert replies["kind"] == "replies"
        # After ``oldest`` only (the progress message posted first is not), a page at a time.
        assert replies["pages"] == [
            [
                [
                    replies["first"],
                    {"event_type": "robota_card", "event_payload": {"key": "t1:slack:card"}},
                ]
            ],
            [[replies["later"][0], None]],
            [[replies["later"][1], None]],
        ]
        channel = await lines.next()
        assert channel == {
            "kind": "channel",
            "id": channel["id"],
            "name": "shop-api",
            "is_private": True,
            "invited": channel["id"],
            "refusals": [
                "name_taken",
                "invalid_name_specials",
                "already_in_channel",
                "user_not_found",
            ],
            "archived": True,
        }
        assert fake.members[channel["id"]] == ["U0ALICE"]
        assert fake.channels[channel["id"]]["is_archived"]
        assert await lines.next() == {"kind": "connected"}
        (opened,) = fake.calls_of("apps.connections.open")
        assert opened.headers["authorization"] == f"Bearer {APP_TOKEN}"

        for n, text in enumerate(["hello", "after a refresh"]):
            await fake.wait_until(lambda n=n: len(fake.connections) == n + 1)
            envelope = events_api(dm(text), event_id=f"Ev{n}")
            await fake.push(envelope)
            assert await lines.next() == {
                "kind": "envelope",
                "type": "events_api",
                "envelope_id": envelope["envelope_id"],
                "text": text,
            }
            await fake.wait_until(lambda n=n: fake.connections[n].acks)
            assert fake.connections[n].acks == [
                json.dumps({"envelope_id": envelope["envelope_id"]})
            ]
            if n == 0:
                await fake.disconnect("refresh_requested")
        assert len(fake.calls_of("apps.connections.open")) == 2  # a fresh URL for the new one
    finally:
        os.killpg(process.pid, signal.SIGKILL)  # our own child's group
        with trio.fail_after(WAIT):
            await process.wait()
        if process.stdout is not None:
            await process.stdout.aclose()
