"""The card actor for real: its own thread, the real store writer on a SQLite file, the timers
and the delivery service on the trio loop, a recording sink. Clocks are real; the policy runs
at a tenth of the product's pace (``FAST``), and every timing assertion is a lower bound the
design guarantees (a timer never fires early) or a generous upper bound."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
import trio
import trio.testing

from robota.core.cards import (
    CardPolicy,
    FinalAnswerDelivered,
    FinalAnswerFailed,
    PermanentSendError,
    ProgressCardPosted,
    TransientSendError,
)
from robota.core.events import (
    ApprovalRequested,
    ApprovalResolved,
    TextDelta,
    ToolCompleted,
    ToolStarted,
    ToolUpdated,
    TurnCompleted,
    TurnStarted,
)
from robota.core.presentation import TurnView
from robota.core.store import (
    ClaimCardAction,
    Claimed,
    RecordFinalDelivery,
    Refused,
    final_delivery,
    turn_snapshot,
)
from robota.core.testing import crash, wait_until
from robota.transports.feishu import FeishuPlatform
from robota.transports.slack import SlackPlatform

from ._harness import FAST, FakeSink, button_tokens, card_world

TOL = 0.03
"""Seconds of jitter between the actor deciding to send and the sink seeing the call."""


def last_card(sink: FakeSink) -> object:
    """The payload of the latest card call (send or edit); ``None`` before any."""
    cards = [c for c in sink.calls if c.method in ("send_card", "update_card")]
    return cards[-1].args[1] if cards else None


def feishu() -> FeishuPlatform:
    return FeishuPlatform(agent="codex")


def expected_card(events: list, platform=feishu) -> object:
    view = TurnView()
    for event in events:
        view.apply(event)
    return platform().render(view, elapsed=None, approval_tokens={})


def a_turn(tools: int = 3) -> list:
    events: list = [TurnStarted("t1"), TextDelta("c", "Looking.", "commentary")]
    for n in range(tools):
        events += [
            ToolStarted(f"tool-{n}", "command", "run", command=f"echo {n}"),
            ToolUpdated(f"tool-{n}", output_delta=f"{n}\n"),
            ToolCompleted(f"tool-{n}", "completed", exit_code=0),
        ]
    events += [
        TextDelta("f", "# Answer\n\n" + "All done. " * 40, "final"),
        TurnCompleted("t1", "completed", final_item_id="f"),
    ]
    return events


async def test_a_turn_end_to_end_one_card_terminal_before_the_final_once(tmp_path: Path) -> None:
    events = a_turn()
    async with card_world(tmp_path / "s.db", feishu) as world:
        world.tell(*events)
        [done] = await world.notice(FinalAnswerDelivered)
        sink = world.sink
        assert sink.methods()[0] == "send_card"
        assert sink.methods()[-1] == "send_final"
        assert sink.methods().count("send_final") == 1
        assert "send_card" not in sink.methods()[1:]
        # The card holds the terminal view; the answer is its own message(s).
        assert sink.card_payload() == expected_card(events)
        assert sink.card_payload()["header"]["template"] == "green"
        assert done.message_ids == tuple(m for m, _ in sink.finals)
        assert done.card_message_id == sink.cards[0]
        posted = await world.notice(ProgressCardPosted)
        assert posted == [ProgressCardPosted("t1", sink.cards[0])]
        ledger = world.read(final_delivery, "t1")
        assert ledger.delivered
        assert ledger.final_message_ids == done.message_ids
        assert ledger.progress_message_id == sink.cards[0]
        snapshot = world.read(turn_snapshot, "t1")
        view = TurnView()
        for event in events:
            view.apply(event)
        assert snapshot.snapshot == view.to_json()
        # Nothing moves after the answer.
        calls = len(sink.calls)
        world.tell(TextDelta("f", " more"))
        await trio.sleep(FAST.interval * 2)
        assert len(sink.calls) == calls


async def test_updates_are_spaced_and_critical_ones_come_sooner(tmp_path: Path) -> None:
    async with card_world(tmp_path / "s.db", feishu) as world:
        world.tell(TurnStarted("t1"))
        await wait_until(lambda: len(world.sink.calls) == 1)
        for n in range(40):  # a stream for about a second
            world.tell(ToolStarted(f"c{n}", "command", "run", command=f"echo {n}"))
            await trio.sleep(0.025)
        # When the actor handed each update over (the card's send first): the spacing is its
        # decision. The sink sees them after a hop to the loop that a loaded machine stretches
        # by more than TOL, one more than the next, at a tenth of the product's pace.
        start, *times = world.delivery.shown_at()
        assert len(times) >= 3
        gaps = [b - a for a, b in itertools.pairwise([start, *times])]
        assert min(gaps) >= FAST.interval - TOL
        # A new approval is critical: on screen long before the normal interval.
        before = len(world.sink.calls)
        await trio.sleep(FAST.interval)  # let the last ordinary update go
        before = len(world.sink.calls)
        asked = trio.current_time()
        world.tell(ApprovalRequested("a1", "command", "deploy", command="make deploy"))
        await wait_until(lambda: len(world.sink.calls) > before, timeout=5)
        shown = world.sink.calls[before]
        assert shown.at - asked < FAST.interval
        assert button_tokens(shown.args[1])  # its buttons are there


async def test_transient_failures_back_off_and_respect_retry_after(tmp_path: Path) -> None:
    sink = FakeSink()
    sink.fail += [
        None,  # the card is created
        TransientSendError("429", retry_after=0.3),
        TransientSendError("502"),
        TransientSendError("timeout"),
    ]
    events = a_turn(tools=1)
    async with card_world(tmp_path / "s.db", feishu, sink=sink) as world:
        world.tell(*events)
        await world.notice(FinalAnswerDelivered, timeout=20)
        updates = [c.at for c in sink.calls if c.method == "update_card"]
        assert len(updates) >= 4
        # retry_after 0.3 beats the first backoff step; then the series goes on from its second.
        assert updates[1] - updates[0] >= 0.3 - TOL
        assert updates[2] - updates[1] >= FAST.backoff[1] - TOL
        assert updates[3] - updates[2] >= FAST.backoff[2] - TOL
        assert sink.card_payload() == expected_card(events)
        assert sink.methods().count("send_final") == 1


@pytest.fixture
def virtual_clock() -> trio.testing.MockClock:
    """Virtual time that jumps only after the loop idled 0.2 s of real time: long enough for
    the actor and writer threads to finish what they are doing, so the clock never leaps over
    work in progress. Waits here block on events, never poll: each poll would cost a jump."""
    return trio.testing.MockClock(autojump_threshold=0.2)


async def test_the_product_backoff_series_in_virtual_time(
    tmp_path: Path, virtual_clock: trio.testing.MockClock
) -> None:
    sink = FakeSink()
    sink.final_sent = trio.Event()
    sink.fail += [None, *(TransientSendError("429") for _ in range(6))]
    events = a_turn(tools=1)
    async with card_world(
        tmp_path / "s.db",
        feishu,
        policy=CardPolicy(),
        sink=sink,
        clock=virtual_clock.current_time,  # the actor's clock is the timers' clock
    ) as world:
        world.tell(*events)
        with trio.fail_after(600):
            await sink.final_sent.wait()
    times = [c.at for c in sink.calls if c.method in ("send_card", "update_card")]
    gaps = [round(b - a, 1) for a, b in itertools.pairwise(times)]
    # The terminal update is critical (0.5 s); then 2, 4, 8, 16, 30, 30 s of backoff.
    assert gaps == [0.5, 2.0, 4.0, 8.0, 16.0, 30.0, 30.0]
    assert sink.methods()[-1] == "send_final"
    assert sink.card_payload() == expected_card(events)


async def test_a_permanent_final_failure_is_reported_and_not_recorded(tmp_path: Path) -> None:
    sink = FakeSink()
    sink.fail_when(lambda method, _: method == "send_final", PermanentSendError("bot removed"))
    async with card_world(tmp_path / "s.db", feishu, sink=sink) as world:
        world.tell(*a_turn(tools=0))
        [failed] = await world.notice(FinalAnswerFailed)
        assert "bot removed" in failed.error
        assert sink.methods().count("send_final") == 1
        assert not world.read(final_delivery, "t1").delivered


async def test_a_final_sent_in_parts_is_completed_not_repeated(tmp_path: Path) -> None:
    """The platform took the first chunk and failed on the second: the retry sends only the
    rest, and the ledger records every chunk's id once."""
    sink = FakeSink()
    answer = "\n\n".join(f"Paragraph {n}. " + "x" * 4000 for n in range(3))  # over 1 Slack block

    async def flaky_final(route, chunks, *, keys):
        await sink._enter("send_final", route, tuple(chunks), tuple(keys))
        if len(chunks) > 1:
            first = sink._new_id("final")
            sink.finals.append((first, chunks[0]))
            raise TransientSendError("dropped", sent=[first])
        ids = [sink._new_id("final")]
        sink.finals.append((ids[0], chunks[0]))
        return ids

    sink.send_final = flaky_final  # type: ignore[method-assign]
    events = [TurnStarted("t1"), TurnCompleted("t1", "completed", final_text=answer)]
    slack = lambda: SlackPlatform(agent="codex")  # noqa: E731
    async with card_world(tmp_path / "s.db", slack, sink=sink) as world:
        world.tell(*events)
        [done] = await world.notice(FinalAnswerDelivered, timeout=20)
    chunks = slack().final_chunks(answer)
    assert len(chunks) == 2
    assert [chunk for _, chunk in sink.finals] == chunks
    assert done.message_ids == tuple(m for m, _ in sink.finals)
    finals = [c for c in sink.calls if c.method == "send_final"]
    assert [len(c.args[1]) for c in finals] == [2, 1]
    assert [c.args[2] for c in finals] == [("t1:final:0", "t1:final:1"), ("t1:final:1",)]


