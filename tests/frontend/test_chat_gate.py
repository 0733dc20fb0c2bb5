"""How many chats a transport serves at once (``robota.core.frontend._chat_gate``), as a table:
each row a sequence of offers and releases and what each said."""

from __future__ import annotations

import pytest

from robota.core.frontend import MAX_BUSY_CHATS, Accepted, ChatGate
from robota.core.frontend._chat_gate import Waiting

# Steps: ("offer", chat, item, busy, busy_chats) -> True (to its lane) or False (waits);
#        ("release", busy_chats) -> the chats served, each with its items in order.
CASES = [
    (
        "room left: every chat is served",
        2,
        [
            (("offer", "a", 1, False, 0), True),
            (("offer", "b", 2, False, 1), True),
        ],
    ),
    (
        "no room: a new chat waits, a busy one does not",
        2,
        [
            (("offer", "c", 1, False, 2), False),
            (("offer", "a", 2, True, 2), True),
        ],
    ),
    (
        "a waiting chat's later messages wait behind it, even with room",
        2,
        [
            (("offer", "c", 1, False, 2), False),
            (("offer", "c", 2, False, 0), False),
            (("release", 1), [("c", [1, 2])]),
            (("offer", "c", 3, True, 1), True),
        ],
    ),
    (
        "the chat that waited longest is served first, as room allows",
        2,
        [
            (("offer", "c", 1, False, 2), False),
            (("offer", "d", 2, False, 2), False),
            (("offer", "e", 3, False, 2), False),
            (("offer", "d", 4, False, 2), False),
            (("release", 2), []),
            (("release", 1), [("c", [1])]),
            (("release", 0), [("d", [2, 4]), ("e", [3])]),
            (("release", 0), []),
        ],
    ),
    (
        "a busy count past the limit serves nobody",
        1,
        [
            (("offer", "c", 1, False, 3), False),
            (("release", 2), []),
            (("release", 0), [("c", [1])]),
        ],
    ),
]


@pytest.mark.parametrize(("case", "limit", "steps"), CASES, ids=[c[0] for c in CASES])
def test_the_gate(case: str, limit: int, steps: list[tuple[tuple[object, ...], object]]) -> None:
    gate: ChatGate[int] = ChatGate(limit)
    for step, expected in steps:
        if step[0] == "offer":
            _, chat, item, busy, busy_chats = step
            got: object = gate.offer(
                str(chat), int(str(item)), busy=bool(busy), busy_chats=int(str(busy_chats))
            )
        else:
            got = gate.release(int(str(step[1])))
        assert got == expected, (case, step)


def test_what_waits_is_counted_and_named() -> None:
    gate: ChatGate[str] = ChatGate(1)
    assert not gate.offer("c", "m1", busy=False, busy_chats=1)
    assert not gate.offer("d", "m2", busy=False, busy_chats=1)
    assert gate.waiting == 2
    assert "c" in gate
    assert "a" not in gate
    gate.release(0)
    assert gate.waiting == 1
    assert "c" not in gate


def test_the_limit_is_at_least_one() -> None:
    with pytest.raises(ValueError, match="limit must be >= 1, got 0"):
        ChatGate(0)
    assert ChatGate().limit == MAX_BUSY_CHATS


@pytest.mark.parametrize(
    ("written", "inbox", "again", "kept"),
    [
        (False, None, False, (True, None, False)),  # the write not back: the item stays
        (True, 7, False, (False, 7, False)),  # written: only the row's id
        (True, None, False, (False, None, False)),  # claimed before: nothing to serve
        (True, 9, True, (False, 9, True)),  # fed again after a restart: said so
    ],
)
def test_a_waiting_message_keeps_only_its_row_once_written(
    written: bool, inbox: int | None, again: bool, kept: tuple[bool, int | None, bool]
) -> None:
    accepted = Accepted(None, inbox, again=again)
    if written:
        accepted.written.set()
    waiting = Waiting("c1", "{}", accepted)
    waiting.landed()
    assert (waiting.accepted is accepted, waiting.inbox, waiting.again) == kept
