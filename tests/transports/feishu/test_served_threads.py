"""A topic thread started from a turn's message, end to end: a real host process with Codex
(an App Server agent: it forks a thread through a turn) against the fake model and the fake
platform. The thread's first prompt runs on a fork of that turn (its history up to there and
no further), follow-ups stay on the fork, and a thread from a turn that did not complete is
refused with the reason and runs nothing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ...support.feishu import BOUND, message_event, served
from ...support.model_server import FakeModel


def in_thread(n: int, text: str, root: str, thread: str) -> dict[str, Any]:
    event = message_event(n, text, thread_id=thread)
    event["event"]["message"]["root_id"] = root
    event["event"]["message"]["parent_id"] = root
    return event


def said(content: Any) -> str:
    return json.dumps(content, ensure_ascii=False)


async def test_a_thread_from_a_turns_answer_continues_from_that_turn(
    short_root: Path, model: FakeModel
) -> None:
    async with served(short_root, model, agent="codex") as bot:
        fake = bot.fake
        await fake.push_event(message_event(1, "remember apples"))
        await bot.answered("om_user1")
        await fake.push_event(message_event(2, "remember pears"))
        await bot.answered("om_user2")
        (answer,) = bot.finals_for("om_user1")

        # A thread from the first turn's answer: the fork stands at that turn.
        await fake.push_event(in_thread(3, "HISTORY", answer.message_id, "omt_a"))
        await bot.answered("om_user3")
        notes = [m for m in fake.messages if m.reply_to == "om_user3" and m.msg_type == "text"]
        assert [said(m.content) for m in notes if "continuing task" in said(m.content)], notes
        (final,) = bot.finals_for("om_user3")
        history = said(final.content)
        assert "remember apples" in history and "remember pears" not in history, history

        # A follow-up in the thread goes on with the fork, not with the chat's task.
        await fake.push_event(in_thread(4, "HISTORY", answer.message_id, "omt_a"))
        await bot.answered("om_user4")
        (again,) = bot.finals_for("om_user4")
        history = said(again.content)
        assert "remember apples" in history and "remember pears" not in history, history
        assert not [m for m in fake.messages if m.reply_to == "om_user4" and m.msg_type == "text"]

        # The chat itself is where it was: both turns in its history.
        await fake.push_event(message_event(5, "HISTORY"))
        await bot.answered("om_user5")
        (chat,) = bot.finals_for("om_user5")
        assert "remember pears" in said(chat.content)


async def test_a_thread_from_a_turn_that_failed_is_refused_and_runs_nothing(
    short_root: Path, model: FakeModel
) -> None:
    async with served(short_root, model, agent="codex") as bot:
        fake = bot.fake
        await fake.push_event(message_event(1, "FAIL500"))
        await fake.wait_until(
            lambda: (
                "ERROR" in fake.reactions_on("om_user1")
                or "CrossMark" in fake.reactions_on("om_user1")
            ),
            timeout=BOUND,
        )
        (card,) = bot.cards_for("om_user1")
        asked = bot.prompts("what now")

        await fake.push_event(in_thread(2, "what now", card.message_id, "omt_b"))
        await fake.wait_until(lambda: "ERROR" in fake.reactions_on("om_user2"), timeout=BOUND)
        (refusal,) = [m for m in fake.messages if m.reply_to == "om_user2"]
        assert "did not complete" in said(refusal.content), refusal.content
        assert bot.cards_for("om_user2") == [] and bot.prompts("what now") == asked
