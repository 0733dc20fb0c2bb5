"""The Feishu bot served end to end: a real host process serving ``transports.feishu`` against
the fake platform (``tests/support/fake_feishu.py``) on loopback, the events the
platform pushes (messages, card clicks) and what the tests read back (cards, patches, buttons)."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import trio

from robota.core.config import resolve_profile
from robota.core.control import ControlClient

from .fake_feishu import (
    APP_ID,
    APP_SECRET,
    FakePlatform,
    Sent,
    fake_platform,
)
from .host import HOST_PROCESS, sandboxed
from .model_server import FakeModel
from .processes import processes_with_home_under
from .real_agents import write_real_agents_config
from .robota import Robota

OWNER = "ou_owner"

BOT = "ou_fakebot"
"""What the fake's ``/open-apis/bot/v3/info`` says."""

BOUND = 120.0
"""Seconds any one wait may take (agent start-up included); reached only when broken."""


def message_event(
    n: int,
    text: str,
    *,
    sender: str = OWNER,
    chat_id: str = "oc_p2p1",
    chat_type: str = "p2p",
    thread_id: str = "",
    created: float | None = None,
    event_id: str | None = None,
    mention_bot: bool = False,
) -> dict[str, Any]:
    created_ms = str(int((time.time() if created is None else created) * 1000))
    return {
        "schema": "2.0",
        "header": {
            "event_id": event_id or f"ev{n}",
            "event_type": "im.message.receive_v1",
            "create_time": created_ms,
            "tenant_key": "tenant",
            "app_id": APP_ID,
            "token": "",
        },
        "event": {
            "sender": {
                "sender_id": {"open_id": sender, "union_id": "on_x", "user_id": ""},
                "sender_type": "user",
                "tenant_key": "tenant",
            },
            "message": {
                "message_id": f"om_user{n}",
                "root_id": "",
                "parent_id": "",
                "create_time": created_ms,
                "update_time": created_ms,
                "chat_id": chat_id,
                "thread_id": thread_id,
                "chat_type": chat_type,
                "message_type": "text",
                "content": json.dumps({"text": f"@_user_1 {text}" if mention_bot else text}),
                "mentions": [
                    {"key": "@_user_1", "id": {"open_id": BOT}, "name": "Bot", "tenant_key": "t"}
                ]
                if mention_bot
                else [],
            },
        },
    }


def click_event(n: int, token: str, card_id: str, *, operator: str = OWNER) -> dict[str, Any]:
    return {
        "schema": "2.0",
        "header": {
            "event_id": f"click{n}",
            "event_type": "card.action.trigger",
            "create_time": str(int(time.time() * 1000)),
            "tenant_key": "tenant",
            "app_id": APP_ID,
            "token": "",
        },
        "event": {
            "operator": {
                "open_id": operator,
                "tenant_key": "tenant",
                "union_id": "",
                "user_id": "",
            },
            "token": "c-delayed",
            "action": {"value": {"token": token}, "tag": "button"},
            "host": "im_message",
            "context": {"open_message_id": card_id, "open_chat_id": "oc_p2p1"},
        },
    }


class Served:
    """The host process and what the test reads of it."""

    def __init__(
        self, fake: FakePlatform, model: FakeModel, socket: Path, robota: Robota | None = None
    ) -> None:
        self.fake = fake
        self.model = model
        self.socket = socket
        self.robota = robota

    def prompts(self, text: str) -> int:
        return sum(1 for r in self.model.model_requests() if r.prompt == text)

    def cards_for(self, message_id: str) -> list[Sent]:
        return [
            m
            for m in self.fake.messages
            if m.reply_to == message_id and m.msg_type == "interactive"
        ]

    def finals_for(self, message_id: str) -> list[Sent]:
        return [m for m in self.fake.messages if m.reply_to == message_id and m.msg_type == "post"]

    async def status(self) -> Any:
        def call() -> Any:
            with ControlClient(self.socket, timeout=BOUND) as client:
                return client.call("server.status")

        return await trio.to_thread.run_sync(call)

    async def answered(self, message_id: str) -> None:
        """Until the turn of ``message_id`` is over: its final sent, OnIt replaced."""
        await self.fake.wait_until(
            lambda: (
                self.finals_for(message_id) and "OnIt" not in self.fake.reactions_on(message_id)
            ),
            timeout=BOUND,
        )


