"""Where entries sit in the text of a block-style YAML document.

YAML's block structure is carried by indentation, so the lines that belong to a mapping entry,
and the comment lines that introduce or close it, can be found from columns alone once a parser
has said where each key starts. The merge uses this to insert new entries as text, which leaves
every existing byte of a user's file where it was.

Comment ownership follows how people write YAML: a comment indented at least as deep as the
entries of a block belongs to that block (often a commented-out entry); a comment indented less
introduces whatever comes after the block, and so do the blank lines just above it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

__all__ = [
    "Indent",
    "entry_span",
    "flow_insertion_point",
    "guess_indent",
    "indent_of",
    "insertion_index",
    "is_comment",
    "leading_block",
    "reindent",
]


@dataclass(frozen=True, slots=True)
class Indent:
    """A document's block indentation, in ruamel's terms."""

    mapping: int = 2
    sequence: int = 2
    offset: int = 0


def indent_of(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def is_comment(line: str) -> bool:
    return line.lstrip(" ").startswith("#")


def _is_content(line: str) -> bool:
    return bool(line.strip()) and not is_comment(line)


def _is_dash(line: str) -> bool:
    stripped = line.lstrip(" ")
    return stripped == "-" or stripped.startswith("- ")


def guess_indent(lines: Sequence[str]) -> Indent:
    """The indentation steps a document uses, so that added lines look like their neighbours."""
    content = [line for line in lines if _is_content(line) and line.strip() not in ("---", "...")]
    mapping: int | None = None
    sequence: tuple[int, int] | None = None
    for index, line in enumerate(content[:-1]):
        stripped = line.rstrip()
        if not stripped.endswith(":") or _is_dash(line):
            continue
        parent = indent_of(line)
        child = content[index + 1]
        child_indent = indent_of(child)
        if _is_dash(child):
            if sequence is None:
                after_dash = child.lstrip(" ")[1:]
                start = child_indent + 1 + indent_of(after_dash)
                sequence = (start - parent, child_indent - parent)
        elif mapping is None and child_indent > parent:
            mapping = child_indent - parent
        if mapping is not None and sequence is not None:
            break
    indent = Indent() if mapping is None else Indent(mapping, mapping, 0)
    if sequence is not None:
        step, offset = sequence
        if offset >= 0 and step >= offset + 2:
            return Indent(indent.mapping, step, offset)
    return indent


def _content_end(lines: Sequence[str], key_line: int, column: int) -> tuple[int, int]:
    """``(last, stop)``: the last content line of the entry at ``key_line`` and the first line
    that no longer belongs to it (a sibling, a parent's sibling, a document marker or the end).
    """
    last = key_line
    index = key_line + 1
    while index < len(lines):
        line = lines[index]
        if _is_content(line):
            indent = indent_of(line)
            if (
                indent > column
                or (indent == column and _is_dash(line))
                # The closing bracket of a multi-line flow collection may sit at any column.
                or line.lstrip(" ").startswith(("}", "]"))
            ):
                last = index
            else:
                break
        index += 1
    return last, index


def _own_trailing(lines: Sequence[str], start: int, stop: int, column: int) -> int:
    """The end of the comment lines in ``lines[start:stop]`` that belong to a block at
    ``column``: up to the first comment indented less (or ``stop``), less the blank lines
    above it."""
    cut = stop
    for index in range(start, stop):
        line = lines[index]
        if line.strip() and indent_of(line) < column:
            cut = index
            break
    while cut > start and not lines[cut - 1].strip():
        cut -= 1
    return cut


def insertion_index(lines: Sequence[str], last_key_line: int, column: int) -> int:
    """Where a new entry of the mapping whose last key is on ``last_key_line`` goes.

    After the last entry and the comments that still belong to the mapping, before the
    comments that introduce what follows it.
    """
    last, stop = _content_end(lines, last_key_line, column)
    return _own_trailing(lines, last + 1, stop, column)


def entry_span(lines: Sequence[str], key_line: int, column: int) -> tuple[int, int]:
    """``(start, end)`` of the lines of the entry whose key is at ``(key_line, column)``.

    Includes the commented-out lines nested under it; excludes its leading comment.
    """
    last, stop = _content_end(lines, key_line, column)
    return key_line, _own_trailing(lines, last + 1, stop, column + 1)


def leading_block(lines: Sequence[str], key_line: int, column: int) -> int:
    """The first line of the comment block introducing the key at ``key_line``, including one
    blank line above it so that a new section stays set off from the one before."""
    start = key_line
    while start > 0 and is_comment(lines[start - 1]) and indent_of(lines[start - 1]) <= column:
        start -= 1
    if start > 0 and not lines[start - 1].strip():
        start -= 1
    return start


def reindent(
    lines: Sequence[str], column: int, to_column: int, step: int, to_step: int
) -> list[str]:
    """Move a block whose key is at ``column`` to ``to_column``, rescaling nested steps."""
    result: list[str] = []
    for line in lines:
        if not line.strip():
            result.append("")
            continue
        relative = indent_of(line) - column
        scaled = relative * to_step // step if relative >= 0 else relative
        result.append(" " * max(0, to_column + scaled) + line.lstrip(" "))
    return result


def flow_insertion_point(
    lines: Sequence[str], line: int, column: int
) -> tuple[int, int, str] | None:
    """Where to add an entry to the flow mapping whose ``{`` is at ``(line, column)``.

    Returns ``(line, column, previous)``: just after the last significant character before the
    closing ``}`` (so never inside a comment), and that character (``{``, ``,`` or the end of
    the last entry). ``None`` if no flow mapping starts there or it never closes.
    """
    if line >= len(lines) or lines[line][column : column + 1] != "{":
        return None
    depth = 0
    last: tuple[int, int, str] = (line, column, "{")
    quote: str | None = None
    for row in range(line, len(lines)):
        text = lines[row]
        index = column if row == line else 0
        while index < len(text):
            char = text[index]
            if quote is not None:
                if quote == '"' and char == "\\":
                    index += 1
                elif char == quote:
                    if quote == "'" and text[index + 1 : index + 2] == "'":
                        index += 1  # '' is an escaped quote
                    else:
                        quote = None
                last = (row, index + 1, char)
            elif char == "#" and (index == 0 or text[index - 1] in " \t"):
                break  # a comment runs to the end of the line
            elif char in "{[":
                depth += 1
                last = (row, index + 1, char)
            elif char in "}]":
                depth -= 1
                if depth == 0:
                    return last
                last = (row, index + 1, char)
            elif char in "\"'":
                quote = char
                last = (row, index + 1, char)
            elif char not in " \t":
                last = (row, index + 1, char)
            index += 1
    return None
