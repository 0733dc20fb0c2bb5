"""The Web API's decisions, by table: what an answer means, the rate gate, latest-state-wins."""

from __future__ import annotations

import pytest

from robota.transports.slack import LatestWins, RateGate, decide, retry_after_seconds
from robota.transports.slack._policy import Done, Fail, Outcome, Retry

BACKOFF = (1.0, 2.0, 4.0)


@pytest.mark.parametrize(
    ("answer", "retry_after", "retried", "expected"),
    [
        ((200, True, None), None, 0, Done()),
        ((200, False, "invalid_auth"), None, 0, Fail()),
        ((200, False, "channel_not_found"), None, 0, Fail()),
        ((200, False, "invalid_blocks"), None, 0, Fail()),
        ((429, False, "ratelimited"), "3", 0, Retry(3.0, rate_limited=True)),
        ((200, False, "ratelimited"), None, 0, Retry(1.0, rate_limited=True)),
        ((429, False, None), "9999", 0, Retry(60.0, rate_limited=True)),
        ((429, False, None), "soon", 0, Retry(1.0, rate_limited=True)),
        ((503, False, None), None, 0, Retry(1.0)),
        ((500, False, None), None, 1, Retry(2.0)),
        ((None, False, "no answer"), None, 2, Retry(4.0)),
        ((None, False, "no answer"), None, 3, Fail()),  # retries=3 below
        ((200, False, "internal_error"), None, 5, Retry(4.0)),  # the last step is kept
        ((400, False, None), None, 0, Fail()),
        ((200, False, None), None, 0, Fail()),  # ok missing: not ok
    ],
)
def test_what_an_answer_means(
    answer: tuple[int | None, bool, str | None],
    retry_after: str | None,
    retried: int,
    expected: Outcome,
) -> None:
    retries = 3 if retried == 3 else 10
    status, ok, error = answer
    outcome = decide(
        status,
        ok,
        error,
        retry_after=retry_after,
        retried=retried,
        retries=retries,
        backoff=BACKOFF,
    )
    assert outcome == expected


@pytest.mark.parametrize(
    ("header", "seconds"),
    [(None, 1.0), ("0", 0.0), ("2.5", 2.5), ("-3", 0.0), ("inf", 1.0), ("nan", 1.0), ("x", 1.0)],
)
def test_retry_after(header: str | None, seconds: float) -> None:
    assert retry_after_seconds(header) == seconds


def test_the_rate_gate_holds_a_method_until_the_later_hold() -> None:
    gate = RateGate()
    assert gate.ready_at("chat.update", 5.0) == 5.0
    gate.hold("chat.update", 8.0)
    gate.hold("chat.update", 7.0)  # an earlier hold does not shorten the wait
    assert gate.ready_at("chat.update", 5.0) == 8.0
    assert gate.ready_at("chat.postMessage", 5.0) == 5.0  # other methods go on
    assert gate.ready_at("chat.update", 9.0) == 9.0


def test_latest_wins_one_sender_and_the_newest_state_only() -> None:
    slots: LatestWins[str, int] = LatestWins()
    assert slots.offer("m", 1) is True  # the caller becomes the sender
    assert slots.take("m") == 1
    # while 1 is in flight, 2, 3 and 4 arrive: only 4 will be sent
    assert [slots.offer("m", n) for n in (2, 3, 4)] == [False, False, False]
    assert slots.superseded == 2
    assert slots.offer("other", 9) is True  # another message has its own sender
    assert slots.take("m") == 4
    slots.put_back("m", 4)  # refused for now (429): waits again
    assert slots.take("m") == 4
    slots.offer("m", 5)
    slots.put_back("m", 4)  # a newer state arrived meanwhile: 4 is dropped
    assert slots.take("m") == 5 and slots.superseded == 3
    assert slots.take("m") is None and not slots.sending("m")
    assert slots.offer("m", 6) is True  # the next state finds no sender


def test_a_cancelled_sender_leaves_the_waiting_state_to_the_next_offer() -> None:
    slots: LatestWins[str, int] = LatestWins()
    slots.offer("m", 1)
    slots.take("m")
    slots.offer("m", 2)
    slots.release("m")
    assert slots.offer("m", 3) is True
    assert slots.take("m") == 3
