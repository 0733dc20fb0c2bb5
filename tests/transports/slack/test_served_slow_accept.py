"""A Slack host whose store is slow to accept a message (another process holds SQLite's write
lock): Socket Mode gives an envelope's accept ``ACCEPT_WITHIN`` (2 s) and cancels it then, so
the envelope is not acknowledged and Slack sends the event again (``retry_attempt``), while the
host's writer still holds the first accept and commits it once the lock goes. The message is
answered once, in this run: its lane admits it once written, and the retry finds it claimed.

The lane dropped it (the handler that gave up never learnt the write committed) and the retry
was dropped as claimed: the message waited, with no reaction, in the inbox until the host's
next start."""

from __future__ import annotations

from pathlib import Path

import trio

from robota.transports.slack._client import ACCEPT_WITHIN

from ...support.fake_slack import dm
from ...support.feishu_team import store_path
from ...support.model_server import FakeModel
from ...support.slack import host_process, now_ts, restartable
from ...support.store_lock import write_lock

HELD = ACCEPT_WITHIN + 0.5
"""Seconds the write lock is held before Slack's retry: past the accept's deadline, short of
the host writer's 5 s busy timeout (past it, the first accept fails and the retry is the one
accepted: answered once as well)."""


async def test_an_envelope_whose_accept_outlasts_its_deadline_is_answered_once_in_this_run(
    short_root: Path, model: FakeModel
) -> None:
    text = "answer me though my accept was late"
    log = short_root / "host.log"
    async with restartable(short_root, model) as (robota, bot):
        fake = bot.fake
        ts = now_ts()
        async with host_process(robota, fake, log) as host:
            with write_lock(store_path(robota)):
                first = await bot.push(dm(text, ts=ts), event_id="EvLate")
                await trio.sleep(HELD)
                assert {"envelope_id": first} not in fake.acks, "acknowledged before its accept"
                # Slack sends an event not acknowledged within 3 s again, in a new envelope.
                again = await bot.push(
                    dm(text, ts=ts), event_id="EvLate", retry_attempt=1, retry_reason="timeout"
                )
                await trio.sleep(0.3)  # the retry reaches the host, as the lock holds
            await bot.acked(again)  # the retry found the claims taken
            await bot.answered(ts)  # no restart: the late commit fed its lane
            await bot.ended(ts)
            await trio.sleep(1.0)  # what a late duplicate would need to show
            assert len(bot.finals(ts)) == 1, bot.replies(ts)
            assert bot.reactions(ts) == {"white_check_mark"}
            assert {"envelope_id": first} not in fake.acks
        assert host.returncode == 0, log.read_text()[-4000:]
        assert bot.prompts(text) == 1
        assert bot.log is not None
        assert "a message's accept is late" in bot.log.read_text()
