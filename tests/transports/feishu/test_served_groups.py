"""Group chats and attachments end to end: a real host process with a real agent against the
fake model, serving ``transports.feishu`` against the fake platform (as test_served does).

``/newgroup`` and ``/forkgroup`` in a chat, and ``robota task newgroup | forkgroup`` through
the host, create a group by ``POST /open-apis/im/v1/chats`` with the person (or the owner) as
its member; the new task's route is the group's, the group gets a welcome note with the task's
settings, the asking chat a reply. A person's image or file is downloaded and handed to the
agent; a bad one is refused with a reply and runs no turn."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import trio

from ...support.fake_feishu import FakePlatform, Sent
from ...support.feishu import BOUND, OWNER, Served, message_event, served
from ...support.host import task
from ...support.media import png
from ...support.model_server import FakeModel


def texts_to(
    fake: FakePlatform, *, reply_to: str | None = None, chat: str | None = None
) -> list[str]:
    found: list[Sent] = [
        m
        for m in fake.messages
        if m.msg_type == "text"
        and (reply_to is None or m.reply_to == reply_to)
        and (chat is None or m.receive_id == chat)
    ]
    return [str(m.content.get("text", "")) for m in found]


async def robota_task(bot: Served, *args: str) -> Any:
    """``robota task ARGS --json`` as a process (the host's control endpoint), off the loop
    the fake platform runs on."""
    robota = bot.robota
    assert robota is not None
    done = await trio.to_thread.run_sync(lambda: task(robota, *args, "--json"))
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


async def test_newgroup_and_forkgroup_from_a_chat_and_from_the_cli(
    short_root: Path, model: FakeModel
) -> None:
    # Codex (App Server): it forks threads, so /forkgroup has a turn to fork from.
    async with served(short_root, model, agent="codex") as bot:
        fake = bot.fake
        # Nothing to fork yet: refused with the reason, and no chat is made.
        await fake.push_event(message_event(9, "/forkgroup"))
        await fake.wait_until(lambda: fake.reactions_on("om_user9") == ["ERROR"], timeout=BOUND)
        assert "no task to fork" in texts_to(fake, reply_to="om_user9")[0]
        assert fake.chats == []
        await fake.push_event(message_event(1, "first in private"))
        await bot.answered("om_user1")

        # /newgroup in the private chat: a group with the sender, the bot its owner.
        await fake.push_event(message_event(2, "/newgroup Project X"))
        await fake.wait_until(lambda: texts_to(fake, reply_to="om_user2"), timeout=BOUND)
        assert len(fake.chats) == 1, texts_to(fake, reply_to="om_user2")
        chat = fake.chats[0]
        assert chat["members"] == [OWNER] and chat["bot_manager"]
        assert chat["data"]["owner_id_type"] == "app_id", "the bot made it, so the bot owns it"
        group = chat["data"]["chat_id"]
        assert "Project X" in texts_to(fake, reply_to="om_user2")[0]
        await fake.wait_until(lambda: texts_to(fake, chat=group), timeout=BOUND)
        welcome = texts_to(fake, chat=group)[0]
        assert "Project X" in welcome and "agent: codex" in welcome, welcome
        await fake.wait_until(lambda: fake.reactions_on("om_user2") == ["DONE"])

        # The group is a route of its own: its messages run its task.
        await fake.push_event(
            message_event(3, "hello in the group", chat_id=group, chat_type="group")
        )
        await bot.answered("om_user3")
        (final,) = bot.finals_for("om_user3")
        assert "ECHO: hello in the group" in json.dumps(final.content, ensure_ascii=False)

        # /forkgroup from the private chat: a fork of its task, in a second group.
        await fake.push_event(message_event(4, "/fg"))
        await fake.wait_until(lambda: len(fake.chats) == 2, timeout=BOUND)
        forked = fake.chats[1]["data"]["chat_id"]
        await fake.wait_until(lambda: texts_to(fake, chat=forked), timeout=BOUND)
        assert "fork" in texts_to(fake, chat=forked)[0]
        await fake.wait_until(lambda: fake.reactions_on("om_user4") == ["DONE"])

        # The CLI through the host: the owner is invited (a CLI has no chat user).
        tasks = await robota_task(bot, "list")
        (source,) = [t["id"] for t in tasks if t["route"] == "feishu:chat_id:oc_p2p1"]
        made = await robota_task(bot, "newgroup", source, "--title", "from the cli")
        assert made["transport"] == "feishu" and made["chat"]["title"] == "from the cli"
        assert fake.chats[2]["members"] == [OWNER]
        assert made["chat"]["chat_id"] == fake.chats[2]["data"]["chat_id"]
        await fake.wait_until(lambda: texts_to(fake, chat=made["chat"]["chat_id"]), timeout=BOUND)
        fork = await robota_task(bot, "forkgroup", source)
        assert fork["task"]["forked_from"] == source
        assert len(fake.chats) == 4


def media_event(n: int, message_type: str, content: dict[str, Any]) -> dict[str, Any]:
    event = message_event(n, "")
    event["event"]["message"]["message_type"] = message_type
    event["event"]["message"]["content"] = json.dumps(content)
    return event


async def test_images_and_files_reach_the_agent_and_bad_ones_are_refused(
    short_root: Path, model: FakeModel
) -> None:
    async with served(short_root, model) as bot:
        fake = bot.fake
        # A file: downloaded, the agent told its name, size and path.
        table = b"a,b\n1,2\n"
        fake.resources[("om_user1", "file_v3_1")] = ("file", table, "text/csv")
        await fake.push_event(
            media_event(1, "file", {"file_key": "file_v3_1", "file_name": "../data.csv"})
        )
        await bot.answered("om_user1")
        (final,) = bot.finals_for("om_user1")
        answer = json.dumps(final.content, ensure_ascii=False)
        assert "data.csv" in answer and f"({len(table)} bytes)" in answer, answer
        saved = list((short_root / "home").rglob("om_user1-1-data.csv"))
        assert len(saved) == 1 and saved[0].read_bytes() == table
        assert "attachments" in saved[0].parts, "the name cannot climb out of its folder"

        # A rich-text message with an image: the image goes to the agent as an image.
        fake.resources[("om_user2", "img_v3_2")] = ("image", png(4, 3), "image/png")
        post = {
            "title": "",
            "content": [
                [{"tag": "text", "text": "what is this"}],
                [{"tag": "img", "image_key": "img_v3_2"}],
            ],
        }
        await fake.push_event(media_event(2, "post", post))
        await bot.answered("om_user2")
        sent = [r for r in model.model_requests() if r.prompt == "what is this"]
        assert sent, [r.prompt for r in model.model_requests()]
        encoded = base64.b64encode(png(4, 3)).decode()
        assert encoded in json.dumps(sent[-1].body), "the agent sent the image itself to the model"

        # Too large on the long edge, and not an image at all: refused, no turn.
        fake.resources[("om_user3", "img_v3_3")] = ("image", png(2400, 10), "image/png")
        await fake.push_event(media_event(3, "image", {"image_key": "img_v3_3"}))
        fake.resources[("om_user4", "img_v3_4")] = ("image", b"not an image", "image/png")
        await fake.push_event(media_event(4, "image", {"image_key": "img_v3_4"}))
        # A key that is not the message's: the platform's error, said in the chat.
        await fake.push_event(media_event(5, "image", {"image_key": "img_v3_other"}))
        for n in (3, 4, 5):
            await fake.wait_until(
                lambda n=n: fake.reactions_on(f"om_user{n}") == ["ERROR"], timeout=BOUND
            )
        assert "2400x10" in texts_to(fake, reply_to="om_user3")[0]
        assert "PNG" in texts_to(fake, reply_to="om_user4")[0]
        assert "File not in msg" in texts_to(fake, reply_to="om_user5")[0]
        for n in (3, 4, 5):
            assert bot.cards_for(f"om_user{n}") == []
