"""Turn snapshots and card action tokens: bind, claim once, refuse stale and foreign tokens."""

from __future__ import annotations

import json

import pytest

from robota.core.store import (
    CLAIM_REFUSALS,
    ActionBinding,
    BindCardActions,
    CardAction,
    ClaimCardAction,
    Claimed,
    RecordFinalDelivery,
    Refused,
    RetireCardActions,
    SaveTurnSnapshot,
    card_actions,
    open_reader,
    turn_snapshot,
)


@pytest.fixture
def reader(store):
    db = open_reader(store.path)
    yield db
    db.close()


def snapshot(version: int, text: str = "") -> str:
    return json.dumps({"v": 1, "version": version, "activities": [text]})


def test_snapshots_are_saved_replaced_and_never_rolled_back(store, reader) -> None:
    write = store.client.write_sync
    assert turn_snapshot(reader, "t1") is None
    assert write(SaveTurnSnapshot("t1", "task", snapshot(3, "a"), 3, at=1.0), timeout=5) is True
    assert write(SaveTurnSnapshot("t1", "task", snapshot(7, "b"), 7, at=2.0), timeout=5) is True
    # A late save from an incarnation that died after its successor saved: refused.
    assert write(SaveTurnSnapshot("t1", "task", snapshot(5, "old"), 5), timeout=5) is False
    # The same version again (a save on stop after a save on update) is accepted.
    assert write(SaveTurnSnapshot("t1", "task", snapshot(7, "c"), 7, at=3.0), timeout=5) is True
    saved = turn_snapshot(reader, "t1")
    assert saved is not None
    assert saved.snapshot == {"v": 1, "version": 7, "activities": ["c"]}
    assert saved.version == 7
    assert (saved.task_id, saved.updated_at) == ("task", 3.0)
    assert turn_snapshot(reader, "t2") is None


def bind(store, message_id: str = "m1", route: str = "r1", **expiry: float) -> dict[str, str]:
    """Bind the four buttons of approval ``a1`` of turn ``t1``; returns decision -> token."""
    tokens = {d: f"tok-{d}-{message_id}" for d in ("accept", "session", "decline", "cancel")}
    bindings = tuple(
        ActionBinding(token, CardAction("t1", "a1", decision), expiry.get("expires_at"))
        for decision, token in tokens.items()
    )
    bound = store.client.write_sync(BindCardActions(message_id, route, bindings, at=1.0), timeout=5)
    assert bound == 4
    return tokens


def claim(store, token: str, message_id: str = "m1", route: str = "r1", at: float = 2.0):
    return store.client.write_sync(ClaimCardAction(token, message_id, route, at=at), timeout=5)


def test_a_token_is_claimed_once_and_its_siblings_become_resolved(store, reader) -> None:
    tokens = bind(store)
    assert claim(store, tokens["decline"]) == Claimed(CardAction("t1", "a1", "decline"))
    assert claim(store, tokens["decline"]) == Refused("used")
    assert claim(store, tokens["accept"]) == Refused("resolved")
    assert claim(store, tokens["cancel"]) == Refused("resolved")
    assert card_actions(reader, "t1") == []


def test_unknown_and_foreign_tokens_are_refused_and_stay_claimable(store) -> None:
    tokens = bind(store)
    assert claim(store, "made-up") == Refused("unknown")
    assert claim(store, tokens["accept"], message_id="m2") == Refused("foreign")
    assert claim(store, tokens["accept"], route="r2") == Refused("foreign")
    # A refusal changes nothing: the rightful click still works.
    assert claim(store, tokens["accept"]) == Claimed(CardAction("t1", "a1", "accept"))


def test_expired_tokens_are_refused(store) -> None:
    tokens = bind(store, expires_at=10.0)
    assert claim(store, tokens["accept"], at=10.0) == Refused("expired")
    assert claim(store, tokens["accept"], at=9.0) == Claimed(CardAction("t1", "a1", "accept"))


def test_an_approval_answered_elsewhere_retires_its_tokens(store, reader) -> None:
    tokens = bind(store)
    other = ActionBinding("tok-other", CardAction("t1", "a2", "accept"))
    store.client.write_sync(BindCardActions("m1", "r1", (other,)), timeout=5)
    retired = store.client.write_sync(RetireCardActions("t1", "a1", "resolved"), timeout=5)
    assert retired == 4
    assert claim(store, tokens["accept"]) == Refused("resolved")
    # Approval a2 is untouched.
    assert [b.token for _, b in card_actions(reader, "t1")] == ["tok-other"]
    assert claim(store, "tok-other") == Claimed(CardAction("t1", "a2", "accept"))


def test_a_turn_that_ended_refuses_its_tokens(store) -> None:
    tokens = bind(store)
    assert store.client.write_sync(RetireCardActions("t1"), timeout=5) == 4
    assert claim(store, tokens["accept"]) == Refused("turn_ended")


def test_a_turn_whose_final_answer_is_out_refuses_its_tokens_even_unretired(store) -> None:
    tokens = bind(store)
    assert store.client.write_sync(RecordFinalDelivery("t1", ("f1",)), timeout=5) is True
    assert claim(store, tokens["session"]) == Refused("turn_ended")


def test_binding_again_keeps_the_first_binding(store, reader) -> None:
    bind(store)
    again = ActionBinding("tok-accept-m1", CardAction("t9", "x", "decline"))
    assert store.client.write_sync(BindCardActions("m9", "r9", (again,)), timeout=5) == 0
    live = card_actions(reader, "t1")
    assert [b.action.decision for _, b in live] == ["accept", "cancel", "decline", "session"]
    assert {m for m, _ in live} == {"m1"}
    assert card_actions(reader, "t9") == []
    assert claim(store, "tok-accept-m1") == Claimed(CardAction("t1", "a1", "accept"))


def test_every_refusal_has_a_readable_reason() -> None:
    for reason, text in CLAIM_REFUSALS.items():
        assert Refused(reason).message == text
        assert text.endswith(".")


def test_retire_refuses_an_unknown_reason(store) -> None:
    with pytest.raises(ValueError, match="unknown retirement"):
        store.client.write_sync(RetireCardActions("t1", None, "bogus"), timeout=5)  # type: ignore[arg-type]
