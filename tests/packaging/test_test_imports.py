"""Tests import helpers from ``tests/support/`` (or their own folder's helper modules), never from
another test module.

A test module is for pytest to collect: importing one runs its module body a second time under
another name, binds its tests into the importer's namespace when a name matches, and ties two
folders' tests together so neither can move or change alone. Imports under ``TYPE_CHECKING`` and
inside functions count too.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parents[1]


def _is_test_module(dotted: str) -> bool:
    return any(part.startswith("test_") for part in dotted.split("."))


def imports_of_test_modules(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, what it names) of every import in ``tree`` that reaches a ``test_*`` module.

    ``from pkg import test_x`` counts whether ``test_x`` is a module or a name in one: a helper
    has no business exporting a ``test_*`` name, which pytest would collect where it lands.
    """
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names if _is_test_module(a.name)]
        elif isinstance(node, ast.ImportFrom):
            source = "." * node.level + (node.module or "")
            if _is_test_module(node.module or ""):
                found.append((node.lineno, source))
            else:
                sep = "" if node.module is None else "."
                found += [
                    (node.lineno, f"{source}{sep}{a.name}")
                    for a in node.names
                    if a.name.startswith("test_")
                ]
    return found


@pytest.mark.parametrize(
    ("source", "flagged"),
    [
        ("from .test_x import y\n", [(1, ".test_x")]),
        ("from ..a.test_b import c\n", [(1, "..a.test_b")]),
        ("import tests.a.test_b\n", [(1, "tests.a.test_b")]),
        ("from . import test_x\n", [(1, ".test_x")]),
        ("def f():\n    from .test_x import y\n", [(2, ".test_x")]),
        ("from ..support.x import y\n", []),
        ("from ..host import test_host\n", [(1, "..host.test_host")]),
        ("from ._helpers import test_data\n", [(1, "._helpers.test_data")]),
        ("from ._helpers import data_for_test\n", []),
        ("from .fake_platform import FakePlatform\n", []),
        ("import pytest\n", []),
    ],
)
def test_the_checker(source: str, flagged: list[tuple[int, str]]) -> None:
    assert imports_of_test_modules(ast.parse(source)) == flagged


def test_no_module_under_tests_imports_a_test_module() -> None:
    offenders = [
        f"{path.relative_to(TESTS.parent)}:{line}: {name}"
        for path in sorted(TESTS.rglob("*.py"))
        for line, name in imports_of_test_modules(ast.parse(path.read_text(encoding="utf-8")))
    ]
    assert offenders == [], "import helpers from tests/support/ instead:\n" + "\n".join(offenders)