@pytest.mark.concurrency
async def test_a_crash_mid_turn_loses_nothing_and_the_final_goes_once(
    tmp_path: Path, repetition: int
) -> None:
    events = a_turn(tools=6)
    cut = len(events) // 2
    async with card_world(tmp_path / "s.db", feishu) as world:
        world.tell(*events[:cut])
        await wait_until(lambda: len(world.sink.calls) >= 1)
        crash(world.card)
        world.tell(*events[cut:])  # queued behind the crash: they reach the successor
        await world.notice(FinalAnswerDelivered, timeout=10)
        await wait_until(lambda: world.supervisor.incarnation("card") == 2)
        sink = world.sink
        assert len(sink.cards) == 1  # one progress card across both incarnations
        assert sink.methods().count("send_final") == 1
        assert sink.card_payload() == expected_card(events)
        assert world.read(final_delivery, "t1").delivered


async def test_a_restart_after_the_final_sends_nothing(tmp_path: Path) -> None:
    async with card_world(tmp_path / "s.db", feishu) as world:
        world.tell(*a_turn(tools=1))
        await world.notice(FinalAnswerDelivered)
        calls = len(world.sink.calls)
        crash(world.card)
        await wait_until(lambda: world.supervisor.incarnation("card") == 2)
        [_, again] = await world.notice(FinalAnswerDelivered, count=2)
        assert again.already
        assert again.message_ids == tuple(m for m, _ in world.sink.finals)
        world.tell(TurnCompleted("t1", "completed", final_text="a second answer?"))
        await trio.sleep(FAST.interval * 2)
        assert len(world.sink.calls) == calls


