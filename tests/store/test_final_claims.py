"""A final answer's send claimed in the ledger before it goes (``_finals``): the verdict, pure,
by table, and the op that reads, decides and claims in one savepoint."""

from __future__ import annotations

import pytest

from robota.core.store import (
    ClaimFinalSend,
    ClaimProgressCard,
    FinalGate,
    RecordFinalDelivery,
    RecordProgressCard,
    claim_time,
    final_delivery,
    final_gate,
    open_reader,
)


@pytest.mark.parametrize(
    ("delivered", "claimed", "verdict"),
    [
        (False, False, "send"),  # nobody tried: send it all
        (False, True, "check"),  # a try never recorded may have reached the platform
        (True, False, "sent"),  # delivered (an engine's own claim records no send)
        (True, True, "sent"),
    ],
)
def test_the_verdict_on_a_ledger_entry(delivered: bool, claimed: bool, verdict: str) -> None:
    assert final_gate(delivered=delivered, claimed=claimed) == verdict


def test_a_send_is_claimed_once_then_found_claimed_then_delivered(store) -> None:
    write = store.client.write_sync
    assert write(ClaimFinalSend("t1", at=5.0), timeout=5) == FinalGate("send")
    assert write(ClaimFinalSend("t1", at=6.0), timeout=5) == FinalGate("check")
    assert write(RecordFinalDelivery("t1", ("f1", "f2")), timeout=5) is True
    assert write(ClaimFinalSend("t1"), timeout=5) == FinalGate("sent", ("f1", "f2"))
    db = open_reader(store.path)
    try:
        claimed = db.execute(
            "SELECT final_claimed_at FROM final_deliveries WHERE turn_id = 't1'"
        ).fetchone()
        assert claimed == (5.0,), "the first claim's time is kept"
        entry = final_delivery(db, "t1")
        assert entry is not None and entry.final_message_ids == ("f1", "f2")
    finally:
        db.close()


def test_a_claim_keeps_the_progress_card_and_the_card_still_edits(store) -> None:
    write = store.client.write_sync
    assert write(RecordProgressCard("t1", "card-1", "h1"), timeout=5) is True
    assert write(ClaimFinalSend("t1"), timeout=5) == FinalGate("send")
    assert write(RecordProgressCard("t1", "card-1", "h2"), timeout=5) is True
    db = open_reader(store.path)
    try:
        entry = final_delivery(db, "t1")
        assert entry is not None
        assert (entry.progress_message_id, entry.last_card_hash, entry.delivered) == (
            "card-1",
            "h2",
            False,
        )
    finally:
        db.close()


@pytest.mark.parametrize(
    ("first", "at", "expected"),
    [
        (None, 5.0, 5.0),  # the first claim: its own time
        (3.0, 5.0, 3.0),  # claimed before: that claim's time, where a lookup starts
        (3, 5.0, 3.0),  # as SQLite may give a whole number back
    ],
)
def test_a_claims_time_is_the_first_claims(first: object, at: float, expected: float) -> None:
    assert claim_time(first, at) == expected


def test_each_gate_gives_the_first_claims_time(store) -> None:
    write = store.client.write_sync
    assert write(ClaimFinalSend("t1", at=5.0), timeout=5).claimed_at == 5.0
    assert write(ClaimFinalSend("t1", at=6.0), timeout=5).claimed_at == 5.0
    assert write(ClaimProgressCard("t1", at=7.0), timeout=5).claimed_at == 7.0
    assert write(ClaimProgressCard("t1", at=8.0), timeout=5).claimed_at == 7.0
    assert write(RecordProgressCard("t1", "card-1", "h1"), timeout=5) is True
    assert write(ClaimProgressCard("t1", at=9.0), timeout=5).claimed_at is None  # known
