"""The bot end to end: a real host process (``run_host``, as ``robota server run`` runs it) with
a real agent against the fake model, serving ``transports.slack`` against the fake Slack on
loopback. The Slack side is the test's: it pushes envelopes over Socket Mode as Slack does and
records every Web API call, message, reaction and acknowledgement."""

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

from ...cli._robota import Robota
from ...cli.test_doctor import processes_with_home_under, write_real_agents_config
from ...host.test_host import HOST_PROCESS, sandboxed
from ...support.model_server import FakeModel
from .fake_slack import APP_TOKEN, BOT_TOKEN, BOT_USER, FakeSlack, dm, events_api, fake_slack

OWNER = "U0ALICE"
CHANNEL = "D0ALICE"
BOUND = 120.0
"""Seconds any one wait may take (agent start-up included); reached only when broken."""


# ``model`` and ``short_root``: tests/transports/conftest.py


_clock = iter(range(100, 1_000_000))


def now_ts() -> str:
    """A fresh, unique message ``ts`` (Slack's are epoch seconds with 6 decimals)."""
    return f"{int(time.time())}.{next(_clock):06d}"


class Served:
    """The host process and what the test reads of it."""

    def __init__(
        self, fake: FakeSlack, model: FakeModel, socket: Path, log: Path | None = None
    ) -> None:
        self.fake = fake
        self.model = model
        self.socket = socket
        self.log = log
        """The host's log file (``robota.log``)."""

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


def _answers(socket: Path) -> bool:
    if not socket.is_socket():
        return False
    try:
        with ControlClient(socket, timeout=BOUND) as client:
            client.call("server.status")
    except OSError:
        return False
    return True


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
async def served(short_root: Path, model: FakeModel, *, ask: bool = False) -> AsyncIterator[Served]:
    robota, profile = sandboxed(short_root, model, "codex-acp")
    if ask:  # the agent asks before it runs a command
        write_real_agents_config(robota, ["codex-acp"], model.url, ask=True)
    async with fake_slack() as fake:
        configure(robota.home, fake.api_url)
        async with host_process(robota, fake, short_root / "host.log") as process:
            yield Served(fake, model, profile.control_socket, profile.default_log_path)
    assert process.returncode == 0, (short_root / "host.log").read_text()[-4000:]
    assert processes_with_home_under(short_root / "agents") == []


def words(message: dict[str, Any]) -> str:
    return json.dumps([message.get("text"), message.get("blocks")], ensure_ascii=False).lower()


async def test_an_owners_dm_gets_eyes_one_progress_message_and_one_final(
    short_root: Path, model: FakeModel
) -> None:
    async with served(short_root, model) as bot:
        fake = bot.fake
        # Readiness: Socket Mode is up and auth.test succeeded.
        with trio.fail_after(BOUND):
            while not (status := await bot.status())["ready"]:
                await trio.sleep(0.05)
        assert status["transports"] == [{"name": "slack", "state": "connected"}]
        assert fake.calls_of("auth.test"), "the bot's user id comes from auth.test"
        # No conversation is known yet: the start-up note went to the owner's DM.
        await fake.wait_until(lambda: fake.calls_of("chat.postMessage"), timeout=BOUND)
        (opened,) = fake.calls_of("conversations.open")
        assert opened.args["users"] == OWNER
        (note,) = [m for (c, _), m in fake.messages.items() if c == CHANNEL]
        assert "online" in words(note) and "thread_ts" not in note

        ts = now_ts()
        envelope = await bot.push(dm("hello slack", ts=ts), event_id="EvDM1")
        await bot.acked(envelope)
        await bot.answered(ts)
        assert bot.prompts("hello slack") == 1, "the text reached the agent"
        # eyes came before the agent asked the model anything: its call precedes the post.
        eyes = [
            c
            for c in fake.calls_of("reactions.add")
            if c.args.get("name") == "eyes" and c.args.get("timestamp") == ts
        ]
        assert len(eyes) == 1
        posts = [c for c in fake.calls_of("chat.postMessage") if c.args.get("thread_ts") == ts]
        assert eyes[0].at <= posts[0].at

        progress, final = bot.replies(ts)
        assert len(bot.replies(ts)) == 2, "one progress message and one final, in the thread"
        assert bot.updates_of(progress["ts"]), "the progress message was updated"
        assert "edited" in progress
        assert not any(w in words(progress) for w in ("working", "running", "⏳")), progress
        assert "✅" in words(progress), "its final state says done"
        assert "echo: hello slack" in words(final), final
        assert any(b.get("type") == "markdown" for b in final["blocks"]), final
        assert bot.reactions(ts) == {"white_check_mark"}

        # `!status` is the engine's /status (Slack keeps a leading / for itself).
        command_ts = now_ts()
        await bot.push(dm("!status", ts=command_ts), event_id="EvStatus")
        await fake.wait_until(
            lambda: bot.replies(command_ts) and bot.reactions(command_ts) == {"white_check_mark"},
            timeout=BOUND,
        )
        (reply,) = bot.replies(command_ts)
        assert "codex" in words(reply), reply
        assert bot.prompts("!status") == 0 and bot.prompts("/status") == 0


