"""The Slack bot served end to end: a real host process serving ``transports.slack`` against the
fake Slack (``tests/support/fake_slack.py``) on loopback, the envelopes Slack pushes
(messages, button clicks) and what the tests read back (words, buttons)."""

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

from .fake_slack import (
    APP_TOKEN,
    BOT_TOKEN,
    FakeSlack,
    events_api,
    fake_slack,
)
from .host import HOST_PROCESS, sandboxed
from .model_server import FakeModel
from .processes import processes_with_home_under
from .real_agents import write_real_agents_config
from .robota import Robota

OWNER = "U0ALICE"


CHANNEL = "D0ALICE"


BOUND = 120.0
"""Seconds any one wait may take (agent start-up included); reached only when broken."""


_clock = iter(range(100, 1_000_000))


def now_ts() -> str:
    """A fresh, unique message ``ts`` (Slack's are epoch seconds with 6 decimals)."""
    return f"{int(time.time())}.{next(_clock):06d}"


class Served:
    """The host process and what the test reads of it."""

    def __init__(
        self,
        fake: FakeSlack,
        model: FakeModel,
        socket: Path,
        log: Path | None = None,
        robota: Robota | None = None,
    ) -> None:
        self.fake = fake
        self.model = model
        self.socket = socket
        self.log = log
        """The host's log file (``robota.log``)."""
        self.robota = robota
        """The sandbox's ``robota`` (its CLI against this host), when ``served`` made it."""

    def prompts(self, text: str) -> int:
        return sum(1 for r in self.model.model_requests() if r.prompt == text)

    def replies(self, ts: str, channel: str = CHANNEL) -> list[dict[str, Any]]:
        """The bot's messages in the thread of ``ts``, in the order they were posted."""
        return [
            m
            for (c, _), m in sorted(self.fake.messages.items())
            if c == channel and m.get("thread_ts") == ts
        ]

    def reactions(self, ts: str, channel: str = CHANNEL) -> set[str]:
        return {name for c, t, name in self.fake.reactions if (c, t) == (channel, ts)}

    def updates_of(self, ts: str) -> list[Any]:
        return [c for c in self.fake.calls_of("chat.update") if c.args.get("ts") == ts]

    async def push(self, event: dict[str, Any], **envelope: Any) -> str:
        frame = events_api(event, **envelope)
        await self.fake.push(frame)
        return str(frame["envelope_id"])

    async def acked(self, envelope_id: str) -> None:
        await self.fake.wait_until(
            lambda: {"envelope_id": envelope_id} in self.fake.acks, timeout=BOUND
        )

    async def status(self) -> Any:
        def call() -> Any:
            with ControlClient(self.socket, timeout=BOUND) as client:
                return client.call("server.status")

        return await trio.to_thread.run_sync(call)

    def finals(self, ts: str) -> list[dict[str, Any]]:
        """The final answer's messages in the thread of ``ts`` (a ``markdown`` block each)."""
        return [m for m in self.replies(ts) if any(b["type"] == "markdown" for b in m["blocks"])]

    async def ended(self, ts: str) -> None:
        """Until the message ``ts`` has ✅ and no progress message of its thread runs."""
        await self.fake.wait_until(
            lambda: (
                self.reactions(ts) == {"white_check_mark"}
                and not any("⏳" in words(m) for m in self.replies(ts))
            ),
            timeout=BOUND,
        )

    async def answered(self, ts: str, channel: str = CHANNEL) -> None:
        """Until the turn of ``ts`` is over: eyes replaced by a done/error reaction."""
        await self.fake.wait_until(
            lambda: (
                len(self.replies(ts, channel)) >= 2
                and "eyes" not in self.reactions(ts, channel)
                and self.reactions(ts, channel)
            ),
            timeout=BOUND,
        )


def configure(robota_home: Path, api_url: str) -> None:
    config = json.loads((robota_home / "config.yaml").read_text())
    config["transports"] = {
        "slack": {
            "botToken": "${SLACK_BOT_TOKEN}",
            "appToken": "${SLACK_APP_TOKEN}",
            "userId": OWNER,
            "apiUrl": api_url,
        }
    }
    (robota_home / "config.yaml").write_text(json.dumps(config, indent=2))
    env = robota_home / ".env"
    env.write_text(f"SLACK_BOT_TOKEN={BOT_TOKEN}\nSLACK_APP_TOKEN={APP_TOKEN}\n")
    env.chmod(0o600)


@asynccontextmanager
async def host_process(
    robota: Robota, fake: FakeSlack, log_path: Path, *, connects: bool = True
) -> AsyncIterator[trio.Process]:
    """``run_host`` as a process, once Socket Mode is up (``connects`` off: not waited for)
    and its endpoint answers; stopped with SIGTERM at the end."""
    socket = resolve_profile({"ROBOTA_HOME": str(robota.home)}).control_socket
    connections = len(fake.connections)
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
                # A new Socket Mode connection first: a killed host leaves its socket file.
                if connects:
                    await fake.wait_until(
                        lambda: len(fake.connections) > connections, timeout=BOUND
                    )
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
    async with fake_slack() as fake:
        configure(robota.home, fake.api_url)
        async with host_process(robota, fake, short_root / "host.log") as process:
            yield Served(fake, model, profile.control_socket, profile.default_log_path, robota)
    assert process.returncode == 0, (short_root / "host.log").read_text()[-4000:]
    assert processes_with_home_under(short_root / "agents") == []


@asynccontextmanager
async def restartable(short_root: Path, model: FakeModel) -> AsyncIterator[tuple[Robota, Served]]:
    """A sandbox against the fake Slack for hosts a test starts (``host_process``, logging to
    ``short_root / "host.log"``), kills and starts again; no agent is left at the end."""
    robota, profile = sandboxed(short_root, model, "codex-acp")
    async with fake_slack() as fake:
        configure(robota.home, fake.api_url)
        yield robota, Served(fake, model, profile.control_socket, profile.default_log_path)
    assert processes_with_home_under(short_root / "agents") == []


def words(message: dict[str, Any]) -> str:
    return json.dumps([message.get("text"), message.get("blocks")], ensure_ascii=False).lower()


def buttons(message: dict[str, Any]) -> dict[str, str]:
    """Button text -> value (the token) of a message's blocks."""
    return {
        e["text"]["text"]: e["value"]
        for b in message.get("blocks", ())
        if b.get("type") == "actions"
        for e in b["elements"]
        if e.get("type") == "button"
    }


def click(user: str, channel: str, ts: str, value: str) -> dict[str, Any]:
    return {
        "envelope_id": f"click-{user}-{value[:8]}",
        "type": "interactive",
        "payload": {
            "type": "block_actions",
            "user": {"id": user, "username": user.lower(), "name": user.lower(), "team_id": "T"},
            "api_app_id": "A0FAKE",
            "trigger_id": "1337.42.abc",
            "container": {
                "type": "message",
                "message_ts": ts,
                "channel_id": channel,
                "is_ephemeral": False,
            },
            "channel": {"id": channel, "name": "directmessage"},
            "actions": [{"action_id": "a_x", "block_id": "b", "value": value, "type": "button"}],
        },
        "accepts_response_payload": False,
        "retry_attempt": 0,
        "retry_reason": "",
    }


def _answers(socket: Path) -> bool:
    if not socket.is_socket():
        return False
    try:
        with ControlClient(socket, timeout=BOUND) as client:
            client.call("server.status")
    except OSError:
        return False
    return True
