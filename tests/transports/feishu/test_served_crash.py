"""A Feishu host SIGKILLed at the moments a message is most exposed, then started again: every
accepted message is answered once, its reactions end, no card is left running.

The platform does not deliver an ACKed event again, so what the killed host accepted is the
next host's to answer: its inbox (``robota.core.store._inbox``)."""

from __future__ import annotations

import json
from pathlib import Path

from ...support.fake_feishu import fake_platform
from ...support.feishu import (
    BOUND,
    Served,
    configure,
    host_process,
    is_terminal,
    last_patch,
    message_event,
)
from ...support.host import sandboxed
from ...support.model_server import FakeModel
from ...support.processes import processes_with_home_under


async def test_a_host_killed_right_after_onit_answers_the_message_once_after_its_restart(
    short_root: Path, model: FakeModel
) -> None:
    robota, profile = sandboxed(short_root, model, "codex-acp")
    log = short_root / "host.log"
    async with fake_platform() as fake:
        configure(robota.home, fake.domain)
        bot = Served(fake, model, profile.control_socket)
        # The OnIt is taken and never answered: the host is killed after its reaction and
        # before it told the route (the message then lived only in the route's mailbox).
        fake.hold_reactions = {"OnIt"}
        async with host_process(robota, fake, log) as first:
            ack = await fake.push_event(message_event(1, "answer me after the crash"))
            await fake.wait_until(lambda: fake.reactions_on("om_user1") == ["OnIt"], timeout=BOUND)
            # The event was ACKed, so the platform will not deliver it again. The ACK follows
            # the accept's commit, and so does the lane's OnIt: the two race (under load the
            # reaction can come first), so it is waited for, not assumed.
            await fake.wait_until(
                lambda: any(a.header("message_id") == ack for a in fake.acks), timeout=BOUND
            )
            first.kill()
            await first.wait()
        assert bot.prompts("answer me after the crash") == 0
        fake.hold_reactions = set()

        async with host_process(robota, fake, log) as second:
            await bot.answered("om_user1")
            await fake.wait_until(lambda: fake.reactions_on("om_user1") == ["DONE"], timeout=BOUND)
            (final,) = bot.finals_for("om_user1")
            assert "answer me after the crash" in json.dumps(final.content, ensure_ascii=False)
            (card,) = bot.cards_for("om_user1")
            await fake.wait_until(lambda: is_terminal(last_patch(fake, card.message_id), "green"))
        assert second.returncode == 0, log.read_text()[-4000:]
        assert bot.prompts("answer me after the crash") == 1
    assert processes_with_home_under(short_root / "agents") == []