async def test_a_crash_while_the_final_is_in_flight_does_not_send_it_twice(
    tmp_path: Path,
) -> None:
    sink = FakeSink()
    async with card_world(tmp_path / "s.db", feishu, sink=sink) as world:
        world.tell(TurnStarted("t1"))
        await wait_until(lambda: len(sink.calls) == 1)
        sink.delay = 0.5  # every call from now on takes half a second
        world.tell(TurnCompleted("t1", "completed", final_text="the answer"))
        await wait_until(lambda: "send_final" in sink.methods(), timeout=10)
        crash(world.card)  # while the platform is still taking the answer
        await wait_until(lambda: world.supervisor.incarnation("card") == 2)
        delivered = await world.notice(FinalAnswerDelivered, timeout=10)
        await trio.sleep(1.0)
        assert sink.methods().count("send_final") == 1
        assert len(sink.finals) == 1
        assert all(n.message_ids == (sink.finals[0][0],) for n in delivered)


async def test_an_answer_out_elsewhere_stops_every_later_edit(tmp_path: Path) -> None:
    """A late update never overwrites a turn whose final answer is out."""
    async with card_world(tmp_path / "s.db", feishu) as world:
        world.tell(TurnStarted("t1"))
        await wait_until(lambda: len(world.sink.calls) == 1)
        # Another process (a recovery) delivered the answer meanwhile.
        assert await world.store.write(RecordFinalDelivery("t1", ("other",)), timeout=5)
        # The delivery service remembers the turn; make it read the ledger again.
        world.delivery._turns.clear()
        world.tell(TextDelta("m", "late progress"))
        [done] = await world.notice(FinalAnswerDelivered)
        assert done.already
        await trio.sleep(FAST.interval * 2)
        assert world.sink.methods() == ["send_card"]


