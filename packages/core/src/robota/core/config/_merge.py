"""Merging a newer config.yaml template into a user's file without losing anything of theirs.

The merge only ever *adds* mapping entries the user's file lacks; it never changes, reorders or
removes what is there. Two kinds of entries are not added even when missing:

* agents under an existing ``agents`` mapping: that mapping is the user's list, and an agent
  they deleted stays deleted (agents they kept do get missing fields filled in);
* ``defaults.agent``: the template's default agent may be one the user removed, so a missing
  default is left for validation to report rather than guessed.

New entries are inserted as text, so every existing byte stays where it was: into a block mapping
as lines copied from the template with their comments, re-indented to the user's style; into a
flow mapping (``defaults: {agent: mine}``) as ``, key: value`` before its closing brace. The
result is checked by parsing it: it must equal the user's data plus exactly the added entries.
If it does not (a layout the line-based insertion gets wrong, such as a ``|+`` scalar at the end
of a mapping), ruamel's round-trip dump is used instead, which keeps every value and comment but
may re-indent the file; if even that fails the check, the merge refuses rather than guess.

When nothing is missing the text is returned unchanged, byte for byte, which makes a second merge
a no-op by construction.
"""

from __future__ import annotations

import copy
import io
from collections.abc import Iterator, Sequence
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap
from ruamel.yaml.error import YAMLError

from robota.core._errors import ConfigError

from ._layout import (
    Indent,
    entry_span,
    flow_insertion_point,
    guess_indent,
    insertion_index,
    leading_block,
    reindent,
)
from ._load import parse_yaml, yaml_problem
from ._merge_rt import Addition, dump_round_trip, round_trip_yaml

__all__ = ["merge_config_text"]

_USER_OWNED: frozenset[tuple[str, ...]] = frozenset({("agents",)})
"""Mappings whose missing entries are never added back."""
_NOT_INFERRED: frozenset[tuple[str, ...]] = frozenset({("defaults", "agent")})
"""Entries that are never added to an existing file."""


def _plan(ours: Any, theirs: Any, path: tuple[str, ...]) -> Iterator[Addition]:
    for key, value in theirs.items():
        here = (*path, key)
        if key in ours:
            mine = ours[key]
            if isinstance(mine, CommentedMap) and isinstance(value, CommentedMap):
                yield from _plan(mine, value, here)
        elif path not in _USER_OWNED and here not in _NOT_INFERRED:
            excluded: tuple[str, ...] = ()
            if isinstance(value, CommentedMap):
                excluded = tuple(k for k in value if (*here, k) in _NOT_INFERRED)
            yield Addition(path, key, ours, theirs, excluded)


def _leading_lines(template_lines: Sequence[str], addition: Addition) -> list[str]:
    """The template's comment above an entry, without ``#``, for ruamel's comment API."""
    line, column = addition.theirs.lc.key(addition.key)
    start = leading_block(template_lines, line, column)
    return [text.strip().removeprefix("#").removeprefix(" ") for text in template_lines[start:line]]


def _template_block(template_lines: Sequence[str], addition: Addition) -> tuple[list[str], int]:
    """The template's lines for an entry (leading comment included) and its key's column."""
    line, column = addition.theirs.lc.key(addition.key)
    start = leading_block(template_lines, line, column)
    _, end = entry_span(template_lines, line, column)
    dropped: set[int] = set()
    value = addition.theirs[addition.key]
    for key in addition.excluded:
        inner_line, inner_column = value.lc.key(key)
        inner_start = leading_block(template_lines, inner_line, inner_column)
        if not template_lines[inner_start].strip():
            inner_start += 1  # keep the blank line that separates it from what comes before
        dropped.update(range(inner_start, entry_span(template_lines, inner_line, inner_column)[1]))
    return [template_lines[i] for i in range(start, end) if i not in dropped], column


def _flow_text(addition: Addition, template_data: Any) -> str:
    """The entry as ``key: value`` in flow style, for a flow mapping such as ``{a: 1}``."""
    value: Any = template_data
    for key in (*addition.path, addition.key):
        value = value[key]
    if isinstance(value, dict):
        value = {k: v for k, v in value.items() if k not in addition.excluded}
    yaml = YAML(typ="safe", pure=True)
    yaml.default_flow_style = True
    yaml.sort_base_mapping_type_on_output = False  # type: ignore[assignment]
    yaml.width = 1 << 16
    # The key as plain data: a key the template quoted loads (round trip) as ruamel's own
    # str subclass, which the safe dumper refuses; ``value`` is already plain.
    key = str(addition.key) if isinstance(addition.key, str) else addition.key
    buffer = io.StringIO()
    yaml.dump({key: value}, buffer)
    return buffer.getvalue().strip()[1:-1]


