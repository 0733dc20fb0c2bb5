"""The fake is proven against the real client: the official SDK (``lark-oapi``) connects to it,
pings, receives a fragmented message event and a card callback, and ACKs both as the
platform expects. If the fake's endpoint answer, frames or ACK handling were off, the SDK
would refuse it, and our own client's end-to-end tests would prove nothing."""

from __future__ import annotations

import base64
import json
import os
import signal
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import trio

from ...support.fake_feishu import APP_ID, APP_SECRET, SERVICE_ID, WAIT, FakePlatform, fake_platform
from ...support.json_lines import JsonLines

SDK_CLIENT = Path(__file__).with_name("sdk_client.py")
STARTUP = 120.0


@pytest.fixture
async def fake() -> AsyncIterator[FakePlatform]:
    async with fake_platform() as platform:
        yield platform


def message_event(text: str) -> dict[str, object]:
    return {
        "schema": "2.0",
        "header": {
            "event_id": "ev-1",
            "event_type": "im.message.receive_v1",
            "create_time": "1796015960024",
            "token": "",
            "app_id": APP_ID,
            "tenant_key": "tenant",
        },
        "event": {
            "sender": {"sender_id": {"open_id": "ou_owner"}, "sender_type": "user"},
            "message": {
                "message_id": "om_1",
                "chat_id": "oc_1",
                "chat_type": "p2p",
                "message_type": "text",
                "create_time": "1796015960024",
                "content": json.dumps({"text": text}),
            },
        },
    }


def card_event() -> dict[str, object]:
    return {
        "schema": "2.0",
        "header": {
            "event_id": "ev-2",
            "event_type": "card.action.trigger",
            "create_time": "1796015960024",
            "token": "",
            "app_id": APP_ID,
            "tenant_key": "tenant",
        },
        "event": {
            "operator": {"open_id": "ou_owner"},
            "token": "c-1",
            "action": {"value": {"action": "stop"}, "tag": "button"},
            "context": {"open_message_id": "om_card", "open_chat_id": "oc_1"},
        },
    }


async def test_the_official_sdk_connects_to_the_fake_and_acks_its_events(
    fake: FakePlatform,
) -> None:
    env = {**os.environ, "FAKE_FEISHU_APP_ID": APP_ID, "FAKE_FEISHU_APP_SECRET": APP_SECRET}
    process = await trio.lowlevel.open_process(
        [sys.executable, str(SDK_CLIENT), fake.domain],
        stdout=subprocess.PIPE,
        env=env,
        start_new_session=True,
    )
    try:
        assert process.stdout is not None
        lines = JsonLines(process.stdout, timeout=WAIT)
        # The child imports lark_oapi first: about a second on an idle machine, 19 s measured
        # on a loaded 2-core one, so this first wait is bounded by STARTUP, not WAIT.
        await fake.wait_until(lambda: fake.connections and fake.current.pings, timeout=STARTUP)
        assert fake.current.pings[0].service == SERVICE_ID
        assert json.loads(fake.calls("/callback/ws/endpoint")[0].body)["AppSecret"] == APP_SECRET

        text = "run the tests " + "x" * 3000
        message_id = await fake.push_event(message_event(text), fragments=3)
        got = await lines.next()
        assert got == {
            "kind": "message",
            "message_id": "om_1",
            "content": json.dumps({"text": text}),
        }
        await fake.wait_until(lambda: fake.acks)
        ack = fake.acks[0]
        assert ack.header("message_id") == message_id and ack.header("biz_rt") is not None
        assert json.loads(ack.payload or b"") == {"code": 200}

        await fake.push_event(card_event())
        assert await lines.next() == {"kind": "card", "value": {"action": "stop"}}
        await fake.wait_until(lambda: len(fake.acks) == 2)
        answer = json.loads(fake.acks[1].payload or b"")
        assert answer["code"] == 200
        toast = json.loads(base64.b64decode(answer["data"]))
        assert toast["toast"] == {"type": "info", "content": "stopping"}
    finally:
        os.killpg(process.pid, signal.SIGKILL)  # our own child's group: the SDK has no stop()
        with trio.fail_after(WAIT):
            await process.wait()
        if process.stdout is not None:
            await process.stdout.aclose()
