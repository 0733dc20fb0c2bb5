"""A queued prompt's Cancel on Slack end to end: a real host process with an ACP agent against
the fake model and the fake Slack. The second DM, sent while a SLOW turn runs, gets a queued
note in its thread with a Block Kit Cancel; the click (``block_actions``) cancels it through
the engine, the note says so, the message's reaction settles and the prompt never reaches the
model; the third, behind it, runs and its note loses the button."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...support.fake_slack import dm
from ...support.model_server import FakeModel
from ...support.slack import BOUND, CHANNEL, OWNER, Served, buttons, click, now_ts, served, words


def _note(bot: Served, ts: str) -> list[dict[str, Any]]:
    return [m for m in bot.replies(ts) if "queued" in words(m)]


async def test_a_queued_dm_is_cancelled_from_its_note_and_never_runs(
    short_root: Path, model: FakeModel
) -> None:
    async with served(short_root, model) as bot:
        fake = bot.fake
        first, second, third = now_ts(), now_ts(), now_ts()
        await bot.push(dm("SLOW first", ts=first), event_id="Ev1")
        await fake.wait_until(lambda: bot.prompts("SLOW first") == 1, timeout=BOUND)
        await bot.push(dm("second please", ts=second), event_id="Ev2")
        await bot.push(dm("third please", ts=third), event_id="Ev3")
        await fake.wait_until(lambda: _note(bot, second) and _note(bot, third), timeout=BOUND)
        (note,) = _note(bot, second)
        (later,) = _note(bot, third)
        token = buttons(note)["Cancel"]

        owner = click(OWNER, CHANNEL, note["ts"], token)
        await fake.push(owner)
        await bot.acked(owner["envelope_id"])
        await fake.wait_until(lambda: "cancelled" in words(note), timeout=BOUND)
        assert buttons(note) == {}
        await fake.wait_until(lambda: bot.reactions(second) == {"no_entry_sign"}, timeout=BOUND)

        await bot.answered(first)
        await bot.answered(third)
        assert bot.prompts("second please") == 0
        assert bot.prompts("third please") == 1
        await fake.wait_until(lambda: "started" in words(later), timeout=BOUND)
        assert buttons(later) == {}, "a started prompt's note has no Cancel"