async def test_approval_buttons_claim_once_and_go_stale(tmp_path: Path) -> None:
    async with card_world(tmp_path / "s.db", feishu) as world:
        world.tell(
            TurnStarted("t1"),
            ApprovalRequested("a1", "command", "deploy", command="make deploy"),
            ApprovalRequested("a2", "command", "migrate", command="make migrate"),
        )
        await wait_until(lambda: len(button_tokens(last_card(world.sink))) == 8)
        card_id = world.sink.cards[0]
        tokens = button_tokens(world.sink.messages[card_id])
        a1_accept, a1_decline, a2_decline = tokens[0], tokens[2], tokens[6]

        async def claim(token, message_id=card_id, route="route-1"):
            op = ClaimCardAction(token, message_id, route)
            return await world.store.write(op, timeout=5)

        # The first card was sent, then its tokens bound: wait for the bind to commit.
        await wait_until(lambda: world.sink.methods().count("send_card") == 1)
        assert await claim(a1_accept, message_id="forged") == Refused("foreign")
        claimed = await claim(a1_accept)
        assert isinstance(claimed, Claimed)
        assert (claimed.action.approval_id, claimed.action.decision) == ("a1", "accept")
        assert await claim(a1_decline) == Refused("resolved")
        # The runtime reports the decision; the card drops a1's buttons.
        world.tell(ApprovalResolved("a1", "accept"))
        await wait_until(lambda: len(button_tokens(world.sink.messages[card_id])) == 4)
        # The turn ends: a2's buttons go stale.
        world.tell(TurnCompleted("t1", "interrupted"))
        await world.notice(FinalAnswerDelivered)
        assert await claim(a2_decline) == Refused("turn_ended")
        assert button_tokens(world.sink.messages[card_id]) == []


async def test_a_restarted_actor_keeps_the_buttons_of_a_pending_approval(tmp_path: Path) -> None:
    async with card_world(tmp_path / "s.db", feishu) as world:
        world.tell(TurnStarted("t1"), ApprovalRequested("a1", "command", "deploy"))
        await wait_until(lambda: len(button_tokens(last_card(world.sink))) == 4)
        before = button_tokens(last_card(world.sink))
        shown = len(world.sink.calls)
        crash(world.card)
        await wait_until(lambda: world.supervisor.incarnation("card") == 2)
        world.tell(TextDelta("m", "still waiting"))
        await wait_until(lambda: len(world.sink.calls) > shown)
        assert button_tokens(last_card(world.sink)) == before
        assert len(world.sink.cards) == 1
