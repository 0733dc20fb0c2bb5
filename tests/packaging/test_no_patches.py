"""Nothing in robota replaces functions or attributes inside another library.

A library's module or class is the library's: robota calls it, subclasses it or wraps it in
code of its own, and never assigns to (or deletes, or ``setattr``s) an attribute of something
it imported from outside ``robota``, such as ``dataclasses.exec = ...`` or
``SomeClass.method = ...``. A patch changes the library for every user in the process, breaks
silently when the library changes, and is invisible at the call sites it affects. The check
reads every module of the packages and of tools/ (tests may use pytest's ``monkeypatch`` on
robota's own names).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def sources() -> list[Path]:
    return sorted([*ROOT.glob("packages/*/src/robota/**/*.py"), *ROOT.glob("tools/**/*.py")])


def foreign_names(tree: ast.AST) -> dict[str, str]:
    """Each name a module binds by importing something not of robota: name -> what it is."""
    names: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if not alias.name.startswith("robota"):
                    names[(alias.asname or alias.name).split(".")[0]] = alias.name
        elif (
            isinstance(node, ast.ImportFrom)
            and not node.level
            and not (node.module or "").startswith("robota")
        ):
            for alias in node.names:
                names[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return names


def root_name(node: ast.expr) -> str | None:
    """The name an attribute chain starts from; ``None`` through an item (``os.environ[k]``,
    ``sys.modules[name]``: an entry of a table, not an attribute of the library)."""
    while isinstance(node, ast.Attribute):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def patches(source: str) -> list[tuple[int, str]]:
    """(line, code) of every assignment, deletion or ``setattr``/``delattr`` on an attribute
    of an imported library's module or class in ``source``."""
    tree = ast.parse(source)
    foreign = foreign_names(tree)
    found = []
    for node in ast.walk(tree):
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, ast.AugAssign | ast.AnnAssign):
            targets = [node.target]
        elif isinstance(node, ast.Delete):
            targets = node.targets
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in {"setattr", "delattr"}
            and node.args
            and root_name(node.args[0]) in foreign
        ):
            found.append((node.lineno, ast.unparse(node)))
        for target in assigned(targets):
            if isinstance(target, ast.Attribute) and root_name(target) in foreign:
                found.append((node.lineno, ast.unparse(target)))
    return found


def assigned(targets: list[ast.expr]) -> list[ast.expr]:
    """The targets, with tuples and lists (``a.x, b = ...``) taken apart."""
    flat = []
    for target in targets:
        if isinstance(target, ast.Tuple | ast.List):
            flat += assigned(target.elts)
        else:
            flat.append(target.value if isinstance(target, ast.Starred) else target)
    return flat


@pytest.mark.parametrize(
    ("source", "found"),
    [
        ("import dataclasses\ndataclasses.exec = print\n", ["dataclasses.exec"]),
        ("import attr._make\nattr._make.compile = 1\n", ["attr._make.compile"]),
        ("from trio import Nursery as N\nN.start_soon = None\n", ["N.start_soon"]),
        ("import sys\nsys.excepthook = print\n", ["sys.excepthook"]),
        ("import a.b\ndel a.b.c\n", ["a.b.c"]),
        ("import os\nsetattr(os, 'sep', '/')\n", ["setattr(os, 'sep', '/')"]),
        ("import x\nx.y.z += 1\n", ["x.y.z"]),
        ("import x\na, (x.b, c) = 1, (2, 3)\n", ["x.b"]),
        # an entry of a library's table is not its attribute (the environment, sys.modules)
        ("import os\nos.environ['A'] = '1'\n", []),
        ("import sys\nsetattr(sys.modules['robota.cli'], 'x', 1)\n", []),
        # robota's own names, locals and instances are not a library's
        ("from robota.core import _lazy\n_lazy.x = 1\n", []),
        ("from . import _gc\n_gc.x = 1\n", []),
        ("import re\nclass A:\n    def f(self):\n        self.re = re\n", []),
        ("import os\nenv = dict(os.environ)\nenv['A'] = '1'\n", []),
    ],
)
def test_what_counts_as_a_patch(source: str, found: list[str]) -> None:
    assert [code for _, code in patches(source)] == found


def test_robota_patches_no_library() -> None:
    found = [
        f"{path.relative_to(ROOT)}:{line}: {code}"
        for path in sources()
        for line, code in patches(path.read_text())
    ]
    assert found == []
