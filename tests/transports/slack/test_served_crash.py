"""A Slack host SIGKILLed at the moments a message is most exposed, then started again: every
accepted message is answered once, its reactions end, no progress message is left running.

Socket Mode does not deliver an acknowledged envelope again, so what the killed host accepted
is the next host's to answer: its inbox (``robota.core.store._inbox``)."""

from __future__ import annotations

from pathlib import Path

import trio

from ...support.fake_slack import dm, fake_slack
from ...support.host import sandboxed
from ...support.model_server import FakeModel
from ...support.processes import processes_with_home_under
from ...support.slack import (
    BOUND,
    CHANNEL,
    Served,
    configure,
    host_process,
    now_ts,
    restartable,
    words,
)


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


async def test_a_host_killed_after_slack_kept_the_answer_and_before_its_record_answers_once(
    short_root: Path, model: FakeModel
) -> None:
    """Slack keeps no deduplication key: the next host finds the answer in the thread by the
    key in its metadata and records it instead of posting it again."""
    robota, profile = sandboxed(short_root, model, "codex-acp")
    log = short_root / "host.log"
    async with fake_slack() as fake:
        configure(robota.home, fake.api_url)
        bot = Served(fake, model, profile.control_socket)
        ts = now_ts()
        fake.hold_finals = True  # kept, never answered
        async with host_process(robota, fake, log) as first:
            await bot.push(dm("answer me once", ts=ts), event_id="EvKept")
            await fake.wait_until(lambda: ts in fake.held, timeout=BOUND)
            first.kill()
            await first.wait()
        fake.hold_finals = False

        def finals() -> list[dict[str, object]]:
            return [m for m in bot.replies(ts) if any(b["type"] == "markdown" for b in m["blocks"])]

        (kept,) = finals()
        async with host_process(robota, fake, log) as second:
            await fake.wait_until(
                lambda: (
                    bot.reactions(ts) == {"white_check_mark"}
                    and not any("⏳" in words(m) for m in bot.replies(ts))
                ),
                timeout=BOUND,
            )
            assert fake.calls_of("conversations.replies"), "the thread was read for the key"
            assert finals() == [kept]
            assert "answer me once" in words(kept).lower()
        assert second.returncode == 0, log.read_text()[-4000:]
        assert bot.prompts("answer me once") == 1, "the turn was not run again"
    assert processes_with_home_under(short_root / "agents") == []


async def test_a_host_killed_after_slack_kept_its_progress_card_posts_no_second_one(
    short_root: Path, model: FakeModel
) -> None:
    """The card's post carries its key in metadata: the next host finds the card the killed
    one made (claimed, never recorded) and ends it in place rather than posting another."""
    log = short_root / "host.log"
    async with restartable(short_root, model) as (robota, bot):
        fake = bot.fake
        ts = now_ts()
        fake.hold_metadata = {"robota_card"}  # kept, never answered
        async with host_process(robota, fake, log) as first:
            await bot.push(dm("one card per turn", ts=ts), event_id="EvCard")
            await fake.wait_until(lambda: ts in fake.held_posts, timeout=BOUND)
            first.kill()
            await first.wait()
        fake.hold_metadata = set()
        (kept,) = bot.replies(ts)

        def card_keys() -> list[object]:
            return [
                m["metadata"]["event_payload"]["key"]
                for m in bot.replies(ts)
                if m.get("metadata", {}).get("event_type") == "robota_card"
            ]

        async with host_process(robota, fake, log) as second:
            await bot.ended(ts)
            await trio.sleep(1.0)  # what a late second post would need to show
            keys = card_keys()
            assert len(keys) == len(set(keys)), bot.replies(ts)
            assert bot.updates_of(kept["ts"]), "the kept card was ended in place"
            assert "⏳" not in words(fake.messages[CHANNEL, kept["ts"]])
            assert len(bot.finals(ts)) == 1, bot.replies(ts)
        assert second.returncode == 0, log.read_text()[-4000:]
