"""The card update discipline, driven by a hand-held clock."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from robota.core.presentation import BACKOFF, ThrottleError, UpdateThrottle, payload_hash


class Card:
    """A fake card actor: drives the throttle the documented way and records what it sent."""

    def __init__(self) -> None:
        self.throttle = UpdateThrottle()
        self.sent: list[tuple[float, int]] = []
        self.content: dict[int, str] = {}

    def offer(self, version: int, now: float, content: str, **flags: bool) -> None:
        self.content[version] = content
        self.throttle.offer(version, now=now, **flags)

    def tick(self, now: float, *, fail: bool | None = None) -> int | None:
        """Runs one update if due; ``fail``: None = send succeeds, else transient or not."""
        if not self.throttle.due(now):
            return None
        version = self.throttle.begin(now)
        digest = payload_hash({"c": self.content[version]})
        if self.throttle.unchanged(digest):
            self.throttle.skipped()
            return None
        if fail is None:
            self.throttle.sent(digest, now)
            self.sent.append((now, version))
        else:
            self.throttle.failed(now, transient=fail)
        return version


def test_first_update_goes_out_at_once_then_every_two_seconds() -> None:
    card = Card()
    card.offer(1, 0.0, "a")
    assert card.tick(0.0) == 1
    card.offer(2, 0.1, "b")
    assert card.throttle.next_deadline() == 2.0
    assert card.tick(1.9) is None
    assert card.tick(2.0) == 2


def test_critical_updates_wait_only_500_ms() -> None:
    card = Card()
    card.offer(1, 0.0, "a")
    card.tick(0.0)
    card.offer(2, 0.1, "b")
    card.offer(3, 0.2, "c", critical=True)
    assert card.throttle.next_deadline() == 0.5
    assert card.tick(0.49) is None
    assert card.tick(0.5) == 3  # the latest state, not the critical one's


def test_offers_coalesce_to_the_latest_state() -> None:
    card = Card()
    card.offer(1, 0.0, "a")
    card.tick(0.0)
    for version in range(2, 50):
        card.offer(version, version / 100, f"v{version}")
    assert card.tick(2.0) == 49
    assert card.sent == [(0.0, 1), (2.0, 49)]
    assert card.throttle.next_deadline() is None


def test_unchanged_content_is_skipped_and_does_not_delay_the_next() -> None:
    card = Card()
    card.offer(1, 0.0, "same")
    card.tick(0.0)
    card.offer(2, 1.0, "same")
    assert card.tick(2.0) is None  # skipped
    assert card.sent == [(0.0, 1)]
    card.offer(3, 2.5, "new")
    assert card.tick(2.5) == 3  # spacing counts from the last real send (0.0)


def test_transient_failures_back_off_2_4_8_16_30() -> None:
    card = Card()
    card.offer(1, 0.0, "a")
    now = 0.0
    delays = []
    for _ in range(7):
        assert card.tick(now, fail=True) == 1
        deadline = card.throttle.next_deadline()
        assert deadline is not None
        delays.append(deadline - now)
        now = deadline
    assert delays == [*BACKOFF, 30.0, 30.0]
    assert card.tick(now) == 1
    assert card.throttle.failures == 0
    card.offer(2, now, "b")
    assert card.throttle.next_deadline() == now + 2.0  # back to normal spacing


def test_retry_after_from_the_platform_wins_when_longer() -> None:
    throttle = UpdateThrottle()
    throttle.offer(1, now=0.0)
    throttle.begin(0.0)
    throttle.failed(0.0, transient=True, retry_after=11.0)
    assert throttle.next_deadline() == 11.0


def test_a_failed_update_is_replaced_by_a_newer_state() -> None:
    card = Card()
    card.offer(1, 0.0, "a")
    card.throttle.begin(0.0)
    card.offer(2, 0.5, "b")  # arrives while version 1 is in flight
    card.throttle.failed(1.0, transient=True)
    assert card.throttle.pending_version == 2
    assert card.throttle.next_deadline() == 3.0  # 1.0 + 2 s backoff


def test_a_non_transient_failure_drops_that_content() -> None:
    card = Card()
    card.offer(1, 0.0, "bad")
    card.tick(0.0, fail=False)
    assert card.throttle.next_deadline() is None
    assert card.throttle.failures == 0
    card.offer(2, 0.5, "good")
    assert card.throttle.next_deadline() == 2.0


def test_terminal_is_retried_even_after_non_transient_failures() -> None:
    card = Card()
    card.offer(1, 0.0, "done", terminal=True)
    card.tick(0.0, fail=False)
    assert not card.throttle.flushed
    deadline = card.throttle.next_deadline()
    assert deadline == 2.0
    card.tick(deadline)
    assert card.throttle.flushed
    assert card.sent == [(2.0, 1)]


def test_nothing_is_offered_after_the_terminal_card() -> None:
    card = Card()
    card.offer(1, 0.0, "done", terminal=True)
    card.tick(0.0)
    assert card.throttle.flushed
    card.offer(2, 1.0, "late")
    assert card.throttle.next_deadline() is None


def test_an_unchanged_terminal_card_counts_as_flushed() -> None:
    card = Card()
    card.offer(1, 0.0, "x")
    card.tick(0.0)
    card.offer(2, 0.1, "x", terminal=True)
    card.tick(0.5)
    assert card.throttle.flushed


def test_out_of_order_calls_are_refused() -> None:
    throttle = UpdateThrottle()
    with pytest.raises(ThrottleError):
        throttle.begin(0.0)
    with pytest.raises(ThrottleError):
        throttle.sent("h", 0.0)
    throttle.offer(1, now=0.0)
    assert throttle.due(0.0)
    throttle.begin(0.0)
    assert not throttle.due(100.0)  # in flight: its outcome decides


def test_payload_hash_ignores_key_order() -> None:
    assert payload_hash({"a": 1, "b": [1, 2]}) == payload_hash({"b": [1, 2], "a": 1})
    assert payload_hash({"a": 1}) != payload_hash({"a": 2})


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.floats(0.0, 3.0),  # time to the next step
            st.sampled_from(["offer", "critical", "tick", "tick", "fail", "hard_fail"]),
        ),
        max_size=60,
    ),
    st.lists(st.sampled_from(["ok", "fail", "hard_fail"]), max_size=8),
)
def test_the_terminal_state_is_never_lost(steps: list, endings: list) -> None:
    """Whatever happened before, once the terminal state is offered and sends eventually
    succeed, the last update sent is the terminal one, spaced as promised."""
    card = Card()
    now = 0.0
    version = 0
    for delay, action in steps:
        now += delay
        if action in ("offer", "critical"):
            version += 1
            card.offer(version, now, f"v{version}", critical=action == "critical")
        else:
            card.tick(now, fail={"tick": None, "fail": True, "hard_fail": False}[action])
    version += 1
    card.offer(version, now, "terminal", terminal=True)
    for outcome in [*endings, "ok"]:
        deadline = card.throttle.next_deadline()
        while deadline is None and not card.throttle.flushed:  # pragma: no cover - guard
            raise AssertionError("terminal state dropped")
        if card.throttle.flushed:
            break
        assert deadline is not None
        now = max(now, deadline)
        card.tick(now, fail={"ok": None, "fail": True, "hard_fail": False}[outcome])
    assert card.throttle.flushed
    if card.sent:
        last_sent = card.sent[-1][1]
        assert (
            card.content[last_sent] == "terminal"
            or card.content[version] == card.content[last_sent]
        )
    for (t1, _), (t2, _) in zip(card.sent, card.sent[1:], strict=False):
        assert t2 - t1 >= 0.5 - 1e-9
