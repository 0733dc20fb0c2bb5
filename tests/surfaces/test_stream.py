"""One session's stream: seqs strictly increasing, the bounded resume buffer, exactly the
messages after ``lastSeq`` or a gap, and the replies ``get-messages``/``get-pending`` read."""

from __future__ import annotations

import json

import pytest

from robota.core.surfaces import RESUME_BYTES, RESUME_MESSAGES, SessionStream


def delta(n: int) -> dict[str, object]:
    return {"type": "text_delta", "text": f"t{n}", "itemId": "i", "phase": None}


def seqs(texts: list[str] | None) -> list[int] | None:
    return None if texts is None else [json.loads(text)["seq"] for text in texts]


def test_published_messages_get_strictly_increasing_seqs_from_one() -> None:
    stream = SessionStream()
    stamped = [stream.publish(delta(n))[0]["seq"] for n in range(5)]
    assert stamped == [1, 2, 3, 4, 5]
    assert stream.seq == 5


def test_a_reply_carries_the_last_published_seq_and_is_not_kept() -> None:
    stream = SessionStream()
    assert stream.reply({"type": "hello"})[0]["seq"] == 0
    stream.publish(delta(1))
    message, text = stream.reply({"type": "protocol_error", "message": "m"})
    assert message["seq"] == 1 and json.loads(text) == message
    stream.publish(delta(2))
    assert seqs(stream.replay(0)) == [1, 2]


# (published, max_messages, max_bytes, lastSeq) -> the seqs replayed, or None for a gap
RESUMES: list[tuple[int, int, int, int, list[int] | None]] = [
    (0, 10, RESUME_BYTES, 0, []),
    (5, 10, RESUME_BYTES, 0, [1, 2, 3, 4, 5]),
    (5, 10, RESUME_BYTES, 3, [4, 5]),
    (5, 10, RESUME_BYTES, 5, []),
    (5, 10, RESUME_BYTES, 6, None),  # beyond the last message: the client lost track
    (10, 4, RESUME_BYTES, 6, [7, 8, 9, 10]),  # the buffer reaches back exactly far enough
    (10, 4, RESUME_BYTES, 5, None),  # seq 6 is gone
    (10, 4, RESUME_BYTES, 0, None),
    (10, 4, RESUME_BYTES, 10, []),
    (10, 100, 210, 9, [10]),  # the byte bound: 68 or 69 bytes a message keeps the last three
    (10, 100, 210, 7, [8, 9, 10]),
    (10, 100, 210, 6, None),
    (10, 100, 1, 9, [10]),  # the newest message stays even when it alone is over the bound
    (10, 100, 1, 8, None),
]


@pytest.mark.parametrize(("published", "messages", "size", "last", "expected"), RESUMES)
def test_resume_gives_exactly_the_messages_after_last_seq_or_a_gap(
    published: int, messages: int, size: int, last: int, expected: list[int] | None
) -> None:
    stream = SessionStream(max_messages=messages, max_bytes=size)
    for n in range(published):
        stream.publish(delta(n))
    assert seqs(stream.replay(last)) == expected
    if expected is None:
        gap = stream.gap(last)
        assert gap == {
            "type": "resume_gap",
            "lastSeq": last,
            "firstSeq": stream.first_seq,
            "latestSeq": published,
        }


def test_the_default_bounds_are_4096_messages_and_4_mib() -> None:
    assert (RESUME_MESSAGES, RESUME_BYTES) == (4096, 4 * 1024 * 1024)
    stream = SessionStream()
    for n in range(RESUME_MESSAGES + 10):
        stream.publish(delta(n))
    assert stream.first_seq == 11
    assert seqs(stream.replay(10)) == list(range(11, RESUME_MESSAGES + 11))
    assert stream.replay(9) is None
    big = SessionStream()
    for _ in range(5):
        big.publish({"type": "text_delta", "text": "x" * 1_000_000})
    assert big.first_seq == 2  # four of a million bytes each fit in 4 MiB, five do not


def test_every_resume_point_replays_without_duplicates_or_holes() -> None:
    stream = SessionStream(max_messages=50)
    for n in range(200):
        stream.publish(delta(n))
        for last in range(stream.seq + 1):
            got = seqs(stream.replay(last))
            if got is not None:
                assert got == list(range(last + 1, stream.seq + 1))
            else:
                assert last + 1 < stream.first_seq


def test_messages_and_pending_follow_the_conversation() -> None:
    stream = SessionStream()
    stream.publish({"type": "user_message", "prompt": "hi", "turnId": "t1"})
    stream.publish(delta(1))
    request = {"type": "permission_request", "id": "a1", "title": "run ls", "decisions": []}
    stream.publish(request)
    stream.publish({"type": "permission_request", "id": "a2", "title": "rm", "decisions": []})
    assert [a["id"] for a in stream.pending()["approvals"]] == ["a1", "a2"]
    stream.publish({"type": "prompt_resolved", "id": "a1", "result": "accept", "by": "user"})
    assert stream.pending_ids() == ["a2"]
    stream.publish({"type": "complete", "result": "done", "turnId": "t1"})
    assert stream.pending() == {"type": "pending", "approvals": []}
    stream.publish({"type": "user_message", "prompt": "again", "turnId": "t2"})
    stream.publish({"type": "error", "message": "boom", "category": "agent", "turnId": "t2"})
    assert stream.messages() == {
        "type": "messages",
        "messages": [
            {"role": "user", "text": "hi", "seq": 1},
            {"role": "assistant", "text": "done", "seq": 6},
            {"role": "user", "text": "again", "seq": 7},
            {"role": "error", "text": "boom", "seq": 8},
        ],
    }


@pytest.mark.parametrize(("messages", "size"), [(0, 10), (10, 0)])
def test_a_stream_without_room_is_refused(messages: int, size: int) -> None:
    with pytest.raises(ValueError, match="room"):
        SessionStream(max_messages=messages, max_bytes=size)
