"""Faults through the host (a real host process, a real agent against the fake model, the
fake Slack): refused tokens, malformed Socket Mode input, a redelivery across a reconnect, a
silent socket, a stale event."""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path

import pytest
import trio

from ...support.fake_slack import APP_TOKEN, BOT_TOKEN, BOT_USER, dm, fake_slack
from ...support.host import sandboxed
from ...support.model_server import FakeModel
from ...support.processes import kill_processes_with_home_under, processes_with_home_under
from ...support.served_start import start_serve_and_stop
from ...support.slack import BOUND, CHANNEL, OWNER, Served, configure, host_process, now_ts, served

WRONG = {"bot": "xoxb-fake-9999-wrongbottoken", "app": "xapp-1-A0FAKE-wrongapptoken"}


@pytest.mark.parametrize("refused", ["bot", "app"])
async def test_a_refused_token_fails_the_transport_and_the_host_stays_up(
    short_root: Path, model: FakeModel, refused: str
) -> None:
    robota, profile = sandboxed(short_root, model, "codex-acp")
    log = short_root / "host.log"
    async with fake_slack() as fake:
        configure(robota.home, fake.api_url)
        env = robota.home / ".env"
        bot, app = (WRONG["bot"], APP_TOKEN) if refused == "bot" else (BOT_TOKEN, WRONG["app"])
        env.write_text(f"SLACK_BOT_TOKEN={bot}\nSLACK_APP_TOKEN={app}\n")
        served = Served(fake, model, profile.control_socket)
        async with host_process(robota, fake, log, connects=False) as process:

            def state() -> dict[str, object]:
                completed = robota.run("server", "status", "--json")
                assert completed.returncode == 0, completed.stderr
                return dict(json.loads(completed.stdout))

            with trio.fail_after(BOUND):
                while (status := await trio.to_thread.run_sync(state))["transports"] == [
                    {"name": "slack", "state": "connecting"}
                ]:
                    await trio.sleep(0.1)
            (slack,) = status["transports"]  # type: ignore[misc]
            assert slack["state"] == "failed", status
            reason = json.dumps(slack)
            assert "invalid_auth" in reason, status
            assert bot not in reason and app not in reason and "xox" not in reason
            assert status["ready"] is False
            assert fake.connections == [], "no Socket Mode with a refused token"
            # The host keeps serving its control endpoint (and exits cleanly on SIGTERM).
            assert (await served.status())["transports"][0]["state"] == "failed"
            assert process.poll() is None
        text = log.read_text() + profile.default_log_path.read_text()
        assert bot not in text and app not in text, "no token in the host's log"
        assert "invalid_auth" in text


async def test_malformed_input_and_a_reconnect_leave_the_host_serving_one_turn_each(
    short_root: Path, model: FakeModel
) -> None:
    async with served(short_root, model) as bot:
        fake = bot.fake
        first = fake.current
        # Garbage, an envelope without its payload, an event of a type nobody subscribed to.
        await fake.send_raw("{garbage")
        await fake.push({"envelope_id": "env-nopayload", "type": "events_api"})
        unknown = await bot.push(
            {"type": "pin_added", "user": OWNER, "channel_id": CHANNEL, "event_ts": now_ts()},
            event_id="EvPin",
        )
        for envelope in ("env-nopayload", unknown):
            await bot.acked(envelope)
        # Slack asks for a refresh: a new connection, then the old one's redelivery of an
        # event the bot already has (retry_attempt 1) runs no second turn.
        ts = now_ts()
        await bot.push(dm("before the refresh", ts=ts), event_id="EvRefresh")
        await bot.answered(ts)
        await fake.disconnect("refresh_requested")
        await fake.wait_until(lambda: len(fake.open_connections) == 1 and fake.current is not first)
        again = await bot.push(
            dm("before the refresh", ts=ts),
            event_id="EvRefresh",
            retry_attempt=1,
            retry_reason="timeout",
        )
        await bot.acked(again)
        later = now_ts()
        await bot.push(dm("after the refresh", ts=later), event_id="EvLater")
        await bot.answered(later)
        assert bot.prompts("before the refresh") == 1 and len(bot.replies(ts)) == 2
        assert bot.prompts("after the refresh") == 1
        assert first.closed_by is not None, "the old connection was closed"
        assert bot.log is not None
        log = bot.log.read_text()
        for reason in ("not json", "without a payload", "'pin_added' is not handled"):
            assert reason in log.lower(), f"no log line says {reason!r}"


