"""REST decisions by table: retries, token refresh and expiry, the PATCH limiter."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from robota.transports.feishu import PatchLimiter, TokenCache, decide
from robota.transports.feishu._policy import Done, Fail, RefreshToken, Retry

BACKOFF = (2.0, 4.0, 8.0, 16.0, 30.0)


@pytest.mark.parametrize(
    ("status", "code", "kwargs", "expected"),
    [
        (200, 0, {}, Done()),
        (200, 99991663, {}, RefreshToken()),
        (401, 99991664, {}, RefreshToken()),
        (200, 99991665, {}, RefreshToken()),
        (200, 99991668, {}, RefreshToken()),
        (200, 99991663, {"refreshed": True}, Fail()),
        (429, None, {"rate_reset": "7"}, Retry(7.0)),
        (400, 99991400, {"rate_reset": "2"}, Retry(2.0)),
        (429, 99991400, {}, Retry(1.0)),
        (429, 99991400, {"rate_reset": "soon"}, Retry(1.0)),
        (429, 99991400, {"rate_reset": "3600"}, Retry(60.0)),
        (429, 99991400, {"rate_reset": "-5"}, Retry(0.0)),
        (200, 230020, {}, Retry(2.0)),
        (200, 230020, {"retried": 2}, Retry(8.0)),
        (200, 230020, {"retried": 3, "retries": 9}, Retry(16.0)),
        (200, 230020, {"retried": 7, "retries": 9}, Retry(30.0)),
        (502, None, {}, Retry(2.0)),
        (None, None, {"retried": 1}, Retry(4.0)),
        (500, 0, {"retried": 4}, Fail()),
        (429, 99991400, {"retried": 4}, Fail()),
        (400, 230001, {}, Fail()),
        (400, 99992402, {}, Fail()),
        (200, 230099, {}, Fail()),
        (404, None, {}, Fail()),
        (200, 230020, {"backoff": (0.01,), "retried": 3}, Retry(0.01)),
    ],
)
def test_what_an_answer_means(
    status: int | None, code: int | None, kwargs: dict[str, object], expected: object
) -> None:
    assert decide(status, code, **kwargs) == expected


def test_the_token_is_refreshed_ahead_of_its_expiry() -> None:
    cache = TokenCache(margin=600)
    assert cache.valid(0.0) is None
    cache.store("t-1", 7200, now=100.0)
    assert cache.valid(100.0) == "t-1"
    assert cache.valid(100.0 + 7200 - 600 - 0.001) == "t-1"
    assert cache.valid(100.0 + 7200 - 600) is None


def test_a_short_lived_token_is_refreshed_at_half_its_life() -> None:
    cache = TokenCache(margin=600)
    cache.store("t-1", 4, now=0.0)
    assert cache.valid(1.9) == "t-1" and cache.valid(2.0) is None


def test_invalidating_a_refused_token_keeps_a_newer_one() -> None:
    cache = TokenCache()
    cache.store("t-2", 7200, now=0.0)
    cache.invalidate("t-1")
    assert cache.valid(1.0) == "t-2"
    cache.invalidate("t-2")
    assert cache.valid(1.0) is None


def test_the_sixth_patch_of_a_message_within_a_second_waits_for_its_slot() -> None:
    limiter = PatchLimiter(per=1.0)
    assert [limiter.reserve("om_1", 0.0) for _ in range(5)] == [0.0] * 5
    assert limiter.reserve("om_1", 0.1) == 1.0
    assert limiter.reserve("om_2", 0.1) == 0.1  # another message has its own budget
    assert limiter.reserve("om_1", 0.2) == 1.0
    assert limiter.reserve("om_1", 5.0) == 5.0


@pytest.mark.parametrize(
    ("booked", "now", "kept"),
    [
        ({"om_1": 0.0, "om_2": 0.5}, 0.9, 2),  # both still inside their window
        ({"om_1": 0.0, "om_2": 0.5}, 1.0, 1),  # om_1's window closed at 1.0
        ({"om_1": 0.0, "om_2": 0.5}, 1.5, 0),
        ({}, 3.0, 0),
    ],
)
def test_a_quiet_limiter_forgets_the_messages_whose_window_closed(
    booked: dict[str, float], now: float, kept: int
) -> None:
    limiter = PatchLimiter(per=1.0)
    for key, at in booked.items():
        limiter.reserve(key, at)
    limiter.forget_past(now)
    assert len(limiter) == kept


@given(st.lists(st.tuples(st.sampled_from("ab"), st.floats(0, 0.5)), max_size=60))
def test_no_second_ever_holds_more_than_five_patches_of_one_message(
    calls: list[tuple[str, float]],
) -> None:
    limiter = PatchLimiter(per=1.0)
    now = 0.0
    starts: dict[str, list[float]] = {"a": [], "b": []}
    for key, step in calls:
        now += step
        at = limiter.reserve(key, now)
        assert at >= now
        starts[key].append(at)
    for times in starts.values():
        assert times == sorted(times)
        for index in range(len(times) - 5):
            assert times[index + 5] - times[index] >= 1.0 - 1e-9
