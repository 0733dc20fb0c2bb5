"""A queued prompt's Cancel end to end: a real host process with an ACP agent (it queues what
is sent during a running turn) against the fake model and the fake platform. The second
message, sent while a SLOW turn runs, gets a "queued" note with Cancel; the click cancels it
through the engine, the note says so and the prompt never reaches the model. A prompt that
was not cancelled loses its button once it starts, and a click then is too late."""

from __future__ import annotations

import json
from pathlib import Path

from ...support.fake_feishu import FakePlatform, Sent
from ...support.feishu import BOUND, _buttons, buttons_in, click_event, message_event, served
from ...support.model_server import FakeModel


def _notes_to(fake: FakePlatform, message_id: str) -> list[Sent]:
    return [
        m
        for m in fake.messages
        if m.reply_to == message_id
        and m.msg_type == "interactive"
        and "Queued" in json.dumps(m.content)
    ]


def _patched_text(fake: FakePlatform, message_id: str) -> str:
    return " ".join(json.dumps(p.content) for p in fake.patched if p.message_id == message_id)


async def test_a_queued_prompt_is_cancelled_from_its_note_and_never_runs(
    short_root: Path, model: FakeModel
) -> None:
    async with served(short_root, model) as bot:
        fake = bot.fake
        await fake.push_event(message_event(1, "SLOW first"))
        await fake.wait_until(lambda: bot.prompts("SLOW first") == 1, timeout=BOUND)
        await fake.push_event(message_event(2, "second please"))
        await fake.push_event(message_event(3, "third please"))
        await fake.wait_until(lambda: _notes_to(fake, "om_user2"), timeout=BOUND)
        (note,) = _notes_to(fake, "om_user2")
        token = _buttons(fake, note)["Cancel"]

        frame = await fake.push_event(click_event(1, token, note.message_id))
        await fake.wait_until(lambda: any(a.header("message_id") == frame for a in fake.acks))
        assert fake.ack_answer(frame)["data"]["toast"]["type"] == "success"
        await fake.wait_until(lambda: "Cancelled" in _patched_text(fake, note.message_id))
        await fake.wait_until(lambda: fake.reactions_on("om_user2") == ["CrossMark"])

        # The third, queued behind it, runs; the second never reaches the model.
        await bot.answered("om_user1")
        await bot.answered("om_user3")
        assert bot.prompts("second please") == 0
        assert bot.prompts("third please") == 1
        (third,) = _notes_to(fake, "om_user3")
        await fake.wait_until(lambda: "Started" in _patched_text(fake, third.message_id))
        assert _buttons(fake, third) == {}, "a started prompt's note has no Cancel"

        # Its token is still bound: a click now is too late, and the spent one is refused.
        (late,) = [b["behaviors"][0]["value"]["token"] for b in buttons_in(third.content)]
        frame = await fake.push_event(click_event(2, late, third.message_id))
        await fake.wait_until(lambda: any(a.header("message_id") == frame for a in fake.acks))
        assert fake.ack_answer(frame)["data"]["toast"]["type"] == "warning"
        again = await fake.push_event(click_event(3, token, note.message_id))
        await fake.wait_until(lambda: any(a.header("message_id") == again for a in fake.acks))
        assert fake.ack_answer(again)["data"]["toast"]["type"] == "warning"
        assert bot.prompts("second please") == 0
