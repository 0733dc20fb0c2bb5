"""Split a long Markdown answer into messages of at most N characters or UTF-8 bytes.

Chunks break between blocks, preferring a paragraph boundary (after a blank line) when it keeps
the chunk at least half full, else a line boundary. A fenced code block or a table is never cut
unannounced: one that fits is kept whole (moved to the next chunk if needed); one larger than
the limit is split between its lines, each part closed and reopened as a fence of its own (a
table repeats its header row and delimiter row), so every chunk renders on its own. Only a
single line longer than the limit is cut mid-line, because nothing else can make it fit.

Every chunk is an exact slice of the input plus, at most, a synthetic prefix (the reopened fence
or repeated table header) and a synthetic suffix (the closing fence): ``_split_pieces`` returns
them apart, and joining the slices gives back the input exactly.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

__all__ = ["MIN_LIMIT", "count_tables", "defuse_tables", "split_markdown"]

MIN_LIMIT = 32
"""Below this a fence cannot be closed and reopened around any content."""

_FENCE_OPEN = re.compile(r"^( {0,3})(`{3,}|~{3,})([^\n]*)\n?$")
_TABLE_DELIMITER = re.compile(r"^\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*\n?$")
_LINES = re.compile(r"[^\n]*\n|[^\n]+$")

Measure = Callable[[str], int]


@dataclass(frozen=True, slots=True)
class _Block:
    kind: Literal["blank", "line", "fence", "table"]
    lines: tuple[str, ...]
    closed: bool = True
    """For fences: whether the input closes it (an unclosed fence runs to the end)."""

    @property
    def text(self) -> str:
        return "".join(self.lines)


@dataclass(frozen=True, slots=True)
class _Piece:
    prefix: str
    body: str
    suffix: str

    @property
    def text(self) -> str:
        return self.prefix + self.body + self.suffix


def split_markdown(
    text: str,
    limit: int,
    *,
    unit: Literal["chars", "bytes"] = "chars",
    max_tables: int | None = None,
) -> list[str]:
    """``text`` in chunks of at most ``limit`` characters (or UTF-8 bytes), each valid Markdown.

    ``max_tables`` also caps the tables per chunk (Feishu cards refuse more than a few). Blank
    input gives no chunks.
    """
    return [piece.text for piece in _split_pieces(text, limit, unit=unit, max_tables=max_tables)]


def _split_pieces(
    text: str,
    limit: int,
    *,
    unit: Literal["chars", "bytes"] = "chars",
    max_tables: int | None = None,
) -> list[_Piece]:
    if limit < MIN_LIMIT:
        raise ValueError(f"limit {limit} is below the minimum of {MIN_LIMIT}")
    if not text.strip():
        return []
    measure: Measure = len if unit == "chars" else _utf8_len
    packer = _Packer(limit, measure, max_tables)
    for block in _blocks(text):
        if block.kind == "fence" and measure(block.text) > limit:
            packer.oversized_fence(block)
        elif block.kind == "table" and measure(block.text) > limit:
            packer.oversized_table(block)
        else:
            packer.block(block.text, blank=block.kind == "blank", table=block.kind == "table")
    packer.flush()
    return packer.out


def _utf8_len(text: str) -> int:
    return len(text.encode("utf-8"))


# -- parsing ------------------------------------------------------------------------------------


def _blocks(text: str) -> list[_Block]:
    lines: list[str] = _LINES.findall(text)
    blocks: list[_Block] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        fence = _FENCE_OPEN.match(line)
        if fence is not None and not (fence.group(2)[0] == "`" and "`" in fence.group(3)):
            char, length = fence.group(2)[0], len(fence.group(2))
            closer = re.compile(rf"^ {{0,3}}{re.escape(char)}{{{length},}}[ \t]*\n?$")
            j = i + 1
            while j < len(lines) and closer.match(lines[j]) is None:
                j += 1
            closed = j < len(lines)
            end = j + 1 if closed else j
            blocks.append(_Block("fence", tuple(lines[i:end]), closed))
            i = end
            continue
        if (
            "|" in line
            and i + 1 < len(lines)
            and "|" in lines[i + 1]
            and _TABLE_DELIMITER.match(lines[i + 1]) is not None
        ):
            j = i + 2
            # A table runs until a blank line or the next block that is not a row.
            while j < len(lines) and lines[j].strip() and _FENCE_OPEN.match(lines[j]) is None:
                j += 1
            blocks.append(_Block("table", tuple(lines[i:j])))
            i = j
            continue
        if not line.strip():
            j = i + 1
            while j < len(lines) and not lines[j].strip():
                j += 1
            blocks.append(_Block("blank", tuple(lines[i:j])))
            i = j
            continue
        blocks.append(_Block("line", (line,)))
        i += 1
    return blocks


# -- packing ------------------------------------------------------------------------------------


class _Packer:
    """Fills chunks greedily, remembering where the last paragraph boundary was."""

    def __init__(self, limit: int, measure: Measure, max_tables: int | None) -> None:
        self.limit = limit
        self.measure = measure
        self.max_tables = max_tables
        self.out: list[_Piece] = []
        self._reset()

    def _reset(self, prefix: str = "") -> None:
        self.prefix = prefix
        self.body: list[tuple[str, bool]] = []  # (text, is a table)
        self.size = self.measure(prefix)
        self.tables = 0
        self.mark: tuple[int, int] | None = None  # (body index, size) after the last blank

    @property
    def room(self) -> int:
        return self.limit - self.size

    def _append(self, text: str, *, table: bool = False) -> None:
        self.body.append((text, table))
        self.size += self.measure(text)
        self.tables += table

    def flush(self, suffix: str = "") -> None:
        if self.body:
            body = "".join(text for text, _ in self.body)
            self.out.append(_Piece(self.prefix, body, suffix))
        self._reset()

    def _tables_full(self) -> bool:
        return self.max_tables is not None and self.tables >= self.max_tables

    def _break(self) -> None:
        """End the current chunk, at its last paragraph boundary if that keeps it half full."""
        mark = self.mark
        if mark is not None and mark[1] >= self.limit // 2 and mark[0] < len(self.body):
            carried = self.body[mark[0] :]
            self.body = self.body[: mark[0]]
            self.flush()
            for text, table in carried:
                self._append(text, table=table)
        else:
            self.flush()

    def block(self, text: str, *, blank: bool = False, table: bool = False) -> None:
        size = self.measure(text)
        if size > self.room or (table and self._tables_full()):
            self._break()
            if size > self.room or (table and self._tables_full()):
                self.flush()
        if size <= self.room:
            self._append(text, table=table)
        else:
            # A single line longer than a whole chunk: the one case that is cut mid-line.
            parts = _cut(text, self.limit, self.measure)
            for part in parts[:-1]:
                self._append(part)
                self.flush()
            self._append(parts[-1])
        if blank:
            self.mark = (len(self.body), self.size)

    def oversized_fence(self, block: _Block) -> None:
        self.flush()
        opener = block.lines[0]
        fence = _FENCE_OPEN.match(opener)
        assert fence is not None
        marker = f"{fence.group(1)}{fence.group(2)}\n"
        reopen = opener if self.measure(opener) <= self.limit // 4 else marker
        inner = block.lines[1:-1] if block.closed else block.lines[1:]

        def close() -> str:
            last = self.body[-1][0] if self.body else self.prefix
            return marker if last.endswith("\n") else "\n" + marker

        closing_room = self.measure(marker) + 1
        if self.measure(opener) + closing_room + 8 > self.limit:
            # An opener too long to share a chunk with any content: an over-long line.
            parts = _cut(opener, max(1, self.limit // 2), self.measure)
            for part in parts[:-1]:
                self._append(part)
                self.flush()
            self._append(parts[-1])
        else:
            self._append(opener)
        for line in inner:
            if self.measure(line) + closing_room <= self.room:
                self._append(line)
                continue
            if len(self.body) > 1 or self.prefix:
                self.flush(close())
                self._reset(reopen)
            budget = self.room - closing_room
            if self.measure(line) <= budget:
                self._append(line)
                continue
            parts = _cut(line, budget, self.measure)
            for part in parts[:-1]:
                self._append(part)
                self.flush(close())
                self._reset(reopen)
            self._append(parts[-1])
        if block.closed:
            closer = block.lines[-1]
            if self.measure(closer) > self.room:
                self.flush(close())
                self._reset(reopen)
            self._append(closer)
        else:
            # The input never closed it; neither does the last chunk (mirror the input).
            pass

    def oversized_table(self, block: _Block) -> None:
        self.flush()
        header = "".join(block.lines[:2])
        repeat = header if self.measure(header) <= self.limit // 2 else ""
        if self.measure(header) <= self.limit:
            self._append(header, table=True)
        else:  # a header wider than a chunk: its lines are over-long lines
            for line in block.lines[:2]:
                self.block(line)
            self.tables = 1
        for row in block.lines[2:]:
            if self.measure(row) <= self.room:
                self._append(row)
                continue
            self.flush()
            self._reset(repeat)
            self.tables = 1
            if self.measure(row) <= self.room:
                self._append(row)
                continue
            parts = _cut(row, self.room, self.measure)
            for part in parts[:-1]:
                self._append(part)
                self.flush()
                self._reset(repeat)
                self.tables = 1
            self._append(parts[-1])


def _cut(text: str, budget: int, measure: Measure) -> list[str]:
    """``text`` in parts of at most ``budget`` (chars or bytes), never inside a character."""
    parts: list[str] = []
    rest = text
    while measure(rest) > budget:
        if measure is len:
            size = budget
        else:
            size = len(rest.encode("utf-8")[:budget].decode("utf-8", errors="ignore"))
        size = max(size, 1)
        parts.append(rest[:size])
        rest = rest[size:]
    parts.append(rest)
    return parts


def count_tables(text: str) -> int:
    """How many Markdown tables ``text`` has (Feishu refuses cards with more than a few)."""
    return sum(_tables_in(block.text) for block in _blocks(text) if block.kind == "table")


def _tables_in(table: str) -> int:
    """Tables pasted back to back parse as one table in GFM, but a renderer that starts a new
    table at every header row sees several; count those header rows, the stricter reading."""
    lines = table.split("\n")
    headers = sum(
        1
        for above, line in itertools.pairwise(lines)
        if "|" in above and "|" in line and _TABLE_DELIMITER.match(line) is not None
    )
    return max(1, headers)


def defuse_tables(text: str) -> str:
    """``text`` with every table shown as a code block: same content, no table component."""
    out: list[str] = []
    for block in _blocks(text):
        if block.kind == "table":
            body = block.text if block.text.endswith("\n") else block.text + "\n"
            out.append("```\n" + body.replace("```", "`\u200d``") + "```\n")
        else:
            out.append(block.text)
    return "".join(out)
