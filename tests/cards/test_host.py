"""The card host: one supervised card actor per open turn, forgotten once the turn settled."""

from __future__ import annotations

import gc
import json
import threading
import weakref
from dataclasses import replace
from pathlib import Path

import pytest
import trio

from robota.core.cards import CardTurn, FinalAnswerDelivered, FinalAnswerFailed
from robota.core.events import TextDelta, TurnCompleted, TurnStarted
from robota.core.presentation import UserSteer
from robota.core.store import RecordFinalDelivery, final_delivery, turn_snapshot
from robota.core.testing import crash, wait_until
from robota.transports.feishu import FeishuPlatform
from robota.transports.slack import SlackPlatform

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


async def test_what_is_told_to_a_settled_card_goes_to_the_hosts_one_dead_letter_ring(
    tmp_path: Path,
) -> None:
    async with host_world(tmp_path / "s.db") as world:
        cards = [
            world.host.open(CardTurn(t, "task", f"chat-{t}"), feishu, world.delivery)
            for t in ("t1", "t2")
        ]
        for card, turn_id in zip(cards, ("t1", "t2"), strict=True):
            for event in turn_events(turn_id, f"Answer {turn_id}."):
                card.tell(event)
        await wait_until(lambda: world.host.open_turns == [])
        assert world.host.dead_letters.count == 0
        for card in cards:
            card.tell(TextDelta("late", "too late", "final"))
        assert world.host.dead_letters.count == 2
        assert [(name, kind) for name, kind, _ in world.host.dead_letters.recent] == [
            ("card t1", "TextDelta"),
            ("card t2", "TextDelta"),
        ]


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


async def test_a_fresh_turn_reads_no_store_before_its_card_and_a_reopened_one_does(
    tmp_path: Path,
) -> None:
    # Both turns' ledgers say their answer is out: only a turn opened again from the store
    # (not fresh) reads that, and sends nothing; a fresh one reads nothing on its way to its card.
    async with host_world(tmp_path / "s.db") as world:
        for turn_id in ("t-new", "t-old"):
            await world.store.write(RecordFinalDelivery(turn_id, ("final-old",)), timeout=5.0)
        fresh = world.host.open(
            CardTurn("t-new", "task", "chat-new", fresh=True),
            feishu,
            world.delivery,
            notify=world.notices.add,
        )
        reopened = world.host.open(
            CardTurn("t-old", "task", "chat-old"), feishu, world.delivery, notify=world.notices.add
        )
        fresh.tell(TurnStarted("t-new"))
        reopened.tell(TurnStarted("t-old"))
        await wait_until(
            lambda: (
                "send_card" in world.sink.methods()
                and any(isinstance(n, FinalAnswerDelivered) for n in world.notices.messages)
            )
        )
        delivered = [n for n in world.notices.messages if isinstance(n, FinalAnswerDelivered)]
        # The reopened turn read its ledger and sent nothing; the fresh one sent its card
        # unread (recording it is what then finds the ledger's answer: it may stop there too).
        assert [n.already for n in delivered if n.turn_id == "t-old"] == [True]
        assert [c.args[0] for c in world.sink.calls if c.method == "send_card"] == ["chat-new"]


async def test_a_fresh_turns_restarted_card_actor_restores_what_it_had(tmp_path: Path) -> None:
    async with host_world(tmp_path / "s.db") as world:
        card = world.host.open(
            CardTurn("t1", "task", "chat", fresh=True),
            feishu,
            world.delivery,
            notify=world.notices.add,
        )
        card.tell(TurnStarted("t1"))
        card.tell(TextDelta("t1-c", "Said before the crash.", "commentary"))
        await wait_until(lambda: "Said before the crash." in json.dumps(world.sink.messages))
        crash(card)
        card.tell(TextDelta("t1-f", "The answer.", "final"))
        card.tell(TurnCompleted("t1", "completed", final_item_id="t1-f"))
        await wait_until(
            lambda: any(isinstance(n, FinalAnswerDelivered) for n in world.notices.messages)
        )
        # The successor started from the snapshot its predecessor saved, not empty: the card
        # it ends with still shows what was said before the crash, on the same message.
        assert world.sink.methods().count("send_card") == 1
        assert "Said before the crash." in json.dumps(world.sink.card_payload())


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


