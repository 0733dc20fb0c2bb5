"""Core names no platform and no agent product or runtime kind, outside its documentation.

``robota.core`` is what every plugin meets in; a chat platform (Feishu, Lark, Slack) or an
agent (Codex, Claude, Gemini, Qwen, opencode) or a runtime kind (App Server, ACP) named in its
code would be a plugin's knowledge leaking into it: each belongs to its plugin, which declares
what core needs of it (its cards, its teams' defaults, its error codes, its known agents).

Checked on the syntax tree, so that documentation stays free to give examples: every string
constant that is not a docstring (a bare string statement: a module's, a class's, a function's
or an attribute's), every identifier, attribute name, parameter, keyword, and import. Comments
are not in the tree.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CORE = ROOT / "packages" / "core" / "src" / "robota" / "core"

NAMES = ("feishu", "lark", "slack", "codex", "claude", "gemini", "qwen", "opencode")
"""Distinctive enough to be found anywhere in a word (``FeishuCard``, ``_CODEX_INFO``)."""
_SUBSTRING = re.compile("|".join(NAMES), re.IGNORECASE)
_WORDS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")
"""Words of an identifier or a text: ``appServer`` -> app, Server; ``_acp_map`` -> acp, map."""
_SHORT = {("acp",), ("app", "server"), ("appserver",)}
"""Names that are also parts of other words: found as whole words only (``acp`` in
``_acp_driver``, ``App Server``, ``app-server``; not ``acpi``)."""


def named(text: str) -> str | None:
    """The platform or runtime name ``text`` mentions, if any."""
    if (found := _SUBSTRING.search(text)) is not None:
        return found.group().lower()
    words = [word.lower() for word in _WORDS.findall(text)]
    for size in (1, 2):
        for start in range(len(words) - size + 1):
            if tuple(words[start : start + size]) in _SHORT:
                return " ".join(words[start : start + size])
    return None


def _documentation(tree: ast.AST) -> set[int]:
    """The ids of the string constants that are documentation: bare string statements."""
    return {
        id(node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
    }


def _texts(node: ast.AST) -> list[str]:
    """What ``node`` itself spells: its name, its string, the names it imports."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str | bytes):
        value = node.value
        return [value.decode("utf-8", "replace") if isinstance(value, bytes) else value]
    if isinstance(node, ast.Name):
        return [node.id]
    if isinstance(node, ast.Attribute):
        return [node.attr]
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return [node.name]
    if isinstance(node, ast.arg):
        return [node.arg]
    if isinstance(node, ast.keyword) and node.arg is not None:
        return [node.arg]
    if isinstance(node, ast.alias):
        return [node.name, *([node.asname] if node.asname else [])]
    if isinstance(node, ast.ImportFrom) and node.module:
        return [node.module]
    if isinstance(node, ast.Global | ast.Nonlocal):
        return list(node.names)
    if isinstance(node, ast.ExceptHandler) and node.name:
        return [node.name]
    if isinstance(node, ast.MatchAs | ast.MatchStar) and node.name:
        return [node.name]
    if isinstance(node, ast.MatchMapping) and node.rest:
        return [node.rest]
    return []


def mentions(source: str, filename: str = "<source>") -> list[tuple[int, str, str]]:
    """``(line, name, text)`` of each platform or runtime name the code of ``source`` spells
    outside its documentation."""
    tree = ast.parse(source, filename=filename)
    docs = _documentation(tree)
    found = []
    for node in ast.walk(tree):
        if id(node) in docs:
            continue
        for text in _texts(node):
            if (name := named(text)) is not None:
                found.append((getattr(node, "lineno", 0), name, text))
    return sorted(found)


def test_core_names_no_platform_and_no_runtime_kind() -> None:
    found = [
        f"{path.relative_to(ROOT)}:{line}: {name} in {text[:60]!r}"
        for path in sorted(CORE.rglob("*.py"))
        for line, name, text in mentions(path.read_text(encoding="utf-8"), str(path))
    ]
    assert not found, (
        "core names a platform or a runtime kind; move it to its plugin (or into a docstring "
        "if it is an example):\n" + "\n".join(found)
    )


@pytest.mark.parametrize(
    ("source", "name"),
    [
        # string constants that are not documentation
        ('LOCALES = {"feishu": "zh-CN"}\n', "feishu"),
        ('x = f"{key}:slack"\n', "slack"),
        ('def f():\n    raise ValueError("needs an App Server agent")\n', "app server"),
        ('KIND = "app-server"\n', "app server"),
        ("PAYLOAD = b'codex'\n", "codex"),
        ('x = ("a", "kind acp")\n', "acp"),
        # identifiers, definitions, parameters, keywords
        ("_CODEX_INFO = {}\n", "codex"),
        ("class FeishuCard:\n    pass\n", "feishu"),
        ("def render_slack_progress():\n    pass\n", "slack"),
        ("async def claude_start():\n    pass\n", "claude"),
        ("def f(gemini_path):\n    pass\n", "gemini"),
        ("f(qwen=1)\n", "qwen"),
        ("def f():\n    global opencode_seen\n", "opencode"),
        ("try:\n    pass\nexcept OSError as lark_error:\n    pass\n", "lark"),
        ("match x:\n    case {**codex_rest}:\n        pass\n", "codex"),
        ("appServer = 1\n", "app server"),
        # attribute names
        ("value = config.transports.feishu\n", "feishu"),
        ("value = x.acp_session\n", "acp"),
        # imports
        ("import lark_oapi\n", "lark"),
        ("from robota.transports import slack\n", "slack"),
        ("from robota.runtimes._acp_map import x\n", "acp"),
        ("from x import y as codex\n", "codex"),
        # documentation and comments may name them
        ('"""The Feishu card."""\n', None),
        ('def f():\n    """Codex\'s App Server and ACP agents."""\n', None),
        ('class C:\n    """Slack."""\n\n    x: int = 1\n    """Qwen\'s."""\n', None),
        ('LIMIT = 3  # Feishu refuses more tables\n"""As Lark does."""\n', None),
        # words that only contain a short name
        ('x = "acpi placeholder capacity"\n', None),
        ('SERVER = "app"\nserver_app = 1\n', None),
        ("appendix_server = 1\n", None),
    ],
)
def test_the_checker_finds_each_kind_of_mention(source: str, name: str | None) -> None:
    found = {found_name for _line, found_name, _text in mentions(source)}
    assert found == ({name} if name else set())
