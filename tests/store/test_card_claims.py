"""A progress card's send claimed in the ledger before it goes (``_card_claims``): the verdict,
pure, by table; the op that reads, decides and claims in one savepoint; and a restart reading
a claimed, unrecorded card as one to end."""

from __future__ import annotations

import pytest

from robota.core.store import (
    CardGate,
    ClaimFinalSend,
    ClaimProgressCard,
    FinishTurnAttempt,
    InsertTurnAttempt,
    RecordFinalDelivery,
    RecordProgressCard,
    card_gate,
    final_delivery,
    open_reader,
    unsettled_chat_turns,
)


@pytest.mark.parametrize(
    ("recorded", "claimed", "verdict"),
    [
        (False, False, "send"),  # nobody tried: create it
        (False, True, "check"),  # a try never recorded may have created it: same key, then edit
        (True, False, "known"),  # recorded (before claims existed): edit it
        (True, True, "known"),
    ],
)
def test_the_verdict_on_a_ledger_entry(recorded: bool, claimed: bool, verdict: str) -> None:
    assert card_gate(recorded=recorded, claimed=claimed) == verdict


def test_a_card_is_claimed_once_then_found_claimed_then_known(store) -> None:
    write = store.client.write_sync
    assert write(ClaimProgressCard("t1", at=5.0), timeout=5) == CardGate("send")
    assert write(ClaimProgressCard("t1", at=6.0), timeout=5) == CardGate("check")
    assert write(RecordProgressCard("t1", "card-1", "h1"), timeout=5) is True
    assert write(ClaimProgressCard("t1"), timeout=5) == CardGate("known", "card-1")
    db = open_reader(store.path)
    try:
        claimed = db.execute(
            "SELECT card_claimed_at FROM final_deliveries WHERE turn_id = 't1'"
        ).fetchone()[0]
        assert claimed == 5.0  # the first claim's time is kept
        entry = final_delivery(db, "t1")
    finally:
        db.close()
    assert entry is not None and entry.progress_message_id == "card-1"


def test_a_card_claim_and_a_final_claim_share_the_entry_apart(store) -> None:
    write = store.client.write_sync
    assert write(ClaimFinalSend("t1"), timeout=5).verdict == "send"
    assert write(ClaimProgressCard("t1"), timeout=5) == CardGate("send")
    assert write(ClaimFinalSend("t1"), timeout=5).verdict == "check"
    assert write(RecordFinalDelivery("t1", ("f1",)), timeout=5) is True
    assert write(ClaimProgressCard("t1"), timeout=5) == CardGate("check")


def test_a_claimed_card_never_recorded_is_unsettled_as_an_unknown_card(store) -> None:
    """The run was killed between the platform creating the card and its record, and the
    turn was interrupted by that kill: a restart still finds a card to end (``""``)."""
    write = store.client.write_sync
    for attempt_id in ("a1", "a2", "a3"):
        write(InsertTurnAttempt(attempt_id, "t1", "feishu:chat_id:oc_1", "p", at=100.0), timeout=5)
        write(FinishTurnAttempt(attempt_id, "interrupted"), timeout=5)
    write(ClaimProgressCard("a1:feishu"), timeout=5)
    write(ClaimProgressCard("a2:feishu"), timeout=5)
    write(RecordProgressCard("a2:feishu", "om_card2", "h"), timeout=5)
    db = open_reader(store.path)
    try:
        unsettled = unsettled_chat_turns(db, "feishu:", ":feishu", since=60.0)
    finally:
        db.close()
    assert [(a.id, card) for a, card in unsettled] == [
        ("a1", ""),
        ("a2", "om_card2"),
        ("a3", None),
    ]
