"""How many chats a real host serves at once (``transports.feishu.maxBusyChats``, the chat
gate of ``robota.core.frontend._chat_gate``), end to end: a real host with codex-acp against the
fake model and the fake Feishu, at most one chat at once. A second chat's message, pushed while
the first chat's slow turn runs, is accepted (the platform acknowledged) but waits: its
``OnIt`` comes after the first chat's ``DONE``, and both are answered once."""

from __future__ import annotations

from pathlib import Path

from ...support.fake_feishu import fake_platform
from ...support.feishu import Served, configure, host_process, message_event
from ...support.host import sandboxed
from ...support.model_server import FakeModel

# ``model`` and ``short_root``: tests/transports/conftest.py


async def test_a_second_chat_waits_until_the_busy_one_is_answered(
    short_root: Path, model: FakeModel
) -> None:
    robota, profile = sandboxed(short_root, model, "codex-acp")
    async with fake_platform() as fake:
        configure(robota.home, fake.domain, maxBusyChats=1)  # one chat at once
        async with host_process(robota, fake, short_root / "host.log"):
            bot = Served(fake, model, profile.control_socket, robota)
            await fake.push_event(message_event(1, "SLOW first chat"))
            await fake.wait_until(lambda: "OnIt" in fake.reactions_on("om_user1"))
            await fake.push_event(message_event(2, "second chat", chat_id="oc_p2p2"))
            await bot.answered("om_user1")
            await bot.answered("om_user2")

            added = [(r.message_id, r.emoji) for r in fake.reactions if r.op == "add"]
            assert added.index(("om_user1", "DONE")) < added.index(("om_user2", "OnIt")), added
            for message_id in ("om_user1", "om_user2"):
                assert len(bot.cards_for(message_id)) == 1
                assert len(bot.finals_for(message_id)) == 1
            assert bot.prompts("second chat") == 1
