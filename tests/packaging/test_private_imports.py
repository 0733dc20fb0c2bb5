"""Packages reach each other through facades: no module imports another package's private parts.

A name with a private part (``_x``, not ``__x__``) belongs to the package that holds it: the
package path before that part. ``robota.core.engine._route`` belongs to ``robota.core.engine``,
so any module inside ``robota.core.engine`` may import it and ``robota.cli`` may not;
``robota.core._errors`` belongs to ``robota.core``, so all of core may. ``from pkg import _x``
counts as importing ``pkg._x``. Imports under ``TYPE_CHECKING`` and inside functions count too:
they bind the importer to the same private layout.
"""

from __future__ import annotations

import ast

import pytest

from ._imports import ROOT, imported_names, modules


def owner(name: str) -> str | None:
    """The package a private name belongs to, ``None`` for a public name."""
    parts = name.split(".")
    for index, part in enumerate(parts):
        if part.startswith("_") and not (part.startswith("__") and part.endswith("__")):
            return ".".join(parts[:index])
    return None


def violations() -> list[str]:
    found = []
    for path, module, is_package in modules():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for line, name in imported_names(tree, module, is_package):
            package = owner(name)
            if package is None or module == package or module.startswith(package + "."):
                continue
            found.append(f"{path.relative_to(ROOT)}:{line}: {module} imports {name}")
    return found


def test_no_module_imports_another_packages_private_module() -> None:
    found = violations()
    assert not found, "import these through their package's facade:\n" + "\n".join(found)


@pytest.mark.parametrize(
    ("name", "package"),
    [
        ("robota.core.engine._messages.UserInput", "robota.core.engine"),
        ("robota.core._bridge.LoopPort", "robota.core"),
        ("robota.cli._tui._app", "robota.cli"),
        ("robota.core.engine.UserInput", None),
        ("robota.core.__future__", None),
    ],
)
def test_a_private_name_belongs_to_the_package_before_it(name: str, package: str | None) -> None:
    assert owner(name) == package


def test_relative_and_absolute_imports_resolve_to_the_same_names() -> None:
    tree = ast.parse(
        "from . import _gc\n"
        "from ..core.engine._messages import UserInput\n"
        "import robota.core._bridge\n"
        "from robota.core.presentation import _text\n"
    )
    assert imported_names(tree, "robota.cli._print", is_package=False) == [
        (1, "robota.cli._gc"),
        (2, "robota.core.engine._messages.UserInput"),
        (3, "robota.core._bridge"),
        (4, "robota.core.presentation._text"),
    ]
