"""The ``/sessions`` card end to end: a real host process with a real agent against the fake
model and the fake platform, over a store seeded with more tasks than one page shows. The card
is a reply to the command; Next PATCHes the same message with the next page; Switch makes that
entry's task the route's current one; a used token, a forged one and a stranger's click are
refused."""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

import trio

from robota.core.store import CreateTask, Database, migrate, open_reader, route_binding

from ...support.fake_feishu import FakePlatform, Sent, fake_platform
from ...support.feishu import (
    BOUND,
    OWNER,
    buttons_in,
    click_event,
    configure,
    host_process,
    message_event,
)
from ...support.host import sandboxed
from ...support.model_server import FakeModel
from ...support.processes import processes_with_home_under

ROUTE = "feishu:chat_id:oc_p2p1"


def _seed(db_path: Path, cwd: Path, count: int) -> None:
    """``count`` tasks, ``s1`` the oldest (the listing's last entry, numbered ``count``)."""
    db_path.parent.mkdir(parents=True, exist_ok=True)
    with closing(Database(sqlite3.connect(db_path, isolation_level=None))) as db:
        migrate(db)
        for n in range(1, count + 1):
            CreateTask(
                f"s{n}aaaaaaaaaa", "codex-acp", str(cwd), "acp", title=f"seeded {n}", at=1000.0 + n
            ).apply(db)


def _current(db_path: Path) -> str | None:
    with closing(open_reader(db_path)) as db:
        binding = route_binding(db, ROUTE)
    return binding.current_task_id if binding is not None else None


def _buttons(content: Any) -> dict[str, str]:
    """Element id -> token of every button in a card."""
    return {b["element_id"]: b["behaviors"][0]["value"]["token"] for b in buttons_in(content)}


async def _reply_to(fake: FakePlatform, message_id: str) -> Sent:
    """The one message that replies to ``message_id``, once it came."""
    await fake.wait_until(
        lambda: [m for m in fake.messages if m.reply_to == message_id], timeout=BOUND
    )
    (reply,) = [m for m in fake.messages if m.reply_to == message_id]
    return reply


def _shown(fake: FakePlatform, card: Sent) -> Any:
    patches = [p.content for p in fake.patched if p.message_id == card.message_id]
    return patches[-1] if patches else card.content


async def _acked(fake: FakePlatform, frame: str) -> dict[str, Any]:
    await fake.wait_until(lambda: any(a.header("message_id") == frame for a in fake.acks))
    return fake.ack_answer(frame)["data"]["toast"]


async def test_sessions_is_a_card_that_pages_in_place_and_switches_the_route(
    short_root: Path, model: FakeModel
) -> None:
    robota, profile = sandboxed(short_root, model, "codex-acp")
    _seed(profile.default_sqlite_path, short_root, 6)
    async with fake_platform() as fake:
        configure(robota.home, fake.domain)
        async with host_process(robota, fake, short_root / "host.log"):
            await fake.push_event(message_event(1, "/sessions"))
            card = await _reply_to(fake, "om_user1")
            assert card.msg_type == "interactive", card
            first = json.dumps(card.content, ensure_ascii=False)
            assert "seeded 6" in first and "seeded 2" in first and "seeded 1" not in first
            buttons = _buttons(card.content)
            assert {"s1", "n1", "s5", "next"} <= set(buttons) and "prev" not in buttons, buttons

            # A stranger's click and a forged token: refused, the card stays as it is.
            stranger = click_event(1, buttons["next"], card.message_id, operator="ou_x")
            assert (await _acked(fake, await fake.push_event(stranger)))["type"] == "error"
            forged = click_event(2, "not-a-token", card.message_id)
            assert (await _acked(fake, await fake.push_event(forged)))["type"] == "warning"

            # Next: the same message redrawn with the second page.
            frame = await fake.push_event(click_event(3, buttons["next"], card.message_id))
            assert (await _acked(fake, frame))["type"] == "info"
            await fake.wait_until(
                lambda: [p for p in fake.patched if p.message_id == card.message_id],
                timeout=BOUND,
            )
            second = _shown(fake, card)
            text = json.dumps(second, ensure_ascii=False)
            assert "seeded 1" in text and "seeded 2" not in text, text
            paged = _buttons(second)
            assert "prev" in paged and "next" not in paged, paged
            assert len([m for m in fake.messages if m.msg_type == "interactive"]) == 2, (
                "the start-up note and the one sessions card: no new card for the page"
            )

            # The first page's buttons are spent: Switch from it is refused.
            stale = click_event(4, buttons["s1"], card.message_id)
            assert (await _acked(fake, await fake.push_event(stale)))["type"] == "warning"

            # Switch to the oldest task (entry 6): the reply goes to the card.
            frame = await fake.push_event(click_event(5, paged["s6"], card.message_id))
            assert (await _acked(fake, frame))["type"] == "info"
            reply = await _reply_to(fake, card.message_id)
            assert "switched to task s1aaaaaaaaaa" in reply.content["text"], reply.content
            # The store's writer records the switch on its own thread: bounded, it lands.
            with trio.fail_after(BOUND):
                while _current(profile.default_sqlite_path) != "s1aaaaaaaaaa":
                    await trio.sleep(0.05)

            # A new card: NewGroup of an entry makes its group,
            # with that entry's task (not the route's) as the source.
            await fake.push_event(message_event(2, "/sessions"))
            again = await _reply_to(fake, "om_user2")
            assert "n2" in _buttons(again.content), again.content
            frame = await fake.push_event(
                click_event(6, _buttons(again.content)["n2"], again.message_id)
            )
            assert (await _acked(fake, frame))["type"] == "info"
            made = await _reply_to(fake, again.message_id)
            assert "seeded 5" in made.content["text"], made.content
            (chat,) = fake.chats
            assert chat["members"] == [OWNER], chat
    assert processes_with_home_under(short_root / "agents") == []
