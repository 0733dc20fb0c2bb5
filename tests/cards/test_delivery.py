"""The delivery service on its own: lanes per turn, the ledger's gates, failures, stopping."""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import trio

from robota.core import Address, ChildSpec, Supervisor
from robota.core.cards import (
    CardDelivery,
    CardFailed,
    CardShown,
    CardSkipped,
    DeliverFinal,
    FinalFailed,
    FinalSent,
    PermanentSendError,
    ShowCard,
    TransientSendError,
)
from robota.core.store import (
    CardGate,
    ClaimFinalSend,
    ClaimProgressCard,
    Database,
    FinalGate,
    RecordFinalDelivery,
    StoreClient,
    StoreWriter,
    final_delivery,
    open_reader,
)
from robota.core.testing import FAST_BACKOFF, Recording, wait_until

from ._harness import CardLookupSink, FakeSink, LookupSink


@dataclass
class Rig:
    delivery: CardDelivery
    sink: FakeSink
    store: StoreClient
    path: Path
    supervisor: Supervisor
    replies: Recording = field(default_factory=Recording)

    def show(self, turn: str, n: int, payload: Any = None) -> None:
        request = ShowCard(f"{turn}-{n}", turn, f"route-{turn}", payload or {"n": n}, f"h{n}")
        self.delivery.submit(request, self.replies.add)

    def final(self, turn: str, n: int, chunks: tuple[Any, ...] = ("answer",)) -> None:
        request = DeliverFinal(f"{turn}-{n}", turn, f"route-{turn}", chunks)
        self.delivery.submit(request, self.replies.add)

    def ledger(self, turn: str) -> Any:
        db = open_reader(self.path)
        try:
            return final_delivery(db, turn)
        finally:
            db.close()

    def ledger_claim(self, turn: str) -> float:
        """When ``turn``'s card was first claimed."""
        db = open_reader(self.path)
        try:
            (row,) = db.query(
                "SELECT card_claimed_at FROM final_deliveries WHERE turn_id = ?", (turn,)
            )
            return float(row["card_claimed_at"])
        finally:
            db.close()


@asynccontextmanager
async def rig(path: Path, sink: FakeSink | None = None, **options: Any) -> AsyncIterator[Rig]:
    sink = sink if sink is not None else FakeSink()
    parts: dict[str, CardDelivery] = {}
    supervisor = Supervisor(
        "delivery-test",
        [
            ChildSpec("store", lambda: StoreWriter(path)),
            ChildSpec("delivery", lambda: parts["delivery"]),
        ],
        backoff=FAST_BACKOFF,
    )
    store = StoreClient(supervisor.address("store"))
    parts["delivery"] = CardDelivery(sink, store, **options)
    async with trio.open_nursery() as nursery:
        await nursery.start(supervisor.run)
        try:
            yield Rig(parts["delivery"], sink, store, path, supervisor)
        finally:
            supervisor.stop()


async def test_requests_of_a_turn_run_in_order_and_turns_run_side_by_side(tmp_path: Path):
    async with rig(tmp_path / "s.db") as r:
        r.sink.delay = 0.2
        for n in range(4):
            r.show("a", n)
        r.show("b", 0)
        replies = await r.replies.received(5, timeout=10)
    a = [x for x in replies if x.turn_id == "a"]
    assert [x.request_id for x in a] == ["a-0", "a-1", "a-2", "a-3"]
    assert [x.created for x in a] == [True, False, False, False]
    assert len({x.message_id for x in a}) == 1
    assert r.sink.messages[a[0].message_id] == {"n": 3}
    # Turn b did not wait behind turn a's four calls.
    b_call = next(c for c in r.sink.calls if c.args[0] == "route-b")
    assert b_call.at - r.sink.calls[0].at < 0.15


