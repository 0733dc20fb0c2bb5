"""The card host: one supervised card actor per open turn, forgotten once the turn settled."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import trio

from robota.core.cards import (
    CardTurn,
    FeishuPlatform,
    FinalAnswerDelivered,
    FinalAnswerFailed,
    SlackPlatform,
)
from robota.core.events import TextDelta, TurnCompleted, TurnStarted
from robota.core.presentation import UserSteer
from robota.core.store import final_delivery, turn_snapshot
from robota.core.testing import crash, wait_until

from ._harness import FAST, host_world

RARE_SNAPSHOTS = replace(FAST, snapshot_interval=3600.0)
"""Only the first card saves a snapshot: what is saved later is the actor's exit save."""


def feishu() -> FeishuPlatform:
    return FeishuPlatform(agent="codex")


def turn_events(turn_id: str, answer: str) -> list:
    return [
        TurnStarted(turn_id),
        TextDelta(f"{turn_id}-c", "Working on it.", "commentary"),
        UserSteer("also add tests"),
        TextDelta(f"{turn_id}-f", answer, "final"),
        TurnCompleted(turn_id, "completed", final_item_id=f"{turn_id}-f"),
    ]


async def test_each_turn_gets_its_own_actor_card_and_answer_then_is_forgotten(
    tmp_path: Path,
) -> None:
    async with host_world(tmp_path / "s.db") as world:
        one = world.host.open(
            CardTurn("t1", "task", "chat-1"), feishu, world.delivery, notify=world.notices.add
        )
        two = world.host.open(
            CardTurn("t2", "task", "chat-2"),
            lambda: SlackPlatform(agent="claude"),
            world.delivery,
            notify=world.notices.add,
        )
        assert world.host.open(CardTurn("t1", "task", "chat-1"), feishu, world.delivery) is one
        assert sorted(world.host.open_turns) == ["t1", "t2"]
        for event in turn_events("t1", "Answer one."):
            one.tell(event)
        for event in turn_events("t2", "Answer two."):
            two.tell(event)
        await wait_until(
            lambda: sum(isinstance(n, FinalAnswerDelivered) for n in world.notices.messages) == 2
        )
        await wait_until(lambda: world.host.open_turns == [])
        assert one.is_closed and two.is_closed
        sink = world.sink
        assert len(sink.cards) == 2
        finals = {c.args[0]: c.args[1] for c in sink.calls if c.method == "send_final"}
        assert set(finals) == {"chat-1", "chat-2"}
        assert finals["chat-2"][0]["blocks"][0]["text"] == "Answer two."
        assert world.read(final_delivery, "t1").delivered
        assert world.read(final_delivery, "t2").delivered


async def test_a_crashed_card_actor_is_restarted_by_its_turn_supervisor(tmp_path: Path) -> None:
    async with host_world(tmp_path / "s.db") as world:
        card = world.host.open(
            CardTurn("t1", "task", "chat"), feishu, world.delivery, notify=world.notices.add
        )
        events = turn_events("t1", "The answer.")
        card.tell(events[0])
        await wait_until(lambda: len(world.sink.calls) == 1)
        crash(card)
        for event in events[1:]:
            card.tell(event)
        await wait_until(
            lambda: any(isinstance(n, FinalAnswerDelivered) for n in world.notices.messages)
        )
        assert world.sink.methods().count("send_card") == 1
        assert world.sink.methods().count("send_final") == 1


async def test_a_card_actor_that_keeps_crashing_reports_the_turn_failed(tmp_path: Path) -> None:
    async with host_world(tmp_path / "s.db", intensity=2) as world:
        card = world.host.open(
            CardTurn("t1", "task", "chat"), feishu, world.delivery, notify=world.notices.add
        )
        card.tell(TurnStarted("t1"))
        for _ in range(3):
            crash(card, "a bug in rendering")
            await trio.sleep(0.1)
        await wait_until(
            lambda: any(isinstance(n, FinalAnswerFailed) for n in world.notices.messages)
        )
        [failed] = [n for n in world.notices.messages if isinstance(n, FinalAnswerFailed)]
        assert "card renderer failed" in failed.error
        await wait_until(lambda: world.host.open_turns == [])


async def test_close_stops_a_turn_early_and_its_snapshot_is_saved(tmp_path: Path) -> None:
    async with host_world(tmp_path / "s.db", policy=RARE_SNAPSHOTS) as world:
        card = world.host.open(CardTurn("t1", "task", "chat"), feishu, world.delivery)
        card.tell(TurnStarted("t1"))
        for n in range(20):
            card.tell(TextDelta("m", f"word{n} "))
        await wait_until(lambda: len(world.sink.calls) >= 1)
        world.host.close("t1")
        await wait_until(lambda: world.host.open_turns == [])
        saved = world.read(turn_snapshot, "t1")
        assert saved is not None
        texts = [a["text"] for a in saved.snapshot["activities"] if a["type"] == "message"]
        assert texts == ["".join(f"word{n} " for n in range(20))]


async def test_stopping_the_host_saves_every_open_turn(tmp_path: Path) -> None:
    async with host_world(tmp_path / "s.db", policy=RARE_SNAPSHOTS) as world:
        for turn_id in ("t1", "t2"):
            card = world.host.open(CardTurn(turn_id, "task", "chat"), feishu, world.delivery)
            card.tell(TurnStarted(turn_id))
        await wait_until(lambda: len(world.sink.cards) == 2)
        for turn_id in ("t1", "t2"):
            card = world.host.open(CardTurn(turn_id, "task", "chat"), feishu, world.delivery)
            card.tell(TextDelta("m", f"progress of {turn_id}"))
    # The tree stopped: the host first (reverse order), its actors saving as they went.
    for turn_id in ("t1", "t2"):
        saved = world.read(turn_snapshot, turn_id)
        assert saved is not None
        texts = [a["text"] for a in saved.snapshot["activities"] if a["type"] == "message"]
        assert texts == [f"progress of {turn_id}"]
