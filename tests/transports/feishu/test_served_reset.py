"""The Reset action of a completed card, end to end: a real host process with Codex (an App
Server agent: it forks a thread through a turn) against the fake model and the fake platform.
The click is the engine's ``/turns reset``: the conversation goes back to that turn, the task
keeps its id, and the reply goes to the card. An ACP agent, which cannot, gets no button."""

from __future__ import annotations

import json
from pathlib import Path

from ...support.feishu import BOUND, _buttons, click_event, last_patch, message_event, served
from ...support.model_server import FakeModel


async def test_reset_from_a_completed_card_goes_back_to_its_turn(
    short_root: Path, model: FakeModel
) -> None:
    async with served(short_root, model, agent="codex") as bot:
        fake = bot.fake
        await fake.push_event(message_event(1, "remember apples"))
        await bot.answered("om_user1")
        await fake.push_event(message_event(2, "remember pears"))
        await bot.answered("om_user2")
        (first,) = bot.cards_for("om_user1")
        terminal = last_patch(fake, first.message_id)
        assert "reset_note" in json.dumps(terminal), "the warning sits below the action"
        buttons = _buttons(fake, first)
        token = buttons.get("Reset to this turn", "")
        assert list(buttons) == ["Reset to this turn"], buttons

        frame = await fake.push_event(click_event(1, token, first.message_id))
        await fake.wait_until(
            lambda: [m for m in fake.messages if m.reply_to == first.message_id], timeout=BOUND
        )
        assert fake.ack_answer(frame)["data"]["toast"]["content"] == "Resetting"
        (reply,) = [m for m in fake.messages if m.reply_to == first.message_id]
        assert "reset to turn" in reply.content["text"], reply.content

        # The conversation stands at the first turn: the second is not in its history.
        await fake.push_event(message_event(3, "HISTORY"))
        await bot.answered("om_user3")
        (final,) = bot.finals_for("om_user3")
        history = json.dumps(final.content, ensure_ascii=False)
        assert "remember apples" in history and "remember pears" not in history, history

        # The same token twice: refused, nothing runs again.
        again = await fake.push_event(click_event(2, token, first.message_id))
        await fake.wait_until(lambda: any(a.header("message_id") == again for a in fake.acks))
        assert fake.ack_answer(again)["data"]["toast"]["type"] == "warning"


async def test_an_acp_agents_card_has_no_reset(short_root: Path, model: FakeModel) -> None:
    async with served(short_root, model) as bot:
        await bot.fake.push_event(message_event(1, "hello"))
        await bot.answered("om_user1")
        (card,) = bot.cards_for("om_user1")
        assert _buttons(bot.fake, card) == {}
