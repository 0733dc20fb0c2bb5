"""Hypothesis strategies for config.yaml-like documents with comments, for the merge tests.

A document is plain data plus the comments to render around it. Rendering is done here, not by
ruamel, so that the tests do not trust the library the merge is built on.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field
from typing import Any

from hypothesis import strategies as st

Path = tuple[str, ...]


@dataclass
class Doc:
    data: dict[str, Any]
    before: dict[Path, list[tuple[str, bool]]] = field(default_factory=dict)
    """Comment lines before an entry: (text, at column 0 instead of the entry's column)."""
    eol: dict[Path, str] = field(default_factory=dict)
    blank_before: set[Path] = field(default_factory=set)
    flow: set[Path] = field(default_factory=set)
    """Mappings written in flow style, ``{a: 1, b: {c: 2}}``, on one line."""
    trailer: list[str] = field(default_factory=list)


def _scalar(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, list):
        return "[" + ", ".join(_scalar(item) for item in value) + "]"
    return json.dumps(value)


def _flow(value: Any) -> str:
    if isinstance(value, dict):
        return "{" + ", ".join(f"{key}: {_flow(item)}" for key, item in value.items()) + "}"
    return _scalar(value) or "null"


def render(doc: Doc, indent: int = 2) -> str:
    lines: list[str] = []

    def emit(mapping: dict[str, Any], path: Path, column: int) -> None:
        for key, value in mapping.items():
            here = (*path, key)
            if here in doc.blank_before:
                lines.append("")
            for text, at_zero in doc.before.get(here, []):
                lines.append(" " * (0 if at_zero else column) + "# " + text)
            suffix = f"  # {doc.eol[here]}" if here in doc.eol else ""
            pad = " " * column
            if isinstance(value, dict) and here in doc.flow:
                lines.append(f"{pad}{key}: {_flow(value)}{suffix}")
            elif isinstance(value, dict) and value:
                lines.append(f"{pad}{key}:{suffix}")
                emit(value, here, column + indent)
            elif isinstance(value, dict):
                lines.append(f"{pad}{key}: {{}}{suffix}")
            else:
                rendered = _scalar(value)
                lines.append(f"{pad}{key}:{' ' + rendered if rendered else ''}{suffix}")

    emit(doc.data, (), 0)
    lines += ["# " + text for text in doc.trailer]
    return "\n".join(lines) + "\n"


def comment_lines(text: str) -> list[str]:
    return [line.strip() for line in text.split("\n") if line.strip().startswith("#")]


# -- strategies ------------------------------------------------------------------------------

_words = st.text("abcdefghijklmnopqrstuvwxyz", min_size=1, max_size=6)
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-1000, 1000),
    st.text(st.characters(min_codepoint=32, max_codepoint=0x2FF), max_size=12),
    st.lists(st.text("abc-/:", max_size=5), max_size=3),
)


def _comment(draw: st.DrawFn, where: str) -> str:
    # Unique (by place), so that "this comment survived" is a meaningful check.
    text = draw(st.text(st.characters(min_codepoint=32, max_codepoint=126), max_size=15))
    return f"{where} {text}".rstrip()


def _entries(data: dict[str, Any], path: Path = ()) -> list[Path]:
    result: list[Path] = []
    for key, value in data.items():
        result.append((*path, key))
        if isinstance(value, dict):
            result += _entries(value, (*path, key))
    return result


def _mappings(data: dict[str, Any], path: Path = ()) -> list[Path]:
    result = [path]
    for key, value in data.items():
        if isinstance(value, dict) and value:
            result += _mappings(value, (*path, key))
    return result


def _get(data: dict[str, Any], path: Path) -> Any:
    for key in path:
        data = data[key]
    return data


@st.composite
def _decorate(draw: st.DrawFn, data: dict[str, Any], prefix: str, flow: bool = False) -> Doc:
    doc = Doc(data)
    for path in _entries(data):
        where = f"{prefix}:{'.'.join(path)}"
        if draw(st.integers(0, 3)) == 0:
            doc.before[path] = [
                (_comment(draw, f"{where}/{i}"), draw(st.booleans()))
                for i in range(draw(st.integers(1, 2)))
            ]
        if draw(st.integers(0, 4)) == 0:
            doc.eol[path] = _comment(draw, f"{where}/eol")
        if draw(st.integers(0, 4)) == 0:
            doc.blank_before.add(path)
    doc.trailer = [_comment(draw, f"{prefix}:end/{i}") for i in range(draw(st.integers(0, 2)))]
    if flow:
        mappings = [path for path in _mappings(data) if path]
        doc.flow = set(draw(st.lists(st.sampled_from(mappings), max_size=2))) if mappings else set()
    return doc


@st.composite
def user_documents(draw: st.DrawFn, template: dict[str, Any]) -> Doc:
    """The template as a user may have edited it: entries deleted or changed, entries added."""
    data = copy.deepcopy(template)
    for path in sorted(_entries(data), key=len, reverse=True):
        parent = _get(data, path[:-1])
        if path[-1] not in parent:
            continue
        action = draw(st.sampled_from(["keep", "keep", "keep", "delete", "change", "empty"]))
        if action == "delete" and len(parent) > 1:
            del parent[path[-1]]
        elif action == "change" and not isinstance(parent[path[-1]], dict):
            parent[path[-1]] = draw(scalars)
        elif (
            action == "empty"
            and isinstance(parent[path[-1]], dict)
            and draw(st.integers(0, 3)) == 0
        ):
            parent[path[-1]] = {}  # rendered in flow style: `key: {}`
    for path in draw(st.lists(st.sampled_from(_mappings(data)), max_size=4)):
        target = _get(data, path)
        name = "mine-" + draw(_words)
        if draw(st.booleans()):
            target[name] = draw(scalars)
        else:
            target[name] = {
                "k-" + draw(_words): draw(scalars) for _ in range(draw(st.integers(1, 2)))
            }
    return draw(_decorate(data, "u", flow=True))


@st.composite
def newer_templates(draw: st.DrawFn, template: dict[str, Any]) -> Doc:
    """The template with new entries (and their comments), as a later robota may ship it."""
    data = copy.deepcopy(template)
    for path in draw(st.lists(st.sampled_from(_mappings(data)), max_size=5)):
        target = _get(data, path)
        name = "new-" + draw(_words)
        if draw(st.booleans()):
            target[name] = draw(scalars)
        else:
            target[name] = {
                "k-" + draw(_words): draw(scalars) for _ in range(draw(st.integers(1, 3)))
            }
    return draw(_decorate(data, "t"))


def expected_merge(user: Any, template: Any, path: Path = ()) -> Any:
    """What the merge must produce, written independently of the implementation."""
    if not (isinstance(user, dict) and isinstance(template, dict)):
        return user
    result = dict(user)
    for key, value in template.items():
        here = (*path, key)
        if key in user:
            result[key] = expected_merge(user[key], value, here)
        elif path != ("agents",) and here != ("defaults", "agent"):
            added = copy.deepcopy(value)
            if here == ("defaults",) and isinstance(added, dict):
                added.pop("agent", None)
            result[key] = added
    return result


def key_orders(data: Any, path: Path = ()) -> dict[Path, list[str]]:
    if not isinstance(data, dict):
        return {}
    orders = {path: list(data)}
    for key, value in data.items():
        orders.update(key_orders(value, (*path, key)))
    return orders