async def test_a_second_final_for_a_turn_is_not_sent(tmp_path: Path) -> None:
    async with rig(tmp_path / "s.db") as r:
        r.final("t", 1, ("one", "two"))
        r.final("t", 2, ("one", "two"))
        first, second = await r.replies.received(2)
        assert first == FinalSent("t-1", "t", ("final-1", "final-2"), already=False)
        assert second == FinalSent("t-2", "t", ("final-1", "final-2"), already=True)
        assert r.sink.methods() == ["send_final"]
        assert r.ledger("t").final_message_ids == ("final-1", "final-2")


async def test_a_turn_delivered_elsewhere_is_neither_edited_nor_answered(tmp_path: Path) -> None:
    async with rig(tmp_path / "s.db") as r:
        assert await r.store.write(RecordFinalDelivery("t", ("x1",)), timeout=5)
        r.show("t", 1)
        r.final("t", 2, ("a longer answer", "in two chunks"))
        skipped, sent = await r.replies.received(2)
        assert skipped == CardSkipped("t-1", "t", None, ("x1",))
        assert sent == FinalSent("t-2", "t", ("x1",), already=True)
        assert r.sink.calls == []


async def test_the_card_id_comes_from_the_ledger_after_a_restart(tmp_path: Path) -> None:
    async with rig(tmp_path / "s.db") as r:
        r.show("t", 1)
        await r.replies.received(1)
    # A new process: a new delivery service with an empty memory, the same file.
    async with rig(tmp_path / "s.db") as r2:
        r2.sink.messages["card-1"] = {"n": 1}  # the platform still has the card
        r2.show("t", 2)
        [shown] = await r2.replies.received(1)
        assert shown == CardShown("t-2", "t", "card-1", "h2", created=False)
        assert r2.sink.methods() == ["update_card"]


async def test_failures_are_typed_for_the_actor(tmp_path: Path) -> None:
    async with rig(tmp_path / "s.db", send_timeout=0.2) as r:
        r.sink.fail += [PermanentSendError("bad card"), RuntimeError("sink bug")]
        r.show("t", 1)
        r.show("t", 2)
        await r.replies.received(2)
        r.sink.delay = 1.0
        r.show("t", 3)
        one, two, three = await r.replies.received(3)
        assert isinstance(one, CardFailed) and not one.transient and "bad card" in one.error
        assert isinstance(two, CardFailed) and not two.transient and "sink bug" in two.error
        assert isinstance(three, CardFailed) and three.transient
        assert "no answer within 0.2 s" in three.error


class Gate:
    """A write op that holds the store writer until released."""

    def __init__(self) -> None:
        self.entered = threading.Event()
        self.release = threading.Event()

    def apply(self, db: Database, /) -> None:
        self.entered.set()
        self.release.wait(10)


async def test_an_answer_sent_but_not_recorded_is_recorded_on_retry_not_sent_again(
    tmp_path: Path,
) -> None:
    async with rig(tmp_path / "s.db", store_timeout=0.3) as r:
        r.show("t", 0)  # the turn's ledger entry is loaded before the store is held
        await r.replies.received(1)
        gate = Gate()
        r.store.submit(gate, lambda _: None)
        await trio.to_thread.run_sync(gate.entered.wait, 5)
        r.final("t", 1, ("a", "b"))
        failed = (await r.replies.received(2))[1]
        assert isinstance(failed, FinalFailed) and failed.transient
        assert "store" in failed.error
        gate.release.set()
        r.final("t", 2, ("a", "b"))
        sent = (await r.replies.received(3))[2]
        assert sent == FinalSent("t-2", "t", ("final-2", "final-3"), already=False)
        assert r.sink.methods().count("send_final") == 1
        assert r.ledger("t").final_message_ids == ("final-2", "final-3")