async def test_a_silent_socket_is_replaced_and_the_next_turn_works(
    short_root: Path, model: FakeModel
) -> None:
    async with served(short_root, model) as bot:
        fake = bot.fake
        first = fake.current
        first.silent = True  # TCP stays open; no pong, no frame ever again
        # The watchdog: no frame for 3 ping intervals (10 s each) -> a new connection.
        await fake.wait_until(lambda: len(fake.connections) == 2, timeout=BOUND)
        assert first.pings >= 2, "it pinged before it gave up"
        ts = now_ts()
        await bot.push(dm("after the silence", ts=ts), event_id="EvSilent")
        await bot.answered(ts)
        assert bot.prompts("after the silence") == 1


def mention(text: str, channel: str, ts: str) -> dict[str, object]:
    event: dict[str, object] = {**dm(f"<@{BOT_USER}> {text}", ts=ts), "channel": channel}
    event["channel_type"] = "channel"
    return event


async def test_a_stale_event_is_not_answered_and_start_up_notes_go_to_recent_channels(
    short_root: Path, model: FakeModel
) -> None:
    robota, profile = sandboxed(short_root, model, "codex-acp")
    log = short_root / "host.log"
    async with fake_slack() as fake:
        configure(robota.home, fake.api_url)
        bot = Served(fake, model, profile.control_socket)
        async with host_process(robota, fake, log):
            # Ten minutes old (a redelivery of a message from before the host started).
            stale = f"{int(time.time()) - 600}.000042"
            stale_envelope = await bot.push(dm("an old message", ts=stale), event_id="EvOld")
            await bot.acked(stale_envelope)
            channels = {"C0GEN": now_ts(), "C0OLD": now_ts()}
            for channel, ts in channels.items():
                await bot.push(mention("hello channel", channel, ts), event_id=f"Ev{channel}")
            for channel, ts in channels.items():
                await bot.answered(ts, channel)
            assert bot.prompts("an old message") == 0
            assert bot.reactions(stale) == set() and bot.replies(stale) == []
        # C0OLD was last active an hour ago: not in the minute before the next start.
        db = sqlite3.connect(profile.default_sqlite_path)
        with db:
            db.execute(
                "UPDATE chat_contexts SET updated_at = updated_at - 3600 WHERE chat_id = ?",
                ("slack:C0OLD",),
            )
        db.close()
        before = set(fake.messages)
        async with host_process(robota, fake, log):
            await fake.wait_until(
                lambda: any(c == "C0GEN" for c, _ in set(fake.messages) - before), timeout=BOUND
            )
            # A turn after the notes: had C0OLD been due a note, it would be there by now
            # (the notes go out one after another, oldest channel last).
            after = now_ts()
            await bot.push(dm("after the restart", ts=after), event_id="EvAfter")
            await bot.answered(after)
        notes = {
            (c, ts): m
            for (c, ts), m in fake.messages.items()
            if (c, ts) not in before and m.get("thread_ts") != after
        }
        noted = sorted(c for c, _ in notes)
        assert noted == ["C0GEN", CHANNEL], "the owner's DM and the recently active channel"
        for note in notes.values():
            assert "online" in json.dumps(note).lower() and "thread_ts" not in note, note
        assert bot.prompts("an old message") == 0, "still not run after a restart"


async def test_server_start_returns_at_once_and_names_a_refused_app_token(
    short_root: Path, model: FakeModel
) -> None:
    robota, profile = sandboxed(short_root, model, "codex-acp")
    try:
        async with fake_slack() as fake:
            configure(robota.home, fake.api_url)
            (robota.home / ".env").write_text(
                f"SLACK_BOT_TOKEN={BOT_TOKEN}\nSLACK_APP_TOKEN={WRONG['app']}\n"
            )
            secrets = (BOT_TOKEN, WRONG["app"], "xox")
            await trio.to_thread.run_sync(
                start_serve_and_stop, robota, "slack", "failed", "invalid_auth", secrets
            )
            assert fake.connections == [], "no Socket Mode with a refused token"
        text = "\n".join(p.read_text() for p in profile.log_dir.glob("*.log*"))
        assert "invalid_auth" in text
        assert BOT_TOKEN not in text and WRONG["app"] not in text, "no token in the logs"
        assert processes_with_home_under(short_root) == []
    finally:
        kill_processes_with_home_under(short_root)
