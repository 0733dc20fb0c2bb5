"""The bounded line splitter: lines out whatever the chunking, overlong lines skipped in
bounded memory."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from robota.core.control import LineSplitter, Overlong

from ._chunking import chunked


def split_whole(data: bytes, max_line: int) -> list[bytes | Overlong]:
    splitter = LineSplitter(max_line)
    return splitter.feed(data) + splitter.close()


@pytest.mark.parametrize(
    ("data", "max_line", "expected"),
    [
        (b"", 10, []),
        (b"a\n", 10, [b"a"]),
        (b"a\nb\n", 10, [b"a", b"b"]),
        (b"\n\n", 10, [b"", b""]),
        (b"a\r\n", 10, [b"a\r"]),
        (b"tail", 10, [b"tail"]),
        (b"a\ntail", 10, [b"a", b"tail"]),
        (b"0123456789\n", 10, [b"0123456789"]),
        (b"0123456789X\nok\n", 10, [Overlong(b"0123456789X", 10), b"ok"]),
        (b"0123456789XYZ", 10, [Overlong(b"0123456789X", 10)]),
        (
            b"x" * 25 + b"\n" + b"y" * 30 + b"\nz\n",
            10,
            [
                Overlong(b"x" * 11, 10),
                Overlong(b"y" * 11, 10),
                b"z",
            ],
        ),
    ],
)
def test_split_table(data: bytes, max_line: int, expected: list[bytes | Overlong]) -> None:
    assert split_whole(data, max_line) == expected


def test_an_overlong_line_is_reported_before_its_newline_arrives() -> None:
    splitter = LineSplitter(4)
    assert splitter.feed(b"abc") == []
    assert splitter.feed(b"de") == [Overlong(b"abcde", 4)]
    assert splitter.feed(b"f" * 1000) == []
    assert splitter.pending == 0
    assert splitter.feed(b"g\nok\n") == [b"ok"]


def test_the_head_of_an_overlong_line_is_bounded() -> None:
    splitter = LineSplitter(1000)
    (item,) = splitter.feed(b"q" * 5000)
    assert isinstance(item, Overlong)
    assert item.head == b"q" * 80


def test_a_bound_below_one_is_refused() -> None:
    with pytest.raises(ValueError, match="max_line must be at least 1"):
        LineSplitter(0)


@settings(max_examples=300, deadline=None)
@given(
    data=st.binary(max_size=400).map(lambda b: b.replace(b"\x00", b"\n")),
    cuts=st.lists(st.integers(min_value=0, max_value=400), max_size=30),
    max_line=st.integers(min_value=1, max_value=40),
)
def test_chunking_never_changes_the_lines(data: bytes, cuts: list[int], max_line: int) -> None:
    splitter = LineSplitter(max_line)
    items: list[bytes | Overlong] = []
    for chunk in chunked(data, cuts):
        items += splitter.feed(chunk)
        assert splitter.pending <= max_line
    items += splitter.close()
    assert items == split_whole(data, max_line)
    # Every fitting line comes out as it was; every line too long is one Overlong.
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    assert [item if isinstance(item, bytes) else "long" for item in items] == [
        line if len(line) <= max_line else "long" for line in lines
    ]