async def test_a_card_opened_on_the_hosts_loop_starts_before_the_loop_turns_once_more(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with host_world(tmp_path / "s.db") as world:
        started: list[str] = []
        expect_new = world.delivery.expect_new

        def starting(turn_id: str) -> None:  # the host's first step in starting the actor
            started.append(turn_id)
            expect_new(turn_id)

        monkeypatch.setattr(world.delivery, "expect_new", starting)
        card = world.host.open(
            CardTurn("t1", "task", "chat", fresh=True),
            feishu,
            world.delivery,
            notify=world.notices.add,
        )
        assert started == ["t1"]  # no checkpoint in between
        for event in turn_events("t1", "The answer."):
            card.tell(event)
        await wait_until(
            lambda: any(isinstance(n, FinalAnswerDelivered) for n in world.notices.messages)
        )
        other = await trio.to_thread.run_sync(
            lambda: world.host.open(
                CardTurn("t2", "task", "chat", fresh=True),
                feishu,
                world.delivery,
                notify=world.notices.add,
            )
        )
        for event in turn_events("t2", "Another."):
            other.tell(event)
        await wait_until(
            lambda: sum(isinstance(n, FinalAnswerDelivered) for n in world.notices.messages) == 2
        )
        assert started == ["t1", "t2"]  # from another thread: posted, then started the same


def card_threads() -> int:
    return sum(1 for t in threading.enumerate() if t.name.startswith("CardActor"))


async def test_after_a_burst_of_turns_no_card_actor_or_entry_is_left(tmp_path: Path) -> None:
    """Issue 28 s.3: the cards of many turns at once, each settled, leave nothing running:
    the host's turns and the card actors' threads return to what they were before."""
    async with host_world(tmp_path / "s.db") as world:
        baseline = card_threads()
        cards = [
            world.host.open(
                CardTurn(f"t{i}", "task", f"chat-{i}"),
                feishu,
                world.delivery,
                notify=world.notices.add,
            )
            for i in range(20)
        ]
        await wait_until(lambda: len(world.host.open_turns) == 20)
        for i, card in enumerate(cards):
            for event in turn_events(f"t{i}", f"Answer {i}."):
                card.tell(event)
        await wait_until(
            lambda: sum(isinstance(n, FinalAnswerDelivered) for n in world.notices.messages) == 20,
            timeout=30.0,
        )
        await wait_until(lambda: world.host.open_turns == [])
        await wait_until(lambda: card_threads() == baseline)
        assert all(card.is_closed for card in cards)


async def test_a_settled_turns_card_is_freed_without_the_garbage_collector(
    tmp_path: Path,
) -> None:
    """A turn's entry, its supervisor and its card's closures hold no reference cycle: once the
    turn is forgotten they go at once, where a cycle per turn (about 60 objects, 8 KB) waited
    for a full collection, which a busy burst's heap grew by (issue 28 s.3)."""
    async with host_world(tmp_path / "s.db") as world:
        card = world.host.open(
            CardTurn("t1", "task", "chat-1"), feishu, world.delivery, notify=world.notices.add
        )
        await wait_until(lambda: world.host.open_turns == ["t1"])
        supervisor = weakref.ref(world.host._turns["t1"].supervisor)
        gc.collect()
        gc.disable()
        try:
            for event in turn_events("t1", "The answer."):
                card.tell(event)
            await wait_until(lambda: world.host.open_turns == [])
            assert any(isinstance(n, FinalAnswerDelivered) for n in world.notices.messages)
            await wait_until(lambda: supervisor() is None)
        finally:
            gc.enable()


async def test_the_threads_stay_bounded_while_many_cards_are_open_at_once(
    tmp_path: Path,
) -> None:
    """Issue 28 s.3: a card costs no thread of its own (it runs on the host's loop), so 50
    turns streaming at once add no thread to the process, where each card was a thread (and a
    one-child supervisor) before, and their heaps outlived the burst."""
    async with host_world(tmp_path / "s.db") as world:
        baseline = threading.active_count()
        most = baseline

        async def watch() -> None:
            nonlocal most
            while True:
                most = max(most, threading.active_count())
                await trio.sleep(0.005)

        async with trio.open_nursery() as nursery:
            nursery.start_soon(watch)
            cards = [
                world.host.open(
                    CardTurn(f"t{i}", "task", f"chat-{i}", fresh=True),
                    feishu,
                    world.delivery,
                    notify=world.notices.add,
                )
                for i in range(50)
            ]
            assert len(world.host.open_turns) == 50
            for i, card in enumerate(cards):
                card.tell(TurnStarted(f"t{i}"))
            await wait_until(lambda: len(world.sink.cards) == 50, timeout=30.0)
            for i, card in enumerate(cards):
                for event in turn_events(f"t{i}", f"Answer {i}.")[1:]:
                    card.tell(event)
            await wait_until(
                lambda: (
                    sum(isinstance(n, FinalAnswerDelivered) for n in world.notices.messages) == 50
                ),
                timeout=30.0,
            )
            await wait_until(lambda: world.host.open_turns == [])
            nursery.cancel_scope.cancel()
        assert most <= baseline + 2, f"{most} threads with 50 cards open, {baseline} before"
        assert all(card.is_closed for card in cards)
