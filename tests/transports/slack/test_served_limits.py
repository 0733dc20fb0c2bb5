"""Slack's limits through the host (a real host process, a real agent against the fake model,
the fake Slack): a storm of 429s on ``chat.update`` during a long turn, a tool output far
beyond Block Kit's limits, a failed turn."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from ...support.fake_slack import _blocks_errors, dm
from ...support.model_server import FakeModel
from ...support.slack import BOUND, Served, now_ts, served, words

RUNNING = ("working", "running", "⏳")


def rate_limited(seconds: str) -> tuple[int, dict[str, str], dict[str, Any]]:
    return 429, {"retry-after": seconds}, {"ok": False, "error": "ratelimited"}


async def test_a_429_storm_on_updates_coalesces_and_ends_in_the_terminal_state(
    short_root: Path, model: FakeModel
) -> None:
    storm = 6
    async with served(short_root, model) as bot:
        fake = bot.fake
        # Every chat.update of the turn's first seconds is refused, 1 s to wait each: the storm
        # outlasts the SLOW turn (60 deltas, 50 ms apart), so its last state waits behind it.
        fake.scripted["chat.update"].extend([rate_limited("1")] * storm)
        ts = now_ts()
        await bot.push(dm("SLOW through the storm", ts=ts), event_id="EvStorm")
        await bot.answered(ts)
        assert not fake.scripted["chat.update"], "the storm was met"
        progress, final = bot.replies(ts)
        assert len(bot.replies(ts)) == 2, "one progress message, one final: nothing doubled"
        updates = bot.updates_of(progress["ts"])
        refused, accepted = updates[:storm], updates[storm:]
        assert accepted, "the progress message was updated after the storm"
        # Latest state wins: after the storm the waiting state is sent, not the queue of every
        # state produced meanwhile; the last one sent is terminal.
        assert len(accepted) <= 2, [words(u.args) for u in accepted]
        last = json.dumps(
            [accepted[-1].args.get("text"), accepted[-1].args.get("blocks")], ensure_ascii=False
        )
        assert "✅" in last and not any(w in last.lower() for w in RUNNING), last
        assert "✅" in words(progress) and not any(w in words(progress) for w in RUNNING)
        assert refused[0].at < accepted[0].at
        # Nothing lost: every one of the 60 deltas streamed during the storm is in the final.
        assert all(f"slow-{n:02d}" in words(final) for n in range(60)), final
        assert bot.reactions(ts) == {"white_check_mark"}
        assert bot.prompts("SLOW through the storm") == 1


def _sent(bot: Served) -> list[dict[str, Any]]:
    """Every message body the bot sent (posts and updates), as Slack received them."""
    return [c.args for c in bot.fake.calls if c.method in ("chat.postMessage", "chat.update")]


def assert_within_limits(bot: Served) -> None:
    """Every message sent passes Slack's block validator, keeps its block text under
    ``msg_blocks_too_long`` and has a fallback ``text`` of a readable size."""
    for body in _sent(bot):
        blocks = body.get("blocks") or []
        assert _blocks_errors(blocks) == [], body
        text = body.get("text")
        assert isinstance(text, str) and 0 < len(text) <= 4000, "the fallback text is set"
        total = sum(len(json.dumps(b, ensure_ascii=False)) for b in blocks)
        assert total < 13_000, "under msg_blocks_too_long"


def _markdown(message: dict[str, Any]) -> str:
    return "".join(b["text"] for b in message.get("blocks", ()) if b.get("type") == "markdown")


async def test_a_40_kb_tool_output_keeps_every_message_within_slacks_limits(
    short_root: Path, model: FakeModel
) -> None:
    async with served(short_root, model) as bot:
        ts = now_ts()
        # 7000 lines of 6 characters: 42 KB of tool output, echoed back by the model.
        await bot.push(dm("SHELL: seq 10000 16999", ts=ts), event_id="EvBig")
        await bot.answered(ts)
        assert_within_limits(bot)
        progress, *finals = bot.replies(ts)
        assert "total output lines: 7000" in "".join(_markdown(m) for m in finals).lower()
        assert "✅" in words(progress)
        assert bot.reactions(ts) == {"white_check_mark"}

        # An answer of 35 KB (the agent echoes a long message): split, complete, in order.
        long_ts = now_ts()
        lines = [f"line {n:05d}" for n in range(3200)]
        await bot.push(dm("\n".join(lines), ts=long_ts), event_id="EvLong")
        await bot.answered(long_ts)
        _, *finals = bot.replies(long_ts)
        assert len(finals) >= 3, "a 35 KB answer is more than one message"
        answer = "".join(_markdown(m) for m in finals)
        assert re.findall(r"line \d{5}", answer) == lines, "every line once, in order"
        assert_within_limits(bot)


async def test_a_failed_turn_says_so_and_gets_an_x(short_root: Path, model: FakeModel) -> None:
    async with served(short_root, model) as bot:
        ts = now_ts()
        await bot.push(dm("FAIL500 please", ts=ts), event_id="EvFail")
        await bot.fake.wait_until(lambda: bot.reactions(ts) == {"x"}, timeout=BOUND)
        progress = bot.replies(ts)[0]
        assert "failed" in words(progress) and "❌" in words(progress), progress
        assert not any(w in words(progress) for w in RUNNING), progress
        assert "eyes" not in bot.reactions(ts)