async def test_stopping_fails_what_runs_and_queues_what_comes_for_the_next_run(
    tmp_path: Path,
) -> None:
    async with rig(tmp_path / "s.db") as r:
        r.sink.delay = 5.0
        r.show("t", 1)
        await wait_until(lambda: len(r.sink.calls) == 1)
        delivery = r.delivery
        r.supervisor.stop()  # the sink call is cut off mid-flight
        [stopped] = await r.replies.received(1)
        assert isinstance(stopped, CardFailed) and stopped.transient
        assert stopped.error == "card delivery stopped"
    r.sink.delay = 0.0
    delivery.submit(ShowCard("t-2", "t", "route-t", {"n": 2}, "h2"), r.replies.add)
    async with trio.open_nursery() as nursery:
        await nursery.start(r.supervisor.run)
        try:
            shown = (await r.replies.received(2))[1]
            assert isinstance(shown, CardShown) and shown.created
        finally:
            r.supervisor.stop()


async def test_a_full_queue_refuses_at_once(tmp_path: Path) -> None:
    sink = FakeSink()
    delivery = CardDelivery(sink, StoreClient(Address("no-store")), max_queued=2)  # never runs
    replies = Recording()
    for n in range(3):
        delivery.submit(ShowCard(f"t-{n}", "t", "r", {}, "h"), replies.add)
    [refused] = replies.messages
    assert refused == CardFailed("t-2", "t", True, None, "delivery queue full")


# -- a final's send claimed first: what may have reached the platform is asked about -----------


async def test_a_first_final_is_claimed_then_sent_without_asking(tmp_path: Path) -> None:
    async with rig(tmp_path / "s.db", LookupSink()) as r:
        r.final("t", 1, ("a", "b"))
        [sent] = await r.replies.received(1)
        assert sent == FinalSent("t-1", "t", ("final-1", "final-2"), already=False)
        assert r.sink.methods() == ["send_final"]
        # Claimed before: a second path (another run) finds it delivered.
        gate = await r.store.write(ClaimFinalSend("t"), timeout=5)
        assert gate == FinalGate("sent", ("final-1", "final-2"))


async def test_a_final_a_killed_run_claimed_is_looked_up_and_only_the_rest_sent(
    tmp_path: Path,
) -> None:
    """The last run claimed the send, Slack kept its first chunk, and the run died before the
    ledger's record: the chunk kept is not sent again."""
    sink = LookupSink()
    sink.keys["t:final:0"] = "kept-0"
    async with rig(tmp_path / "s.db", sink) as r:
        assert await r.store.write(ClaimFinalSend("t"), timeout=5) == FinalGate("send")
        r.final("t", 1, ("a", "b"))
        [sent] = await r.replies.received(1)
        assert sent == FinalSent("t-1", "t", ("kept-0", "final-1"), already=False)
        assert r.sink.methods() == ["sent_finals", "send_final"]
        assert r.sink.calls[1].args[1:] == (("b",), ("t:final:1",))
        assert r.ledger("t").final_message_ids == ("kept-0", "final-1")


async def test_a_final_kept_whole_by_the_platform_is_recorded_not_sent(tmp_path: Path) -> None:
    sink = LookupSink()
    sink.keys.update({"t:final:0": "kept-0", "t:final:1": "kept-1"})
    async with rig(tmp_path / "s.db", sink) as r:
        await r.store.write(ClaimFinalSend("t"), timeout=5)
        r.final("t", 1, ("a", "b"))
        [sent] = await r.replies.received(1)
        assert sent == FinalSent("t-1", "t", ("kept-0", "kept-1"), already=False)
        assert r.sink.methods() == ["sent_finals"]


async def test_a_sink_that_cannot_tell_sends_a_claimed_final_again(tmp_path: Path) -> None:
    """Its platform drops the repeat by the chunks' keys (Feishu's ``uuid``)."""
    async with rig(tmp_path / "s.db") as r:
        await r.store.write(ClaimFinalSend("t"), timeout=5)
        r.final("t", 1, ("a",))
        [sent] = await r.replies.received(1)
        assert sent == FinalSent("t-1", "t", ("final-1",), already=False)
        assert r.sink.calls[0].args[1:] == (("a",), ("t:final:0",))


