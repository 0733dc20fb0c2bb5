"""A Slack host SIGKILLed at the moments a message is most exposed, then started again: every
accepted message is answered once, its reactions end, no progress message is left running.

Socket Mode does not deliver an acknowledged envelope again, so what the killed host accepted
is the next host's to answer: its inbox (``robota.core.store._inbox``)."""

from __future__ import annotations

from pathlib import Path

from ...support.fake_slack import dm, fake_slack
from ...support.host import sandboxed
from ...support.model_server import FakeModel
from ...support.processes import processes_with_home_under
from ...support.slack import BOUND, Served, configure, host_process, now_ts, words


async def test_a_host_killed_right_after_eyes_answers_the_message_once_after_its_restart(
    short_root: Path, model: FakeModel
) -> None:
    robota, profile = sandboxed(short_root, model, "codex-acp")
    log = short_root / "host.log"
    async with fake_slack() as fake:
        configure(robota.home, fake.api_url)
        bot = Served(fake, model, profile.control_socket)
        ts = now_ts()
        # ``eyes`` is taken and never answered: the host is killed after its reaction and
        # before it told the route (the message then lived only in the route's mailbox).
        fake.hold_reactions = {"eyes"}
        async with host_process(robota, fake, log) as first:
            envelope = await bot.push(dm("answer me after the crash", ts=ts), event_id="EvKill")
            await fake.wait_until(lambda: bot.reactions(ts) == {"eyes"}, timeout=BOUND)
            await bot.acked(envelope)  # Slack will not send it again
            first.kill()
            await first.wait()
        assert bot.prompts("answer me after the crash") == 0
        fake.hold_reactions = set()

        async with host_process(robota, fake, log) as second:
            await bot.answered(ts)
            await fake.wait_until(
                lambda: (
                    bot.reactions(ts) == {"white_check_mark"}
                    and not any("⏳" in words(m) for m in bot.replies(ts))
                ),
                timeout=BOUND,
            )
            finals = [
                m for m in bot.replies(ts) if any(b["type"] == "markdown" for b in m["blocks"])
            ]
            assert len(finals) == 1, bot.replies(ts)
            assert "answer me after the crash" in words(finals[0]).lower()
        assert second.returncode == 0, log.read_text()[-4000:]
        assert bot.prompts("answer me after the crash") == 1
    assert processes_with_home_under(short_root / "agents") == []