def configure(robota_home: Path, domain: str, **settings: object) -> None:
    """``transports.feishu`` for the fake at ``domain``, plus ``settings`` (more of its keys)."""
    config = json.loads((robota_home / "config.yaml").read_text())
    config["transports"] = {
        "feishu": {
            "appId": APP_ID,
            "appSecret": "${FEISHU_APP_SECRET}",
            "userOpenId": OWNER,
            "domain": domain,
            **settings,
        }
    }
    (robota_home / "config.yaml").write_text(json.dumps(config, indent=2))
    env = robota_home / ".env"
    env.write_text(f"FEISHU_APP_SECRET={APP_SECRET}\n")
    env.chmod(0o600)


@asynccontextmanager
async def host_process(
    robota: Robota, fake: FakePlatform, log_path: Path
) -> AsyncIterator[trio.Process]:
    """``run_host`` as a process, once its long connection is up and its endpoint answers;
    stopped with SIGTERM at the end unless the test ended it otherwise."""
    connections = len(fake.connections)
    socket = resolve_profile({"ROBOTA_HOME": str(robota.home)}).control_socket
    with log_path.open("ab") as log:
        process = await trio.lowlevel.open_process(
            [sys.executable, str(HOST_PROCESS)],
            env=robota.environment(None, ()),
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        try:
            with trio.fail_after(BOUND):
                await fake.wait_until(lambda: len(fake.connections) > connections, timeout=BOUND)
                while not _answers(socket):
                    assert process.poll() is None, log_path.read_text()
                    await trio.sleep(0.05)
            yield process
        finally:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
                with trio.move_on_after(BOUND):
                    await process.wait()
            if process.poll() is None:
                process.kill()
                await process.wait()


@asynccontextmanager
async def served(
    short_root: Path, model: FakeModel, *, ask: bool = False, agent: str = "codex-acp"
) -> AsyncIterator[Served]:
    robota, profile = sandboxed(short_root, model, agent)
    if ask:  # the agent asks before it runs a command
        write_real_agents_config(robota, [agent], model.url, ask=True)
    async with fake_platform() as fake:
        configure(robota.home, fake.domain)
        async with host_process(robota, fake, short_root / "host.log") as process:
            yield Served(fake, model, profile.control_socket, robota)
    assert process.returncode == 0, (short_root / "host.log").read_text()[-4000:]
    assert processes_with_home_under(short_root / "agents") == []


def last_patch(fake: FakePlatform, card_id: str) -> dict[str, Any]:
    patches = [p for p in fake.patched if p.message_id == card_id]
    assert patches, f"card {card_id} was never PATCHed"
    return dict(patches[-1].content)


def is_terminal(card: dict[str, Any], template: str) -> bool:
    header = card.get("header", {})
    words = json.dumps(header, ensure_ascii=False).lower()
    return (
        card.get("config", {}).get("streaming_mode") is not True
        and header.get("template") == template
        and not any(w in words for w in ("running", "working", "in progress"))
    )


def _buttons(fake: FakePlatform, card: Sent) -> dict[str, str]:
    """Label -> token of the buttons the card shows now (its last PATCH, or as sent)."""
    patches = [p.content for p in fake.patched if p.message_id == card.message_id]
    content = patches[-1] if patches else card.content
    return {b["text"]["content"]: b["behaviors"][0]["value"]["token"] for b in buttons_in(content)}


def buttons_in(content: object) -> list[dict[str, Any]]:
    """Every button of a card, in order."""
    found: list[dict[str, Any]] = []

    def walk(node: object) -> None:
        if isinstance(node, dict):
            if node.get("tag") == "button":
                found.append(node)
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(content)
    return found


def _answers(socket: Path) -> bool:
    if not socket.is_socket():
        return False
    try:
        with ControlClient(socket, timeout=BOUND) as client:
            client.call("server.status")
    except OSError:
        return False
    return True