async def test_a_send_that_failed_is_asked_about_before_its_retry(tmp_path: Path) -> None:
    """No answer came: the post may have been kept all the same."""
    async with rig(tmp_path / "s.db", LookupSink()) as r:
        r.sink.fail.append(TransientSendError("no answer within 10 s"))
        r.final("t", 1, ("a",))
        [failed] = await r.replies.received(1)
        assert isinstance(failed, FinalFailed) and failed.transient
        r.sink.keys["t:final:0"] = "kept-0"  # the platform had kept it
        r.final("t", 2, ("a",))
        sent = (await r.replies.received(2))[1]
        assert sent == FinalSent("t-2", "t", ("kept-0",), already=False)
        assert r.sink.methods() == ["send_final", "sent_finals"]


async def test_a_lookup_that_fails_for_now_is_retried_and_one_refused_for_good_sends(
    tmp_path: Path,
) -> None:
    async with rig(tmp_path / "s.db", LookupSink()) as r:
        await r.store.write(ClaimFinalSend("t"), timeout=5)
        r.sink.fail += [TransientSendError("HTTP 503"), PermanentSendError("missing_scope")]
        r.final("t", 1, ("a",))
        [failed] = await r.replies.received(1)
        assert isinstance(failed, FinalFailed) and failed.transient
        assert r.sink.methods() == ["sent_finals"], "nothing sent while it cannot tell"
        r.final("t", 2, ("a",))
        sent = (await r.replies.received(2))[1]
        assert sent == FinalSent("t-2", "t", ("final-1",), already=False)
        assert r.sink.methods() == ["sent_finals", "sent_finals", "send_final"]


class KeyedSink(FakeSink):
    """A platform that keeps a card's key as Feishu keeps its ``uuid``: the same key answers
    with the card it made before, unchanged (``die_after_card``: see ``FakeSink``)."""

    async def send_card(self, route: str, payload: Any, *, key: str) -> str:
        if key in self.card_keys:
            await self._enter("send_card", route, payload, key)
            return self.card_keys[key]
        return await super().send_card(route, payload, key=key)


async def killed_after_card(path: Path, platform: FakeSink) -> tuple[str, Rig]:
    """A run whose platform made turn ``t``'s card and that died before it heard of it
    (before ``RecordProgressCard``): the card, and the dead run's rig."""
    platform.die_after_card = True
    async with rig(path, platform) as r:
        r.show("t", 1, {"state": "running"})
        await wait_until(lambda: bool(platform.cards), timeout=10)
    [card] = platform.cards
    platform.die_after_card = False
    platform.calls.clear()
    return card, r


async def test_a_card_created_by_a_run_killed_before_its_record_is_found_and_edited(
    tmp_path: Path,
) -> None:
    """The moment of issue 28 s.1's card left running: the platform created the card and the
    run died before ``RecordProgressCard``. The claim it left makes the next run send under
    the same key (the platform answers with that card) and edit it to what it shows now."""
    platform = KeyedSink()
    card, r = await killed_after_card(tmp_path / "s.db", platform)
    assert r.ledger("t").progress_message_id is None  # never recorded
    async with rig(tmp_path / "s.db", platform) as r2:
        r2.show("t", 2, {"state": "interrupted"})
        [shown] = await r2.replies.received(1)
        assert shown == CardShown("t-2", "t", card, "h2", created=True)
        assert platform.methods() == ["send_card", "update_card"]
        assert platform.cards == [card]  # no second card
        assert platform.messages[card] == {"state": "interrupted"}
        assert r2.ledger("t").progress_message_id == card


async def test_a_first_card_is_claimed_then_sent_without_an_edit(tmp_path: Path) -> None:
    async with rig(tmp_path / "s.db", KeyedSink()) as r:
        r.show("t", 1)
        [shown] = await r.replies.received(1)
        assert shown.created is True
        assert r.sink.methods() == ["send_card"]
        gate = await r.store.write(ClaimProgressCard("t"), timeout=5)
        assert gate == CardGate("known", shown.message_id)


