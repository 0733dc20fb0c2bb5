"""Group channels end to end: a real host process with a real agent against the fake model,
serving ``transports.slack`` against the fake Slack (as test_served does).

``robota task newgroup --transport slack`` and a DM's ``!forkgroup`` make a private channel by
``conversations.create``, invite the owner (the DM's sender) by ``conversations.invite``, give
the new task the channel's route and post the welcome note there; a mention in the channel
runs a turn on that task. Slack's refusals (a name taken, an invite refused, an answer without
a channel id) are said with their reason, an invite refused archives the channel, and the host
keeps running."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import trio

from ...support.fake_slack import BOT_USER, dm
from ...support.host import task
from ...support.model_server import FakeModel
from ...support.slack import BOUND, CHANNEL, OWNER, Served, now_ts, served

# ``model`` and ``short_root``: tests/transports/conftest.py


async def robota_task(bot: Served, *args: str) -> subprocess.CompletedProcess[str]:
    """``robota task ARGS`` as a process (the host's control endpoint), off the loop the fake
    Slack runs on."""
    robota = bot.robota
    assert robota is not None
    return await trio.to_thread.run_sync(lambda: task(robota, *args))


async def robota_json(bot: Served, *args: str) -> Any:
    done = await robota_task(bot, *args, "--json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def top_level(bot: Served, channel: str) -> list[str]:
    """The bot's messages in ``channel`` outside threads (the welcome note), in order."""
    return [
        str(m.get("text"))
        for (c, _), m in sorted(bot.fake.messages.items())
        if c == channel and "thread_ts" not in m
    ]


def texts(bot: Served, ts: str, channel: str = CHANNEL) -> list[str]:
    return [str(m.get("text")) for m in bot.replies(ts, channel)]


async def dm_answered(bot: Served, text: str, event_id: str) -> None:
    """A DM whose turn has run to its end."""
    ts = now_ts()
    await bot.push(dm(text, ts=ts), event_id=event_id)
    await bot.answered(ts)


async def dm_command(bot: Served, text: str, event_id: str, reaction: str) -> list[str]:
    """A DM's command, once settled with ``reaction``: the replies in its thread."""
    ts = now_ts()
    await bot.push(dm(text, ts=ts), event_id=event_id)
    await bot.fake.wait_until(lambda: bot.reactions(ts) == {reaction}, timeout=BOUND)
    return texts(bot, ts)


def mention(channel: str, text: str, ts: str) -> dict[str, Any]:
    """The owner's message in a private channel, mentioning the bot (what it hears there)."""
    event = dm(f"<@{BOT_USER}> {text}", ts=ts)
    event.update(channel=channel, channel_type="group")
    return event


async def test_newgroup_from_the_cli_and_forkgroup_from_a_dm(
    short_root: Path, model: FakeModel
) -> None:
    # Codex (App Server): it forks threads, so !forkgroup has a turn to fork from.
    async with served(short_root, model, agent="codex") as bot:
        fake = bot.fake
        # The CLI through the host: a private channel named by Slack's rules, the owner in it.
        done = await robota_task(bot, "newgroup", "--transport", "slack", "--title", "Shop API")
        assert done.returncode == 0, done.stderr
        shop = fake.channel_named("shop-api")
        assert shop is not None and shop["is_private"], fake.channels
        assert fake.members[shop["id"]] == [OWNER]
        assert done.stdout.startswith(f"group 'shop-api' (slack {shop['id']})"), done.stdout
        assert f"(route slack:{shop['id']})" in done.stdout
        await fake.wait_until(lambda: top_level(bot, shop["id"]), timeout=BOUND)
        (welcome,) = top_level(bot, shop["id"])
        assert welcome.startswith("New task Shop API (") and "agent: codex" in welcome, welcome

        # A mention in the channel runs a turn on the new task, answered in the channel.
        ts = now_ts()
        await bot.push(mention(shop["id"], "hello in the channel", ts), event_id="EvShop")
        await bot.answered(ts, shop["id"])
        assert bot.prompts("hello in the channel") == 1
        finals = [
            m
            for m in bot.replies(ts, shop["id"])
            if any(b["type"] == "markdown" for b in m["blocks"])
        ]
        assert "ECHO: hello in the channel" in json.dumps(finals), finals
        tasks = await robota_json(bot, "list")
        (on_shop,) = [t for t in tasks if t["route"] == f"slack:{shop['id']}"]
        assert f"({on_shop['id']})" in welcome

        # !forkgroup in a DM with no task yet: refused with the reason, no channel made.
        early = await dm_command(bot, "!forkgroup", "EvEarly", "x")
        assert early == ["The channel could not be created: this chat has no task to fork yet"]
        assert len(fake.channels) == 1

        # A completed turn in the DM, then !forkgroup: a channel whose task is its fork.
        await dm_answered(bot, "first in the dm", "EvFirst")
        replies = await dm_command(bot, "!forkgroup try b", "EvFork", "white_check_mark")
        forked = fake.channel_named("try-b")
        assert forked is not None and forked["is_private"], fake.channels
        assert fake.members[forked["id"]] == [OWNER], "the sender is invited"
        assert replies == [f"Channel <#{forked['id']}> created: the task goes on there."]
        tasks = await robota_json(bot, "list")
        (source,) = [t for t in tasks if t["route"] == f"slack:{CHANNEL}"]
        (fork,) = [t for t in tasks if t["route"] == f"slack:{forked['id']}"]
        assert fork["id"] != source["id"] and fork["title"] == "try b"
        await fake.wait_until(lambda: top_level(bot, forked["id"]), timeout=BOUND)
        (welcome,) = top_level(bot, forked["id"])
        assert welcome.startswith(f"New task try b ({fork['id']})"), welcome
        assert f"forked from task {source['id']}" in welcome, "the store has it a fork"


async def test_slacks_refusals_are_said_and_the_host_keeps_running(
    short_root: Path, model: FakeModel
) -> None:
    async with served(short_root, model) as bot:
        fake = bot.fake
        # A name taken once: the next with a suffix.
        fake.refuse("conversations.create", "name_taken")
        made = await robota_json(bot, "newgroup", "--title", "Shop API")
        assert made["transport"] == "slack" and made["chat"]["title"] == "shop-api-2"
        assert [c.args["name"] for c in fake.calls_of("conversations.create")] == [
            "shop-api",
            "shop-api-2",
        ]

        # The invite refused: the CLI fails naming Slack's error, the channel is archived.
        fake.refuse("conversations.invite", "user_not_found")
        refused = await robota_task(bot, "newgroup", "--title", "Shop API")
        assert refused.returncode != 0
        assert "user_not_found" in refused.stderr, refused.stderr
        assert "xoxb-" not in refused.stderr + refused.stdout
        archived = fake.channel_named("shop-api")  # the scripted refusal took no name
        assert archived is not None and archived["is_archived"], fake.channels
        assert fake.members[archived["id"]] == []

        # An answer without a channel id: a clear refusal, nothing taken over.
        fake.scripted["conversations.create"].append((200, {}, {"ok": True, "channel": {}}))
        refused = await robota_task(bot, "newgroup", "--title", "lost")
        assert refused.returncode != 0
        assert "names no channel id" in refused.stderr, refused.stderr

        # A title with nothing Slack takes in a name: the default name; empty alike.
        garbage = await robota_json(bot, "newgroup", "--title", "!!! ???")
        assert garbage["chat"]["title"] == "robota"
        empty = await robota_json(bot, "newgroup", "--title", "")
        assert empty["chat"]["title"] == "robota-2"

        # The host still serves: a DM is answered, a chat's !newgroup works.
        await dm_answered(bot, "still here", "EvStill")
        (reply,) = await dm_command(bot, "!newgroup", "EvNew", "white_check_mark")
        assert reply.startswith("Channel <#C0GROUP") and reply.endswith("the task goes on there.")
        assert (await bot.status())["pid"] > 0
