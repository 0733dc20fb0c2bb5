"""The fallback merge: add entries through ruamel's round-trip model and dump the document.

Used only when inserting text produced the wrong data (a layout such as a ``|+`` block scalar at
the end of a mapping, whose trailing newlines inserted lines would change). ruamel keeps every
comment, but attaches each one to the entry *before* it; appending an entry to a mapping would
put it below the comments that introduce the next section. Those comments are moved below the
new entries, so they still introduce the same thing.
"""

from __future__ import annotations

import copy
import io
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.error import CommentMark
from ruamel.yaml.tokens import CommentToken

from ._layout import Indent, indent_of

__all__ = ["Addition", "dump_round_trip", "round_trip_yaml"]


@dataclass(frozen=True, slots=True)
class Addition:
    """One template entry to add to the user's document."""

    path: tuple[str, ...]
    """Keys from the top of the document to the mapping that receives the entry."""
    key: str
    ours: Any
    """The user's ruamel mapping at ``path``."""
    theirs: Any
    """The template's ruamel mapping at ``path``."""
    excluded: tuple[str, ...] = ()
    """Keys of the added value that must not be copied with it."""


def round_trip_yaml(indent: Indent) -> Any:
    yaml = YAML(typ="rt", pure=True)
    yaml.preserve_quotes = True
    yaml.width = 1 << 16  # never re-wrap a user's long lines
    yaml.indent(mapping=indent.mapping, sequence=indent.sequence, offset=indent.offset)
    return yaml


def _trailing_slot(node: Any) -> tuple[list[Any], int] | None:
    """Where ruamel keeps the comment after the last line of ``node``: ``(slots, index)``."""
    if isinstance(node, CommentedMap) and node:
        last = next(reversed(node))
        deeper = _trailing_slot(node[last])
        if deeper is not None:
            return deeper
        return node.ca.items.setdefault(last, [None, None, None, None]), 2
    if isinstance(node, CommentedSeq) and node:
        index = len(node) - 1
        deeper = _trailing_slot(node[index])
        if deeper is not None:
            return deeper
        return node.ca.items.setdefault(index, [None, None, None, None]), 0
    return None


def _split_comment(value: str, column: int) -> tuple[str, str]:
    """Split a trailing comment into the part that stays with its block and the part after it."""
    head, newline, rest = value.partition("\n")
    lines = rest.split("\n")
    cut = len(lines)
    for index, line in enumerate(lines):
        if line.strip() and indent_of(line) < column:
            cut = index
            while cut > 0 and not lines[cut - 1].strip():
                cut -= 1
            break
    return head + newline + "\n".join(lines[:cut]) + ("\n" if cut else ""), "\n".join(lines[cut:])


def _comment_token(value: str, column: int) -> Any:
    return CommentToken(value, CommentMark(column))


def _append(addition: Addition, column: int, leading: Sequence[str]) -> None:
    ours, key = addition.ours, addition.key
    moved = ""
    slot = _trailing_slot(ours)
    if slot is not None and slot[0][slot[1]] is not None:
        token = slot[0][slot[1]]
        token.value, moved = _split_comment(token.value, column)
    value = copy.deepcopy(addition.theirs[key])
    if isinstance(value, CommentedMap):
        for excluded in addition.excluded:
            value.pop(excluded, None)
    own = _trailing_slot(value)
    if own is not None and own[0][own[1]] is not None:
        # Whatever follows the template's value introduces the template's next entry.
        token = own[0][own[1]]
        token.value = _split_comment(token.value, column + 1)[0]
    ours[key] = value
    if leading:
        ours.yaml_set_comment_before_after_key(key, before="\n".join(leading), indent=column)
    if moved.strip():
        slot = _trailing_slot(ours)
        assert slot is not None
        slots, index = slot
        if slots[index] is None:
            slots[index] = _comment_token("\n" + moved, 0)
        else:
            slots[index].value += moved


def dump_round_trip(
    document: Any,
    additions: Sequence[tuple[Addition, Sequence[str]]],
    indent: Indent,
    *,
    explicit_start: bool,
) -> str:
    """Apply ``additions`` (each with its leading comment lines) to ``document`` and dump it."""
    for addition, leading in additions:
        _append(addition, len(addition.path) * indent.mapping, leading)
    yaml = round_trip_yaml(indent)
    yaml.explicit_start = explicit_start
    buffer = io.StringIO()
    yaml.dump(document, buffer)
    return buffer.getvalue()
