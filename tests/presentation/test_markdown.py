"""Splitting a long answer on Markdown boundaries."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from robota.core.presentation import split_markdown
from robota.core.presentation._markdown import _split_pieces, count_tables, defuse_tables


def size(text: str, unit: str) -> int:
    return len(text) if unit == "chars" else len(text.encode("utf-8"))


# -- a document generator that knows where its fences and tables are ---------------------------

WORDS = st.sampled_from(["alpha", "béta", "中文", "x", "ok.", "😀", "word", "**b**", "`c`", "a-b"])


@st.composite
def documents(draw: st.DrawFn) -> tuple[str, list[tuple[int, int]]]:
    """Markdown and the [start, end) spans of its fences and tables (which must stay whole)."""
    parts: list[str] = []
    spans: list[tuple[int, int]] = []
    offset = 0
    for _ in range(draw(st.integers(1, 12))):
        kind = draw(st.sampled_from(["para", "para", "fence", "table", "list"]))
        if kind == "para":
            lines = [
                " ".join(draw(st.lists(WORDS, min_size=1, max_size=25)))
                for _ in range(draw(st.integers(1, 4)))
            ]
            block = "\n".join(lines) + "\n"
        elif kind == "list":
            items = draw(st.lists(st.lists(WORDS, min_size=1, max_size=8), min_size=1, max_size=6))
            block = "".join(f"- {' '.join(item)}\n" for item in items)
        elif kind == "fence":
            marker = draw(st.sampled_from(["```", "````", "~~~"]))
            lang = draw(st.sampled_from(["", "python", "sh"]))
            body = [
                " ".join(draw(st.lists(WORDS, max_size=12)))
                for _ in range(draw(st.integers(0, 30)))
            ]
            block = f"{marker}{lang}\n" + "".join(f"{line}\n" for line in body) + f"{marker}\n"
        else:
            cols = draw(st.integers(1, 4))
            rows = draw(st.integers(0, 25))
            header = "| " + " | ".join(f"h{i}" for i in range(cols)) + " |\n"
            rule = "|" + "---|" * cols + "\n"
            body = "".join(
                "| " + " | ".join(draw(WORDS) for _ in range(cols)) + " |\n" for _ in range(rows)
            )
            block = header + rule + body
        if kind in ("fence", "table"):
            spans.append((offset, offset + len(block)))
        parts.append(block)
        offset += len(block)
        separator = "\n"
        parts.append(separator)
        offset += len(separator)
    return "".join(parts), spans


def fences_balanced(chunk: str) -> bool:
    inside: str | None = None
    for line in chunk.split("\n"):
        match = re.match(r"^ {0,3}(`{3,}|~{3,})", line)
        if match is None:
            continue
        marker = match.group(1)
        if inside is None:
            inside = marker
        elif (
            marker[0] == inside[0]
            and len(marker) >= len(inside)
            and not line[len(marker) :].strip()
        ):
            inside = None
    return inside is None


@settings(max_examples=300, deadline=None)
@given(documents(), st.integers(32, 2000), st.sampled_from(["chars", "bytes"]))
def test_chunks_fit_keep_blocks_whole_and_lose_nothing(
    document: tuple[str, list[tuple[int, int]]], limit: int, unit: str
) -> None:
    text, spans = document
    pieces = _split_pieces(text, limit, unit=unit)  # type: ignore[arg-type]
    assert "".join(piece.body for piece in pieces) == text
    assert [p.text for p in pieces] == split_markdown(text, limit, unit=unit)  # type: ignore[arg-type]
    boundaries, offset = [], 0
    for piece in pieces:
        assert size(piece.text, unit) <= limit
        assert fences_balanced(piece.text), piece.text
        offset += len(piece.body)
        boundaries.append(offset)
    for start, end in spans:
        if size(text[start:end], unit) <= limit:
            assert not any(start < b < end for b in boundaries), (start, end, boundaries)
    for piece in pieces[1:]:
        if piece.prefix.startswith("|"):  # a table split over chunks repeats its header
            assert re.match(r"\|[^\n]*\n\|(-+\|)+\n", piece.text)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=3000), st.integers(32, 500), st.sampled_from(["chars", "bytes"]))
def test_any_text_fits_and_reassembles(text: str, limit: int, unit: str) -> None:
    pieces = _split_pieces(text, limit, unit=unit)  # type: ignore[arg-type]
    if text.strip():
        assert "".join(piece.body for piece in pieces) == text
    for piece in pieces:
        assert size(piece.text, unit) <= limit


def test_prefers_a_paragraph_boundary() -> None:
    first = "word " * 15 + "\n"
    second = "more " * 5 + "\nnext line " * 3 + "\n"
    text = first + "\n" + second
    chunks = split_markdown(text, len(first) + 30)
    assert chunks[0] == first + "\n"


def test_falls_back_to_line_boundaries() -> None:
    text = "".join(f"line number {i}\n" for i in range(50))
    chunks = split_markdown(text, 100)
    assert all(chunk.endswith("\n") for chunk in chunks)
    assert "".join(chunks) == text


def test_a_fence_that_fits_moves_whole_to_the_next_chunk() -> None:
    intro = "intro " * 10 + "\n\n"
    fence = "```python\n" + "print(1)\n" * 5 + "```\n"
    chunks = split_markdown(intro + fence, len(fence) + 10)
    assert chunks == [intro, fence]


def test_an_oversized_fence_is_closed_and_reopened() -> None:
    fence = "```python\n" + "".join(f"x = {i}\n" for i in range(100)) + "```\n"
    chunks = split_markdown(fence, 120)
    assert len(chunks) > 3
    for chunk in chunks:
        assert chunk.startswith("```python\n")
        assert chunk.endswith("```\n")
        assert len(chunk) <= 120


def test_an_oversized_table_repeats_its_header() -> None:
    table = "| a | b |\n|---|---|\n" + "".join(f"| {i} | v |\n" for i in range(60))
    chunks = split_markdown(table, 100)
    assert len(chunks) > 2
    for chunk in chunks:
        assert chunk.startswith("| a | b |\n|---|---|\n")


def test_bytes_count_utf8() -> None:
    text = "中" * 100
    for chunk in split_markdown(text, 40, unit="bytes"):
        assert len(chunk.encode()) <= 40
    assert "".join(split_markdown(text, 40, unit="bytes")) == text


def test_table_cap_per_chunk() -> None:
    table = "| a |\n|---|\n| 1 |\n"
    text = "\n".join([table] * 7)
    chunks = split_markdown(text, 10_000, max_tables=3)
    assert [count_tables(c) for c in chunks] == [3, 3, 1]


def test_defused_tables_keep_their_text() -> None:
    text = "before\n| a |\n|---|\n| 1 |\nafter\n"
    defused = defuse_tables(text)
    assert count_tables(defused) == 0
    assert "| a |\n|---|\n| 1 |\n" in defused


def test_blank_input_and_tiny_limits() -> None:
    assert split_markdown("  \n\n", 100) == []
    with pytest.raises(ValueError, match="minimum"):
        split_markdown("text", 10)


def test_tables_pasted_back_to_back_count_once_per_header_row() -> None:
    """Found by hypothesis: GFM reads two adjacent tables as one, a stricter renderer as two;
    the Feishu table budget must hold under the stricter reading."""
    table = "| a | b |\n|---|---|\n| 1 | 2 |\n"
    assert count_tables(table) == 1
    assert count_tables(table + table) == 2
    assert count_tables(table + "\n" + table) == 2
    assert count_tables("```\n" + table + table + "```\n") == 0