async def test_strangers_duplicates_and_channel_chatter_start_no_turn(
    short_root: Path, model: FakeModel
) -> None:
    async with served(short_root, model) as bot:
        fake = bot.fake
        # A non-owner's DM: acknowledged, no reaction, no message, no turn.
        stranger_ts = now_ts()
        stranger = await bot.push(
            dm("hello from a stranger", user="U0BOB", ts=stranger_ts), event_id="EvBob"
        )
        # A channel message that does not mention the bot, and one that mentions someone else.
        chatter_ts, other_ts = now_ts(), now_ts()
        chatter = {**dm("just chatting", ts=chatter_ts), "channel": "C0GEN"}
        chatter["channel_type"] = "channel"
        other = {**dm("<@U0CAROL> look", ts=other_ts), "channel": "C0GEN"}
        other["channel_type"] = "channel"
        ignored = [stranger, await bot.push(chatter, event_id="EvChat")]
        ignored.append(await bot.push(other, event_id="EvOther"))
        # The same event twice (a retry_attempt redelivery): one turn.
        twice_ts = now_ts()
        await bot.push(dm("only once", ts=twice_ts), event_id="EvTwice")
        await bot.push(
            dm("only once", ts=twice_ts),
            event_id="EvTwice",
            retry_attempt=1,
            retry_reason="timeout",
        )
        # A channel message that mentions the bot, delivered as message and app_mention.
        mention_ts = now_ts()
        mention = {**dm(f"<@{BOT_USER}> in the channel", ts=mention_ts), "channel": "C0GEN"}
        mention["channel_type"] = "channel"
        await bot.push(mention, event_id="EvMention")
        app_mention = {**mention, "type": "app_mention"}
        del app_mention["channel_type"]
        await bot.push(app_mention, event_id="EvAppMention")

        await bot.answered(twice_ts)
        await bot.answered(mention_ts, "C0GEN")
        for envelope in ignored:
            await bot.acked(envelope)
        assert bot.prompts("only once") == 1 and len(bot.replies(twice_ts)) == 2
        assert bot.prompts("in the channel") == 1, "the mention stripped, one turn for the pair"
        assert len(bot.replies(mention_ts, "C0GEN")) == 2
        assert bot.prompts("hello from a stranger") == 0
        assert bot.reactions(stranger_ts) == set() and bot.replies(stranger_ts) == []
        for ts in (chatter_ts, other_ts):
            assert bot.reactions(ts, "C0GEN") == set() and bot.replies(ts, "C0GEN") == []
        assert len(fake.connections) == 1, "the socket kept working through it all"


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


