"""The owner's ``!restart`` on Slack, end to end: the host's safe restart and its notes in the
thread of the command (scheduled with a cancel button, cancelled, restarting, restarted)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import trio

from robota.core.control import ControlClient
from robota.host import process_gone

from ...support.fake_slack import dm, fake_slack
from ...support.host import sandboxed
from ...support.model_server import FakeModel
from ...support.processes import kill_processes_with_home_under, processes_with_home_under
from ...support.slack import BOUND, CHANNEL, Served, buttons, click, configure, host_process, now_ts

# ``model`` and ``short_root``: tests/transports/conftest.py


def texts(bot: Served, ts: str) -> list[str]:
    return [str(m.get("text")) for m in bot.replies(ts)]


async def test_an_owners_restart_enrolls_the_dm_and_a_strangers_is_ignored(
    short_root: Path, model: FakeModel
) -> None:
    try:
        await _restart_scenario(short_root, model)
    finally:
        # The forced restart's new host is no child of this test: had a step failed after it
        # started, nothing else would stop it (it retries the fake Slack, gone, for ever).
        kill_processes_with_home_under(short_root)


async def _restart_scenario(short_root: Path, model: FakeModel) -> None:
    robota, profile = sandboxed(short_root, model, "codex-acp")
    async with fake_slack() as fake:
        configure(robota.home, fake.api_url)
        async with host_process(robota, fake, short_root / "host.log") as process:
            old = process.pid
            bot = Served(fake, model, profile.control_socket)

            # A stranger's !restart: acknowledged, and nothing else.
            stranger_ts = now_ts()
            stranger = await bot.push(dm("!restart", user="U0MALLORY", ts=stranger_ts))
            await bot.acked(stranger)
            # Any other argument is refused with a usage reply.
            usage_ts = now_ts()
            await bot.push(dm("!restart now", ts=usage_ts), event_id="EvUsage")
            await fake.wait_until(lambda: bot.reactions(usage_ts) == {"x"}, timeout=BOUND)
            assert "usage: /restart or /restart --force" in texts(bot, usage_ts)[0]

            # The owner's /restart: a scheduled note in its thread, with a cancel button.
            ts = now_ts()
            await bot.push(dm("/restart", ts=ts), event_id="EvRestart")
            await fake.wait_until(lambda: bot.reactions(ts) == {"white_check_mark"}, timeout=BOUND)
            await fake.wait_until(lambda: bot.replies(ts), timeout=BOUND)
            (note,) = bot.replies(ts)
            assert str(note["text"]).startswith("Restart scheduled")
            token = buttons(note)["Cancel the restart"]
            assert bot.reactions(stranger_ts) == set() and bot.replies(stranger_ts) == []
            assert (await bot.status())["pid"] == old

            # A stranger's click does nothing; the owner's cancels: the note says so.
            await fake.push(click("U0MALLORY", CHANNEL, note["ts"], token))
            await fake.push(click("U0ALICE", CHANNEL, note["ts"], token))

            def cancelled() -> dict[str, Any] | None:
                (current,) = bot.replies(ts)
                return current if current["text"] == "Restart cancelled." else None

            await fake.wait_until(cancelled, timeout=BOUND)
            assert buttons(cancelled() or {}) == {}, "the cancel button went"
            assert (await bot.status())["pid"] == old

            # !restart --force: scheduled, restarting, and the new host's restarted note.
            connections = len(fake.connections)
            forced = now_ts()
            await bot.push(dm("!restart --force", ts=forced), event_id="EvForce")
            with trio.fail_after(BOUND):
                await process.wait()
            assert process.returncode == 75, (short_root / "host.log").read_text()[-4000:]
            await fake.wait_until(lambda: len(fake.connections) > connections, timeout=BOUND)
            # The new host's note is a new message in the DM (it knows no thread to answer).
            restarted = "Restarted: robota is back online."
            await fake.wait_until(
                lambda: any(
                    c == CHANNEL and m.get("text") == restarted
                    for (c, _), m in fake.messages.items()
                ),
                timeout=BOUND,
            )
            # The restarting note got out before the old host stopped (it replaces the
            # scheduled note, or follows it when it came before that note was recorded).
            said = [
                str(c.args.get("text"))
                for c in [*fake.calls_of("chat.postMessage"), *fake.calls_of("chat.update")]
            ]
            assert "Restarting now..." in said, said
            new = (await bot.status())["pid"]
            assert new != old

            def stop() -> Any:
                with ControlClient(profile.control_socket, timeout=BOUND) as client:
                    return client.call("server.stop")

            await trio.to_thread.run_sync(stop)
            with trio.fail_after(BOUND):
                while not process_gone(new):
                    await trio.sleep(0.05)
    assert processes_with_home_under(short_root / "agents") == []