def _insert_text(
    lines: list[str],
    additions: Sequence[Addition],
    template_lines: Sequence[str],
    template_data: Any,
    indent: Indent,
) -> str:
    """Insert every addition as text: new lines for block mappings, ``, key: value`` for flow
    mappings (without comments: there is no good place for them inside braces)."""
    template_indent = guess_indent(template_lines)
    groups: dict[int, list[Addition]] = {}
    for addition in additions:
        groups.setdefault(id(addition.ours), []).append(addition)
    blocks: list[tuple[int, int, list[str]]] = []
    inline: list[tuple[int, int, str]] = []
    for group in groups.values():
        ours = group[0].ours
        flow = flow_insertion_point(lines, ours.lc.line, ours.lc.col)
        if flow is not None:
            row, column, previous = flow
            entries = ", ".join(_flow_text(addition, template_data) for addition in group)
            inline.append((row, column, entries if previous in "{," else ", " + entries))
            continue
        last_line, column = ours.lc.key(next(reversed(ours)))
        block: list[str] = []
        for addition in group:
            chunk, template_column = _template_block(template_lines, addition)
            block += reindent(
                chunk, template_column, column, template_indent.mapping, indent.mapping
            )
        blocks.append((insertion_index(lines, last_line, column), len(group[0].path), block))
    # Right to left within a line, so that earlier columns stay valid.
    for row, column, text in sorted(inline, reverse=True):
        lines[row] = lines[row][:column] + text + lines[row][column:]
    # Bottom up, so earlier indexes stay valid; at one index, deeper entries end up first.
    for at, _, block in sorted(blocks, key=lambda item: (-item[0], item[1])):
        lines[at:at] = block
    merged = "\n".join(lines)
    return merged if merged.endswith("\n") else merged + "\n"


def _expected(original: object, template: object, additions: Sequence[Addition]) -> object:
    """The user's data plus exactly the added entries, as plain data."""
    expected = copy.deepcopy(original)
    for addition in additions:
        target: Any = expected
        source: Any = template
        for key in addition.path:
            target, source = target[key], source[key]
        value = copy.deepcopy(source[addition.key])
        if isinstance(value, dict):
            for key in addition.excluded:
                value.pop(key, None)
        target[addition.key] = value
    return expected


def _parses_to(text: str, expected: object) -> bool:
    try:
        return parse_yaml(text, file="(merged)") == expected
    except ConfigError:
        return False


def merge_config_text(existing: str, template: str, *, file: str | None = None) -> str:
    """``existing`` with every entry of ``template`` it lacks added (see the module docstring).

    Raises ``ConfigError`` when ``existing`` is not valid YAML or not a mapping; the caller then
    leaves the file alone.
    """
    name = file or "config.yaml"
    crlf = "\r\n" in existing
    text = existing.replace("\r\n", "\n") if crlf else existing
    lines = text.split("\n")
    indent = guess_indent(lines)
    try:
        ours = round_trip_yaml(indent).load(text)
    except YAMLError as error:
        raise yaml_problem(name, error) from None
    if ours is None:
        # Empty, or nothing but comments: keep them, and put the template below.
        merged = template if not text.strip() else text.rstrip("\n") + "\n\n" + template
    elif not isinstance(ours, CommentedMap):
        found = "a list" if isinstance(ours, list) else f"a {type(ours).__name__} value"
        raise ConfigError(name, "(top level)", found, "a mapping of sections (agents, ...)")
    else:
        theirs = round_trip_yaml(Indent()).load(template)
        additions = list(_plan(ours, theirs, ()))
        if not additions:
            return existing
        template_lines = template.split("\n")
        template_data = parse_yaml(template, file="template")
        expected = _expected(parse_yaml(text, file=name), template_data, additions)
        merged = _insert_text(list(lines), additions, template_lines, template_data, indent)
        if not _parses_to(merged, expected):
            # A layout the line-based insertion gets wrong (a `|+` block scalar at the end of a
            # mapping, say): let ruamel rewrite the document instead.
            with_comments = [(a, _leading_lines(template_lines, a)) for a in additions]
            merged = dump_round_trip(
                ours, with_comments, indent, explicit_start=text.lstrip().startswith("---")
            )
            if not _parses_to(merged, expected):
                raise ConfigError(
                    name,
                    "(document)",
                    "a layout the template cannot be merged into safely",
                    "a block-style YAML mapping (merge by hand, or `robota init --reset`)",
                )
    return merged.replace("\n", "\r\n") if crlf else merged
