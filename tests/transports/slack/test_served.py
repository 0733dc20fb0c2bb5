"""The bot end to end: a real host process (``run_host``, as ``robota server run`` runs it) with
a real agent against the fake model, serving ``transports.slack`` against the fake Slack on
loopback. The Slack side is the test's: it pushes envelopes over Socket Mode as Slack does and
records every Web API call, message, reaction and acknowledgement."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import trio

from ...support.fake_slack import BOT_USER, dm, fake_slack
from ...support.host import sandboxed
from ...support.model_server import FakeModel
from ...support.processes import processes_with_home_under
from ...support.slack import (
    BOUND,
    CHANNEL,
    OWNER,
    Served,
    buttons,
    click,
    configure,
    host_process,
    now_ts,
    served,
    words,
)

# ``model`` and ``short_root``: tests/transports/conftest.py


async def test_an_owners_dm_gets_eyes_one_progress_message_and_one_final(
    short_root: Path, model: FakeModel
) -> None:
    async with served(short_root, model) as bot:
        fake = bot.fake
        # Readiness: Socket Mode is up and auth.test succeeded.
        with trio.fail_after(BOUND):
            while not (status := await bot.status())["ready"]:
                await trio.sleep(0.05)
        assert status["transports"] == [{"name": "slack", "state": "connected"}]
        assert fake.calls_of("auth.test"), "the bot's user id comes from auth.test"
        # No conversation is known yet: the start-up note went to the owner's DM.
        await fake.wait_until(lambda: fake.calls_of("chat.postMessage"), timeout=BOUND)
        (opened,) = fake.calls_of("conversations.open")
        assert opened.args["users"] == OWNER
        (note,) = [m for (c, _), m in fake.messages.items() if c == CHANNEL]
        assert "online" in words(note) and "thread_ts" not in note

        ts = now_ts()
        envelope = await bot.push(dm("hello slack", ts=ts), event_id="EvDM1")
        await bot.acked(envelope)
        await bot.answered(ts)
        assert bot.prompts("hello slack") == 1, "the text reached the agent"
        # eyes came before the agent asked the model anything: its call precedes the post.
        eyes = [
            c
            for c in fake.calls_of("reactions.add")
            if c.args.get("name") == "eyes" and c.args.get("timestamp") == ts
        ]
        assert len(eyes) == 1
        posts = [c for c in fake.calls_of("chat.postMessage") if c.args.get("thread_ts") == ts]
        assert eyes[0].at <= posts[0].at

        progress, final = bot.replies(ts)
        assert len(bot.replies(ts)) == 2, "one progress message and one final, in the thread"
        assert bot.updates_of(progress["ts"]), "the progress message was updated"
        assert "edited" in progress
        assert not any(w in words(progress) for w in ("working", "running", "⏳")), progress
        assert "✅" in words(progress), "its final state says done"
        assert "echo: hello slack" in words(final), final
        assert any(b.get("type") == "markdown" for b in final["blocks"]), final
        assert bot.reactions(ts) == {"white_check_mark"}

        # `!status` is the engine's /status (Slack keeps a leading / for itself).
        command_ts = now_ts()
        await bot.push(dm("!status", ts=command_ts), event_id="EvStatus")
        await fake.wait_until(
            lambda: bot.replies(command_ts) and bot.reactions(command_ts) == {"white_check_mark"},
            timeout=BOUND,
        )
        (reply,) = bot.replies(command_ts)
        assert "codex" in words(reply), reply
        assert bot.prompts("!status") == 0 and bot.prompts("/status") == 0


async def test_strangers_duplicates_and_channel_chatter_start_no_turn(
    short_root: Path, model: FakeModel
) -> None:
    async with served(short_root, model) as bot:
        fake = bot.fake
        # A non-owner's DM: acknowledged, no reaction, no message, no turn.
        stranger_ts = now_ts()
        stranger = await bot.push(
            dm("hello from a stranger", user="U0BOB", ts=stranger_ts), event_id="EvBob"
        )
        # A channel message that does not mention the bot, and one that mentions someone else.
        chatter_ts, other_ts = now_ts(), now_ts()
        chatter = {**dm("just chatting", ts=chatter_ts), "channel": "C0GEN"}
        chatter["channel_type"] = "channel"
        other = {**dm("<@U0CAROL> look", ts=other_ts), "channel": "C0GEN"}
        other["channel_type"] = "channel"
        ignored = [stranger, await bot.push(chatter, event_id="EvChat")]
        ignored.append(await bot.push(other, event_id="EvOther"))
        # The same event twice (a retry_attempt redelivery): one turn.
        twice_ts = now_ts()
        await bot.push(dm("only once", ts=twice_ts), event_id="EvTwice")
        await bot.push(
            dm("only once", ts=twice_ts),
            event_id="EvTwice",
            retry_attempt=1,
            retry_reason="timeout",
        )
        # A channel message that mentions the bot, delivered as message and app_mention.
        mention_ts = now_ts()
        mention = {**dm(f"<@{BOT_USER}> in the channel", ts=mention_ts), "channel": "C0GEN"}
        mention["channel_type"] = "channel"
        await bot.push(mention, event_id="EvMention")
        app_mention = {**mention, "type": "app_mention"}
        del app_mention["channel_type"]
        await bot.push(app_mention, event_id="EvAppMention")

        await bot.answered(twice_ts)
        await bot.answered(mention_ts, "C0GEN")
        for envelope in ignored:
            await bot.acked(envelope)
        assert bot.prompts("only once") == 1 and len(bot.replies(twice_ts)) == 2
        assert bot.prompts("in the channel") == 1, "the mention stripped, one turn for the pair"
        assert len(bot.replies(mention_ts, "C0GEN")) == 2
        assert bot.prompts("hello from a stranger") == 0
        assert bot.reactions(stranger_ts) == set() and bot.replies(stranger_ts) == []
        for ts in (chatter_ts, other_ts):
            assert bot.reactions(ts, "C0GEN") == set() and bot.replies(ts, "C0GEN") == []
        assert len(fake.connections) == 1, "the socket kept working through it all"


async def test_an_approval_is_answered_by_the_owners_button_not_a_strangers(
    short_root: Path, model: FakeModel
) -> None:
    async with served(short_root, model, ask=True) as bot:
        fake = bot.fake
        ts = now_ts()
        await bot.push(dm("SHELL: touch made.txt && echo made", ts=ts), event_id="EvAsk")

        def progress() -> dict[str, Any] | None:
            replies = bot.replies(ts)
            return replies[0] if replies else None

        await fake.wait_until(
            lambda: (p := progress()) is not None and "Allow once" in buttons(p), timeout=BOUND
        )
        first = progress()
        assert first is not None
        token = buttons(first)["Allow once"]
        (decline,) = (v for k, v in buttons(first).items() if k.lower().startswith("decline"))
        # Were the stranger's Decline taken, the command would not run and the owner's click
        # would find its approval answered: the final's "made" says it was refused.
        for frame in (
            click("U0BOB", CHANNEL, first["ts"], decline),
            click(OWNER, CHANNEL, first["ts"], "forged-token"),
        ):
            await fake.push(frame)
            await bot.acked(frame["envelope_id"])
        assert "Allow once" in buttons(first), "still waiting for the owner"
        assert bot.reactions(ts) == {"eyes"}
        owner = click(OWNER, CHANNEL, first["ts"], token)
        await fake.push(owner)
        await bot.acked(owner["envelope_id"])
        await bot.answered(ts)
        progress_message, final = bot.replies(ts)
        assert "made" in words(final), final
        assert "Allow once" not in buttons(progress_message), "an answered approval has no buttons"
        assert "✅" in words(progress_message)
        assert bot.reactions(ts) == {"white_check_mark"}


async def test_a_host_killed_mid_turn_answers_once_after_its_restart(
    short_root: Path, model: FakeModel
) -> None:
    robota, profile = sandboxed(short_root, model, "codex-acp")
    log = short_root / "host.log"
    async with fake_slack() as fake:
        configure(robota.home, fake.api_url)
        bot = Served(fake, model, profile.control_socket)
        ts = now_ts()
        async with host_process(robota, fake, log) as first:
            await bot.push(dm("SLOW crash me", ts=ts), event_id="EvCrash")
            # Mid-turn: the progress message is up and the model is streaming the answer.
            await fake.wait_until(lambda: bot.replies(ts), timeout=BOUND)
            await fake.wait_until(lambda: bot.prompts("SLOW crash me") == 1, timeout=BOUND)
            first.kill()
            await first.wait()
        (first_progress,) = bot.replies(ts)
        assert bot.reactions(ts) == {"eyes"}

        async with host_process(robota, fake, log) as second:
            await fake.wait_until(
                lambda: (
                    any("slow crash me" in words(m) for m in bot.replies(ts)[1:])
                    and bot.reactions(ts) == {"white_check_mark"}
                    # Nothing is left running: the killed run's progress message was closed.
                    and not any("⏳" in words(m) for m in bot.replies(ts))
                ),
                timeout=BOUND,
            )
            replies = bot.replies(ts)
            finals = [m for m in replies if any(b["type"] == "markdown" for b in m["blocks"])]
            assert len(finals) == 1, replies
            assert replies[0]["ts"] == first_progress["ts"]
            # The thread was told that the turn goes on after a restart.
            await fake.wait_until(
                lambda: any("restarted while this" in words(m) for m in bot.replies(ts)),
                timeout=BOUND,
            )
        assert second.returncode == 0, log.read_text()[-4000:]

        # A third start finds nothing left to settle: still one answer.
        count = len(bot.replies(ts))
        async with host_process(robota, fake, log):
            after = now_ts()
            await bot.push(dm("after the crash", ts=after), event_id="EvAfter")
            await bot.answered(after)
        assert len(bot.replies(ts)) == count
    assert processes_with_home_under(short_root / "agents") == []


async def test_stop_from_the_progress_message(short_root: Path, model: FakeModel) -> None:
    async with served(short_root, model) as bot:
        fake = bot.fake
        ts = now_ts()
        await bot.push(dm("SLOW please", ts=ts), event_id="EvSlow")
        await fake.wait_until(
            lambda: bot.replies(ts) and "Stop" in buttons(bot.replies(ts)[0]), timeout=BOUND
        )
        await fake.wait_until(lambda: bot.prompts("SLOW please") == 1, timeout=BOUND)
        progress = bot.replies(ts)[0]
        token = buttons(progress)["Stop"]
        owner = click(OWNER, CHANNEL, progress["ts"], token)
        await fake.push(owner)
        await bot.acked(owner["envelope_id"])
        await fake.wait_until(lambda: bot.reactions(ts) == {"no_entry_sign"}, timeout=BOUND)
        assert "Stop" not in buttons(progress), "a finished turn has no Stop button"
        assert "⏹️" in words(progress), progress
        finals = [m for m in bot.replies(ts) if m is not progress]
        assert len(finals) <= 1, "an interrupted turn sends at most its partial answer once"