# -- a card the platform may have made: looked up where the platform can tell ---------------------


async def test_a_card_a_killed_run_made_is_found_by_its_key_and_adopted_not_posted_again(
    tmp_path: Path,
) -> None:
    """Slack keeps no key for a post: the card a run killed before its record made is found
    by the key in its metadata, from the claim's time on, and edited; no second card."""
    platform = CardLookupSink()
    card, r = await killed_after_card(tmp_path / "s.db", platform)
    claimed_at = r.ledger_claim("t")
    async with rig(tmp_path / "s.db", platform) as r2:
        r2.show("t", 2, {"state": "interrupted"})
        [shown] = await r2.replies.received(1)
        assert shown == CardShown("t-2", "t", card, "h2", created=True)
        assert platform.methods() == ["sent_card", "update_card"]
        assert platform.cards == [card]
        assert platform.messages[card] == {"state": "interrupted"}
        assert platform.since == [claimed_at]
        assert r2.ledger("t").progress_message_id == card


@pytest.mark.parametrize(
    ("claimed", "has_it", "lookup_fails", "methods", "cards"),
    [
        (False, False, None, ["send_card"], 1),  # nobody tried: no lookup
        (True, True, None, ["sent_card", "update_card"], 1),  # found: adopted
        (True, False, None, ["sent_card", "send_card", "update_card"], 1),  # never made
        (True, True, "permanent", ["sent_card", "send_card", "update_card"], 2),  # cannot tell
        (True, True, "transient", ["sent_card", "sent_card", "update_card"], 1),  # asked again
    ],
)
async def test_how_a_claimed_card_is_shown_on_a_platform_that_can_tell(  # noqa: PLR0917 (the table)
    tmp_path: Path,
    claimed: bool,
    has_it: bool,
    lookup_fails: str | None,
    methods: list[str],
    cards: int,
) -> None:
    sink = CardLookupSink()
    if has_it:
        sink.card_keys["t:card"] = sink._new_id("card")
        sink.messages[sink.card_keys["t:card"]] = {"state": "running"}
        sink.cards.append(sink.card_keys["t:card"])
    if lookup_fails == "transient":
        sink.fail.append(TransientSendError("HTTP 503"))
    elif lookup_fails == "permanent":
        sink.fail.append(PermanentSendError("missing_scope"))
    async with rig(tmp_path / "s.db", sink) as r:
        if claimed:
            gate = await r.store.write(ClaimProgressCard("t", at=1234.5), timeout=5)
            assert gate == CardGate("send") and gate.claimed_at == 1234.5
        r.show("t", 1, {"state": "done"})
        [outcome] = await r.replies.received(1)
        if lookup_fails == "transient":
            assert isinstance(outcome, CardFailed) and outcome.transient
            assert sink.methods() == ["sent_card"], "nothing posted while it cannot tell"
            r.show("t", 2, {"state": "done"})
            outcome = (await r.replies.received(2))[1]
        assert isinstance(outcome, CardShown) and outcome.created
        assert sink.methods() == methods
        assert len(sink.cards) == cards
        assert sink.messages[outcome.message_id] == {"state": "done"}
        assert sink.since == ([1234.5] * methods.count("sent_card") if claimed else [])
        assert r.ledger("t").progress_message_id == outcome.message_id


async def test_a_finals_lookup_reads_from_the_first_claims_time(tmp_path: Path) -> None:
    sink = LookupSink()
    async with rig(tmp_path / "s.db", sink) as r:
        first = await r.store.write(ClaimFinalSend("t", at=1000.0), timeout=5)
        assert first.claimed_at == 1000.0
        again = await r.store.write(ClaimFinalSend("t", at=2000.0), timeout=5)
        assert again == FinalGate("check") and again.claimed_at == 1000.0, "the first kept"
        r.final("t", 1, ("a",))
        [sent] = await r.replies.received(1)
        assert isinstance(sent, FinalSent)
        assert sink.since == [1000.0]