async def test_an_approval_is_answered_by_the_owners_button_not_a_strangers(
    short_root: Path, model: FakeModel
) -> None:
    async with served(short_root, model, ask=True) as bot:
        fake = bot.fake
        ts = now_ts()
        await bot.push(dm("SHELL: touch made.txt && echo made", ts=ts), event_id="EvAsk")

        def progress() -> dict[str, Any] | None:
            replies = bot.replies(ts)
            return replies[0] if replies else None

        await fake.wait_until(
            lambda: (p := progress()) is not None and "Allow once" in buttons(p), timeout=BOUND
        )
        first = progress()
        assert first is not None
        token = buttons(first)["Allow once"]
        (decline,) = (v for k, v in buttons(first).items() if k.lower().startswith("decline"))
        # Were the stranger's Decline taken, the command would not run and the owner's click
        # would find its approval answered: the final's "made" says it was refused.
        for frame in (
            click("U0BOB", CHANNEL, first["ts"], decline),
            click(OWNER, CHANNEL, first["ts"], "forged-token"),
        ):
            await fake.push(frame)
            await bot.acked(frame["envelope_id"])
        assert "Allow once" in buttons(first), "still waiting for the owner"
        assert bot.reactions(ts) == {"eyes"}
        owner = click(OWNER, CHANNEL, first["ts"], token)
        await fake.push(owner)
        await bot.acked(owner["envelope_id"])
        await bot.answered(ts)
        progress_message, final = bot.replies(ts)
        assert "made" in words(final), final
        assert "Allow once" not in buttons(progress_message), "an answered approval has no buttons"
        assert "✅" in words(progress_message)
        assert bot.reactions(ts) == {"white_check_mark"}


async def test_a_host_killed_mid_turn_answers_once_after_its_restart(
    short_root: Path, model: FakeModel
) -> None:
    robota, profile = sandboxed(short_root, model, "codex-acp")
    log = short_root / "host.log"
    async with fake_slack() as fake:
        configure(robota.home, fake.api_url)
        bot = Served(fake, model, profile.control_socket)
        ts = now_ts()
        async with host_process(robota, fake, log) as first:
            await bot.push(dm("SLOW crash me", ts=ts), event_id="EvCrash")
            # Mid-turn: the progress message is up and the model is streaming the answer.
            await fake.wait_until(lambda: bot.replies(ts), timeout=BOUND)
            await fake.wait_until(lambda: bot.prompts("SLOW crash me") == 1, timeout=BOUND)
            first.kill()
            await first.wait()
        (first_progress,) = bot.replies(ts)
        assert bot.reactions(ts) == {"eyes"}

        async with host_process(robota, fake, log) as second:
            await fake.wait_until(
                lambda: (
                    any("slow crash me" in words(m) for m in bot.replies(ts)[1:])
                    and bot.reactions(ts) == {"white_check_mark"}
                    # Nothing is left running: the killed run's progress message was closed.
                    and not any("⏳" in words(m) for m in bot.replies(ts))
                ),
                timeout=BOUND,
            )
            replies = bot.replies(ts)
            finals = [m for m in replies if any(b["type"] == "markdown" for b in m["blocks"])]
            assert len(finals) == 1, replies
            assert replies[0]["ts"] == first_progress["ts"]
            # The thread was told that the turn goes on after a restart.
            await fake.wait_until(
                lambda: any("restarted while this" in words(m) for m in bot.replies(ts)),
                timeout=BOUND,
            )
        assert second.returncode == 0, log.read_text()[-4000:]

        # A third start finds nothing left to settle: still one answer.
        count = len(bot.replies(ts))
        async with host_process(robota, fake, log):
            after = now_ts()
            await bot.push(dm("after the crash", ts=after), event_id="EvAfter")
            await bot.answered(after)
        assert len(bot.replies(ts)) == count
    assert processes_with_home_under(short_root / "agents") == []


async def test_stop_from_the_progress_message(short_root: Path, model: FakeModel) -> None:
    async with served(short_root, model) as bot:
        fake = bot.fake
        ts = now_ts()
        await bot.push(dm("SLOW please", ts=ts), event_id="EvSlow")
        await fake.wait_until(
            lambda: bot.replies(ts) and "Stop" in buttons(bot.replies(ts)[0]), timeout=BOUND
        )
        await fake.wait_until(lambda: bot.prompts("SLOW please") == 1, timeout=BOUND)
        progress = bot.replies(ts)[0]
        token = buttons(progress)["Stop"]
        owner = click(OWNER, CHANNEL, progress["ts"], token)
        await fake.push(owner)
        await bot.acked(owner["envelope_id"])
        await fake.wait_until(lambda: bot.reactions(ts) == {"no_entry_sign"}, timeout=BOUND)
        assert "Stop" not in buttons(progress), "a finished turn has no Stop button"
        assert "⏹️" in words(progress), progress
        finals = [m for m in bot.replies(ts) if m is not progress]
        assert len(finals) <= 1, "an interrupted turn sends at most its partial answer once"
