"""The confirmation state machine: the same sender's next word in the thread decides."""

from __future__ import annotations

import pytest

from robota.core.policy import (
    CONFIRM_SECONDS,
    Cancelled,
    Confirmations,
    Confirmed,
    Expired,
    Pending,
    is_confirmation,
)

ASKED = 1_000.0
PENDING = Pending("thread-1", "ou_admin", "drop_db", "users", ASKED)


@pytest.mark.parametrize(
    ("text", "confirmed"),
    [
        ("Y", True),
        ("y", True),
        ("yes", True),
        ("YES!", True),
        ("confirm", True),
        ("Confirm.", True),
        ("确认", True),
        ("确认。", True),
        ("  yes  ", True),
        ("ok", False),
        ("yes please", False),
        ("no", False),
        ("n", False),
        ("取消", False),
        ("确认吗", False),
        ("", False),
    ],
)
def test_confirmation_words(text: str, confirmed: bool) -> None:
    assert is_confirmation(text) is confirmed


@pytest.mark.parametrize(
    ("thread", "sender", "text", "after", "outcome"),
    [
        ("thread-1", "ou_admin", "Y", 10.0, Confirmed(PENDING)),
        ("thread-1", "ou_admin", "确认", CONFIRM_SECONDS - 1, Confirmed(PENDING)),
        ("thread-1", "ou_admin", "no, wait", 10.0, Cancelled(PENDING)),
        ("thread-1", "ou_admin", "deploy instead", 10.0, Cancelled(PENDING)),
        ("thread-1", "ou_admin", "Y", CONFIRM_SECONDS, Expired(PENDING)),
        ("thread-1", "ou_admin", "Y", CONFIRM_SECONDS * 4, Expired(PENDING)),
        ("thread-1", "ou_other", "Y", 10.0, None),  # another sender's word is no answer
        ("thread-2", "ou_admin", "Y", 10.0, None),  # nor the same sender's in another thread
    ],
)
def test_answers(thread: str, sender: str, text: str, after: float, outcome: object) -> None:
    confirmations = Confirmations([PENDING])
    assert confirmations.answer(thread, sender, text, ASKED + after) == outcome
    assert confirmations.pending == (() if outcome is not None else (PENDING,))


def test_one_answer_resolves_it_once() -> None:
    confirmations = Confirmations()
    assert confirmations.ask(PENDING) is None
    assert confirmations.answer("thread-1", "ou_admin", "yes", ASKED + 1) == Confirmed(PENDING)
    assert confirmations.answer("thread-1", "ou_admin", "yes", ASKED + 2) is None


def test_asking_again_replaces_and_cancels_the_older() -> None:
    confirmations = Confirmations([PENDING])
    newer = Pending("thread-1", "ou_admin", "drop_db", "orders", ASKED + 5)
    assert confirmations.ask(newer) == Cancelled(PENDING)
    assert confirmations.pending == (newer,)


def test_sweep_expires_overdue_ones_oldest_first_and_keeps_the_rest() -> None:
    older = Pending("thread-0", "ou_a", "drop_db", "", ASKED - 100)
    fresh = Pending("thread-9", "ou_b", "drop_db", "", ASKED + CONFIRM_SECONDS)
    confirmations = Confirmations([PENDING, fresh, older])
    assert confirmations.sweep(ASKED + CONFIRM_SECONDS - 1) == [Expired(older)]
    assert confirmations.sweep(ASKED + CONFIRM_SECONDS) == [Expired(PENDING)]
    assert confirmations.pending == (fresh,)
    assert confirmations.sweep(ASKED + CONFIRM_SECONDS) == []


def test_state_restores_from_its_records() -> None:
    confirmations = Confirmations([PENDING])
    restored = Confirmations(confirmations.pending)
    assert restored.answer("thread-1", "ou_admin", "y", ASKED + 1) == Confirmed(PENDING)
