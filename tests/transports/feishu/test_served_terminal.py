"""A prompt from the terminal (``robota task send``) to a chat's task is answered in that chat,
as if its owner had typed it there: a real host process with an ACP agent against the fake
model and the fake platform, and the chat's route not yet spoken to in this host's run."""

from __future__ import annotations

import json
from pathlib import Path

from ...support.fake_feishu import Sent, fake_platform
from ...support.feishu import (
    BOUND,
    Served,
    configure,
    host_process,
    is_terminal,
    last_patch,
    message_event,
)
from ...support.host import ask, sandboxed
from ...support.model_server import FakeModel
from ...support.processes import processes_with_home_under


def _says(message: Sent, text: str) -> bool:
    return text in json.dumps(message.content, ensure_ascii=False)


async def test_a_prompt_from_the_terminal_is_answered_in_its_chat_after_a_restart(
    short_root: Path, model: FakeModel
) -> None:
    robota, profile = sandboxed(short_root, model, "codex-acp")
    log = short_root / "host.log"

    async with fake_platform() as fake:
        configure(robota.home, fake.domain)
        bot = Served(fake, model, profile.control_socket)
        async with host_process(robota, fake, log):
            await fake.push_event(message_event(1, "hello from the chat"))
            await bot.answered("om_user1")

        async with host_process(robota, fake, log) as second:
            before = len(fake.messages)
            wanted = {"task": "1", "text": "from the terminal", "wait": True}
            sent = await ask(profile.control_socket, "task.send", wanted)
            assert sent["route"].startswith("feishu:"), sent
            assert [t["final"] for t in sent["turns"]] == ["ECHO: from the terminal"]

            def in_the_chat(kind: str) -> list[Sent]:
                return [
                    m
                    for m in fake.messages[before:]
                    if m.msg_type == kind and _says(m, "from the terminal")
                ]

            # Its card and its final answer, in the chat the task belongs to.
            await fake.wait_until(lambda: in_the_chat("post"), timeout=BOUND)
            (final,) = in_the_chat("post")
            assert (final.receive_id, final.reply_to) == ("oc_p2p1", None)
            cards = [
                m
                for m in fake.messages[before:]
                if m.msg_type == "interactive" and _says(m, "Working")
            ]
            assert [c.receive_id for c in cards] == ["oc_p2p1"], "one progress card, in the chat"
            await fake.wait_until(
                lambda: is_terminal(last_patch(fake, cards[0].message_id), "green"),
                timeout=BOUND,
            )
        assert second.returncode == 0, log.read_text()[-4000:]
        # Once: the chat's answer and the desk's are the same turn's.
        assert len(in_the_chat("post")) == 1
        assert bot.prompts("from the terminal") == 1
    assert processes_with_home_under(short_root / "agents") == []
