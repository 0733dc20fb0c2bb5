"""The bot end to end: a real host process (``run_host``, as ``robota server run`` runs it) with
a real agent against the fake model, serving ``transports.feishu`` against the fake platform on
loopback. The platform side is the test's: it pushes events over the long connection as Feishu
does and records every reaction, message, PATCH and ACK."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import trio

from robota.core.control import ControlClient
from robota.host import process_gone

from ...support.fake_feishu import FakePlatform, Request, Sent, fake_platform
from ...support.feishu import (
    BOUND,
    OWNER,
    Served,
    _buttons,
    click_event,
    configure,
    host_process,
    is_terminal,
    last_patch,
    message_event,
    served,
)
from ...support.host import sandboxed
from ...support.model_server import FakeModel
from ...support.processes import processes_with_home_under

# ``model`` and ``short_root``: tests/transports/conftest.py


async def test_an_owners_private_message_gets_onit_one_card_and_one_final(
    short_root: Path, model: FakeModel
) -> None:
    async with served(short_root, model) as bot:
        fake = bot.fake
        # Readiness: the link is up and an outbound call (the bot's info) succeeded.
        with trio.fail_after(BOUND):
            while not (status := await bot.status())["ready"]:
                await trio.sleep(0.05)
        assert status["transports"] == [{"name": "feishu", "state": "connected"}]
        # No chat is known yet: the start-up note went to the owner.
        assert [(m.receive_id, m.msg_type) for m in fake.messages] == [(OWNER, "interactive")]

        # OnIt is on the message before the agent asks the model anything.
        seen_at_onit: list[int] = []

        def on_request(request: Request) -> None:
            if request.path.endswith("/reactions") and b"OnIt" in request.body:
                seen_at_onit.append(bot.prompts("hello feishu"))

        fake.on_request = on_request
        frame = await fake.push_event(message_event(1, "hello feishu"))
        await bot.answered("om_user1")
        assert seen_at_onit == [0]
        assert bot.prompts("hello feishu") == 1, "the text reached the agent verbatim"

        cards = bot.cards_for("om_user1")
        assert len(cards) == 1, "one progress card per turn, a reply to the message"
        card_id = cards[0].message_id
        terminal = last_patch(fake, card_id)
        assert is_terminal(terminal, "green"), terminal
        (final,) = bot.finals_for("om_user1")
        assert "ECHO: hello feishu" in json.dumps(final.content, ensure_ascii=False)
        assert final.at >= max(p.at for p in fake.patched if p.message_id == card_id)
        assert final.uuid, "the final carries Feishu's idempotency key"
        await fake.wait_until(lambda: fake.reactions_on("om_user1") == ["DONE"])
        assert fake.ack_answer(frame)["code"] == 200


async def test_the_bot_ignores_strangers_duplicates_stale_and_malformed_input(
    short_root: Path, model: FakeModel
) -> None:
    async with served(short_root, model) as bot:
        fake = bot.fake
        # A non-owner: no reaction, no card, no turn.
        stranger = await fake.push_event(message_event(2, "hello from a stranger", sender="ou_x"))
        await fake.wait_until(lambda: any(a.header("message_id") == stranger for a in fake.acks))
        # The same event twice (a redelivery), and again with a new event id: one turn.
        twice = message_event(3, "only once")
        await fake.push_event(twice)
        await fake.push_event(twice)
        await fake.push_event({**twice, "header": {**twice["header"], "event_id": "ev3-again"}})
        # A message from before the outage: recorded, not run.
        stale = message_event(4, "an old command", created=time.time() - 3600)
        await fake.push_event(stale)
        # Malformed input of every kind, then the bot still answers.
        await fake.send_raw(b"\x00garbage that is no frame")
        no_sender = message_event(5, "who am I")
        del no_sender["event"]["sender"]
        await fake.push_event(no_sender)
        unknown = message_event(6, "unknown")
        unknown["header"]["event_type"] = "im.chat.disbanded_v1"
        await fake.push_event(unknown)
        await fake.push_event(message_event(7, "x" * (1024 * 1024)))
        await fake.push_event(message_event(8, "still here"))
        await bot.answered("om_user8")
        # The lane is per route: when 8 is answered, 3 (before it) was taken first.
        await bot.answered("om_user3")

        assert fake.reactions_on("om_user2") == [] and bot.cards_for("om_user2") == []
        assert bot.prompts("hello from a stranger") == 0
        assert len(bot.finals_for("om_user3")) == 1 and bot.prompts("only once") == 1
        assert len(bot.cards_for("om_user3")) == 1
        assert fake.reactions_on("om_user4") == [] and bot.prompts("an old command") == 0
        for n in (5, 6, 7):
            assert fake.reactions_on(f"om_user{n}") == []
        assert not [r for r in model.model_requests() if r.prompt and r.prompt.startswith("xxx")]
        assert "ECHO: still here" in json.dumps(bot.finals_for("om_user8")[0].content)
        assert len(fake.connections) == 1, "the connection kept working through it all"
        # Every event pushed was ACKed with 200 (the garbage frame is no event).
        assert len(fake.acks) == 9
        assert all(json.loads(a.payload or b"{}")["code"] == 200 for a in fake.acks)

        # The platform redelivers after a reconnect: still one turn.
        await fake.drop()
        await fake.wait_until(lambda: len(fake.connections) == 2, timeout=BOUND)
        await fake.push_event(twice)
        await fake.push_event(message_event(9, "after the reconnect"))
        await bot.answered("om_user9")
        assert len(bot.finals_for("om_user3")) == 1 and bot.prompts("only once") == 1


async def test_stop_from_the_card_and_a_strangers_click(short_root: Path, model: FakeModel) -> None:
    async with served(short_root, model) as bot:
        fake = bot.fake
        await fake.push_event(message_event(1, "SLOW please"))
        await fake.wait_until(lambda: bot.cards_for("om_user1"), timeout=BOUND)
        card = bot.cards_for("om_user1")[0]
        token = _stop_token(fake, card)
        await fake.wait_until(lambda: bot.prompts("SLOW please") == 1, timeout=BOUND)

        refused = await fake.push_event(click_event(1, token, card.message_id, operator="ou_x"))
        await fake.wait_until(lambda: any(a.header("message_id") == refused for a in fake.acks))
        assert fake.ack_answer(refused)["data"]["toast"]["type"] == "error"

        stop = await fake.push_event(click_event(2, token, card.message_id))
        await fake.wait_until(lambda: any(a.header("message_id") == stop for a in fake.acks))
        assert fake.ack_answer(stop)["data"]["toast"]["type"] == "info"
        await fake.wait_until(
            lambda: (
                "CrossMark" in fake.reactions_on("om_user1")
                and "OnIt" not in fake.reactions_on("om_user1")
            ),
            timeout=BOUND,
        )
        assert is_terminal(last_patch(fake, card.message_id), "grey")
        again = await fake.push_event(click_event(3, token, card.message_id))
        await fake.wait_until(lambda: any(a.header("message_id") == again for a in fake.acks))
        assert fake.ack_answer(again)["data"]["toast"]["type"] == "warning"


def _stop_token(fake: FakePlatform, card: Sent) -> str:
    contents = [card.content, *(p.content for p in fake.patched if p.message_id == card.message_id)]
    for content in contents:
        for element in content.get("body", {}).get("elements", ()):
            if element.get("element_id") == "turn_stop":
                return str(element["behaviors"][0]["value"]["token"])
    raise AssertionError("no Stop button on the card")


async def test_a_group_is_read_until_muted_and_unmuted_only_by_a_mention(
    short_root: Path, model: FakeModel
) -> None:
    async with served(short_root, model) as bot:
        fake = bot.fake

        def group(n: int, text: str, *, mention: bool = False) -> dict[str, Any]:
            return message_event(n, text, chat_id="oc_g1", chat_type="group", mention_bot=mention)

        async def acked(frame: str) -> None:
            await fake.wait_until(lambda: any(a.header("message_id") == frame for a in fake.acks))

        def texts(message_id: str) -> list[str]:
            return [
                m.content.get("text", "")
                for m in fake.messages
                if m.reply_to == message_id and m.msg_type == "text"
            ]

        await fake.push_event(group(1, "every message is read"))
        await bot.answered("om_user1")
        await fake.push_event(group(2, "/mute", mention=True))
        await fake.wait_until(lambda: fake.reactions_on("om_user2") == ["DONE"], timeout=BOUND)
        assert texts("om_user2") and "Mention-only" in texts("om_user2")[0]
        await acked(await fake.push_event(group(3, "not read while muted")))
        await fake.push_event(group(4, "read when mentioned", mention=True))
        await bot.answered("om_user4")
        assert bot.prompts("read when mentioned") == 1, "the bot's mention is not the agent's"
        await acked(await fake.push_event(group(5, "/mute off")))
        await fake.push_event(group(6, "/mute off", mention=True))
        await fake.wait_until(lambda: fake.reactions_on("om_user6") == ["DONE"], timeout=BOUND)
        await fake.push_event(group(7, "read again"))
        await bot.answered("om_user7")

        for n in (3, 5):
            assert fake.reactions_on(f"om_user{n}") == [] and not texts(f"om_user{n}")
        assert bot.prompts("not read while muted") == 0
        # A private chat refuses /mute.
        await fake.push_event(message_event(8, "/mute"))
        await fake.wait_until(lambda: fake.reactions_on("om_user8") == ["ERROR"], timeout=BOUND)
        assert "group chats" in texts("om_user8")[0]


async def test_a_host_killed_mid_turn_answers_once_after_its_restart(
    short_root: Path, model: FakeModel
) -> None:
    robota, profile = sandboxed(short_root, model, "codex-acp")
    log = short_root / "host.log"
    async with fake_platform() as fake:
        configure(robota.home, fake.domain)
        bot = Served(fake, model, profile.control_socket)
        async with host_process(robota, fake, log) as first:
            await fake.push_event(message_event(1, "SLOW crash me"))
            # Mid-turn: the card is up and the model is streaming the answer.
            await fake.wait_until(lambda: bot.cards_for("om_user1"), timeout=BOUND)
            await fake.wait_until(lambda: bot.prompts("SLOW crash me") == 1, timeout=BOUND)
            first.kill()
            await first.wait()
        assert bot.finals_for("om_user1") == []
        (first_card,) = bot.cards_for("om_user1")

        async with host_process(robota, fake, log) as second:
            await bot.answered("om_user1")
            await fake.wait_until(lambda: fake.reactions_on("om_user1") == ["DONE"])
            (final,) = bot.finals_for("om_user1")
            assert "SLOW crash me" in json.dumps(final.content, ensure_ascii=False)
            # The card the killed host left running was closed, and the turn that continued
            # showed a card of its own that ended green.
            cards = bot.cards_for("om_user1")
            assert cards[0] == first_card and len(cards) == 2
            assert is_terminal(last_patch(fake, first_card.message_id), "grey")
            assert is_terminal(last_patch(fake, cards[1].message_id), "green")
            # The chat was told, beside the message, that the turn goes on after a restart.
            (note,) = [
                m for m in fake.messages if m.reply_to == "om_user1" and m.msg_type == "text"
            ]
            assert "restarted while this was running" in note.content["text"]
        assert second.returncode == 0, log.read_text()[-4000:]

        # A third start finds nothing left to settle: still one answer, no new card; its
        # start-up note goes to the private chat it knows now.
        notes = len([m for m in fake.messages if m.receive_id == "oc_p2p1"])
        async with host_process(robota, fake, log):
            await fake.wait_until(
                lambda: len([m for m in fake.messages if m.receive_id == "oc_p2p1"]) > notes
            )
            await fake.push_event(message_event(2, "after the crash"))
            await bot.answered("om_user2")
        assert len(bot.finals_for("om_user1")) == 1 and len(bot.cards_for("om_user1")) == 2
    assert processes_with_home_under(short_root / "agents") == []


async def test_an_approval_is_answered_by_the_owners_click_not_a_strangers(
    short_root: Path, model: FakeModel
) -> None:
    async with served(short_root, model, ask=True) as bot:
        fake = bot.fake
        await fake.push_event(message_event(1, "SHELL: touch made.txt && echo made"))
        await fake.wait_until(lambda: bot.cards_for("om_user1"), timeout=BOUND)
        card = bot.cards_for("om_user1")[0]
        await fake.wait_until(lambda: "Allow once" in _buttons(fake, card), timeout=BOUND)
        token = _buttons(fake, card)["Allow once"]

        stranger = await fake.push_event(click_event(1, token, card.message_id, operator="ou_x"))
        await fake.wait_until(lambda: any(a.header("message_id") == stranger for a in fake.acks))
        assert fake.ack_answer(stranger)["data"]["toast"]["type"] == "error"
        forged = await fake.push_event(click_event(2, "forged-token", card.message_id))
        await fake.wait_until(lambda: any(a.header("message_id") == forged for a in fake.acks))
        assert fake.ack_answer(forged)["data"]["toast"]["type"] == "warning"

        owner = await fake.push_event(click_event(3, token, card.message_id))
        await fake.wait_until(lambda: any(a.header("message_id") == owner for a in fake.acks))
        assert fake.ack_answer(owner)["data"]["toast"]["type"] == "success"
        await bot.answered("om_user1")
        (final,) = bot.finals_for("om_user1")
        assert "made" in json.dumps(final.content), final.content
        assert is_terminal(last_patch(fake, card.message_id), "green")
        assert "Allow once" not in _buttons(fake, card), "an answered approval has no buttons"
        await fake.wait_until(lambda: fake.reactions_on("om_user1") == ["DONE"])


async def test_a_topic_is_a_route_of_its_own_and_a_big_tool_output_stays_within_budget(
    short_root: Path, model: FakeModel
) -> None:
    async with served(short_root, model) as bot:
        fake = bot.fake

        def group(n: int, text: str, thread: str = "") -> dict[str, Any]:
            return message_event(n, text, chat_id="oc_g1", chat_type="group", thread_id=thread)

        await fake.push_event(group(1, "on the timeline"))
        await bot.answered("om_user1")
        await fake.push_event(group(2, "in the topic", "omt_1"))
        await bot.answered("om_user2")
        await fake.push_event(group(3, "HISTORY", "omt_1"))
        await bot.answered("om_user3")
        (history,) = bot.finals_for("om_user3")
        assert "HISTORY: in the topic | HISTORY" in json.dumps(history.content)
        assert bot.cards_for("om_user3"), "a topic's card replies to its message, in the topic"

        command = "python3 -c 'print(\"0123456789abcdef\" * 2560)'"  # 40 KB of output
        await fake.push_event(group(4, f"SHELL: {command}"))
        await bot.answered("om_user4")
        (card,) = bot.cards_for("om_user4")
        assert is_terminal(last_patch(fake, card.message_id), "green")
        bodies = [p for p in fake.requests if p.method == "PATCH"]
        assert bodies and max(len(p.body) for p in bodies) <= 30 * 1024


async def test_a_host_killed_between_sending_the_answer_and_recording_it_sends_it_once(
    short_root: Path, model: FakeModel
) -> None:
    robota, profile = sandboxed(short_root, model, "codex-acp")
    log = short_root / "host.log"
    async with fake_platform() as fake:
        configure(robota.home, fake.domain)
        bot = Served(fake, model, profile.control_socket)
        fake.hold_posts = True
        async with host_process(robota, fake, log) as first:
            await fake.push_event(message_event(1, "answer me once"))
            await fake.wait_until(lambda: bot.finals_for("om_user1"), timeout=BOUND)
            first.kill()
            await first.wait()
        (sent,) = bot.finals_for("om_user1")
        fake.hold_posts = False
        async with host_process(robota, fake, log):
            await fake.wait_until(lambda: fake.reactions_on("om_user1") == ["DONE"], timeout=BOUND)
            # Sent again after the restart with the same uuid: the platform keeps one.
            assert [
                r
                for r in fake.requests
                if r.path.endswith("/reply") and sent.uuid.encode() in r.body
            ][1:]
            assert bot.finals_for("om_user1") == [sent]
            assert "ECHO: answer me once" in json.dumps(sent.content)
            (card,) = bot.cards_for("om_user1")
            assert is_terminal(last_patch(fake, card.message_id), "green")
        assert bot.prompts("answer me once") == 1, "the turn was not run again"
    assert processes_with_home_under(short_root / "agents") == []


def _note_texts(fake: FakePlatform) -> list[tuple[str, str, str]]:
    """(message id, text, cancel token or "") of every note card the bot sent, with its latest
    PATCH applied."""
    found = []
    for sent in fake.messages:
        if sent.msg_type != "interactive":
            continue
        content = sent.content
        patches = [p.content for p in fake.patched if p.message_id == sent.message_id]
        if patches:
            content = patches[-1]
        elements = content.get("body", {}).get("elements", ())
        text = "".join(e.get("content", "") for e in elements if e.get("element_id") == "note")
        token = "".join(
            str(e["behaviors"][0]["value"]["token"])
            for e in elements
            if e.get("element_id") == "note_action"
        )
        if text:
            found.append((sent.message_id, text, token))
    return found


async def test_an_owners_restart_enrolls_the_chat_and_a_strangers_is_ignored(
    short_root: Path, model: FakeModel
) -> None:
    robota, profile = sandboxed(short_root, model, "codex-acp")
    async with fake_platform() as fake:
        configure(robota.home, fake.domain)
        async with host_process(robota, fake, short_root / "host.log") as process:
            old = process.pid
            bot = Served(fake, model, profile.control_socket)
            await fake.wait_until(lambda: _note_texts(fake), timeout=BOUND)  # the start-up note
            online = len(_note_texts(fake))

            # A stranger's /restart: no reaction, no note, nothing scheduled.
            stranger = await fake.push_event(message_event(1, "/restart", sender="ou_x"))
            await fake.wait_until(
                lambda: any(a.header("message_id") == stranger for a in fake.acks)
            )
            # Any other argument is refused with a usage reply.
            await fake.push_event(message_event(2, "/restart now"))
            await fake.wait_until(lambda: "ERROR" in fake.reactions_on("om_user2"), timeout=BOUND)
            usage = [m for m in fake.messages if m.reply_to == "om_user2"]
            assert "usage: /restart or /restart --force" in json.dumps(usage[0].content)

            # The owner's /restart: a scheduled note answering it, with a cancel button.
            await fake.push_event(message_event(3, "/restart"))
            await fake.wait_until(lambda: bot.cards_for("om_user3"), timeout=BOUND)
            (scheduled,) = bot.cards_for("om_user3")
            await fake.wait_until(lambda: "DONE" in fake.reactions_on("om_user3"), timeout=BOUND)
            notes = {m: (text, token) for m, text, token in _note_texts(fake)}
            text, token = notes[scheduled.message_id]
            assert text.startswith("Restart scheduled") and token
            assert fake.reactions_on("om_user1") == []
            assert not any(m.reply_to == "om_user1" for m in fake.messages)
            assert (await bot.status())["pid"] == old

            # A stranger's click refused; the owner's click cancels: the card says so.
            refused = await fake.push_event(
                click_event(1, token, scheduled.message_id, operator="ou_x")
            )
            await fake.wait_until(lambda: any(a.header("message_id") == refused for a in fake.acks))
            assert fake.ack_answer(refused)["data"]["toast"]["type"] == "error"
            cancel = await fake.push_event(click_event(2, token, scheduled.message_id))
            await fake.wait_until(lambda: any(a.header("message_id") == cancel for a in fake.acks))
            assert fake.ack_answer(cancel)["data"]["toast"]["type"] == "success"
            await fake.wait_until(
                lambda: any(
                    m == scheduled.message_id and t == "Restart cancelled." and not k
                    for m, t, k in _note_texts(fake)
                ),
                timeout=BOUND,
            )

            # /restart --force: scheduled, restarting, and the new host's restarted note.
            connections = len(fake.connections)
            await fake.push_event(message_event(4, "/restart --force"))
            with trio.fail_after(BOUND):
                await process.wait()
            assert process.returncode == 75, (short_root / "host.log").read_text()[-4000:]
            await fake.wait_until(lambda: len(fake.connections) > connections, timeout=BOUND)
            await fake.wait_until(
                lambda: any(
                    t == "Restarted: robota is back online." for _, t, _ in _note_texts(fake)
                ),
                timeout=BOUND,
            )
            texts = [t for _, t, _ in _note_texts(fake)]
            # The restarting note got out before the old host stopped its transports.
            assert "Restarting now..." in texts, texts
            assert len(texts) > online
            new = (await bot.status())["pid"]
            assert new != old

            def stop() -> Any:
                with ControlClient(profile.control_socket, timeout=BOUND) as client:
                    return client.call("server.stop")

            await trio.to_thread.run_sync(stop)
            with trio.fail_after(BOUND):
                while not process_gone(new):
                    await trio.sleep(0.05)
    assert processes_with_home_under(short_root / "agents") == []
