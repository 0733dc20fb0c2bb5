"""``seq`` and resume, the primitive every carrier numbers its stream with: a table of
replays, and the property that any interleaving of publishing, dropping and resuming replays
exactly what the peer missed, never twice, or says there is a gap (only when there is one)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from robota.core.protocol import SeqLog, resume_gap


def log_of(count: int, *, max_items: int = 100, max_bytes: int = 10_000) -> SeqLog[int]:
    log: SeqLog[int] = SeqLog(max_items=max_items, max_bytes=max_bytes)
    for n in range(1, count + 1):
        assert log.publish(n, 10) == n
    return log


@pytest.mark.parametrize(
    ("published", "max_items", "last_seq", "replayed"),
    [
        (0, 5, 0, []),  # nothing yet: nothing missed
        (3, 5, 0, [1, 2, 3]),  # from the start
        (3, 5, 1, [2, 3]),
        (3, 5, 3, []),  # up to date
        (3, 5, 4, None),  # beyond the stream: the peer lost track of it
        (8, 5, 3, [4, 5, 6, 7, 8]),  # the oldest kept is exactly the next wanted
        (8, 5, 2, None),  # seq 3 is gone: a gap
        (8, 5, 0, None),
    ],
)
def test_replay(published: int, max_items: int, last_seq: int, replayed: list[int] | None) -> None:
    assert log_of(published, max_items=max_items).replay(last_seq) == replayed


def test_the_byte_bound_drops_the_oldest_but_keeps_the_newest_whatever_its_size() -> None:
    log: SeqLog[str] = SeqLog(max_items=10, max_bytes=25)
    for text in ("a" * 10, "b" * 10, "c" * 10):
        log.publish(text, len(text))
    assert log.first_seq == 2 and log.replay(1) == ["b" * 10, "c" * 10]
    log.publish("huge", 1000)
    assert log.first_seq == 4 and log.replay(3) == ["huge"]


def test_a_gap_says_what_was_asked_and_what_is_kept() -> None:
    log = log_of(8, max_items=5)
    assert resume_gap(log, 2) == {"type": "resume_gap", "lastSeq": 2, "firstSeq": 4, "latestSeq": 8}
    empty = log_of(0)
    assert resume_gap(empty, 0) == {
        "type": "resume_gap",
        "lastSeq": 0,
        "firstSeq": 1,
        "latestSeq": 0,
    }


@pytest.mark.parametrize(("items", "size"), [(0, 10), (10, 0), (-1, -1)])
def test_a_log_needs_room(items: int, size: int) -> None:
    with pytest.raises(ValueError, match="needs room"):
        SeqLog(max_items=items, max_bytes=size)


STEPS = st.lists(
    st.one_of(
        st.tuples(st.just("publish"), st.integers(1, 40)),
        st.tuples(st.just("drop"), st.just(0)),
        st.tuples(st.just("resume"), st.just(0)),
    ),
    max_size=80,
)


@settings(max_examples=300, deadline=None)
@given(STEPS, st.integers(1, 8), st.integers(1, 120))
def test_any_interleaving_replays_exactly_what_was_missed_or_reports_a_gap(
    steps: list[tuple[str, int]], max_items: int, max_bytes: int
) -> None:
    log: SeqLog[int] = SeqLog(max_items=max_items, max_bytes=max_bytes)
    received: list[int] = []  # every message the peer got, live or replayed, in order
    last = 0  # the seq the peer would resume from
    connected = True
    for action, size in steps:
        if action == "publish":
            seq = log.publish(log.seq + 1, size)  # a message is its own seq, to compare
            if connected:
                received.append(seq)
                last = seq
        elif action == "drop":
            connected = False
        elif not connected:
            replayed = log.replay(last)
            missed = list(range(last + 1, log.seq + 1))
            if replayed is None:
                # A gap only when a missed message is no longer kept.
                assert missed and missed[0] < log.first_seq
                last = log.seq  # the peer refreshes another way and goes on from here
            else:
                assert replayed == missed
                received.extend(replayed)
                last = log.seq
            connected = True
    assert received == sorted(set(received)), "a message came twice or out of order"
    assert all(1 <= seq <= log.seq for seq in received)
