"""The package modules under ``packages/*/src`` and the robota names each one imports, for the
import-rule tests."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def modules() -> list[tuple[Path, str, bool]]:
    """(file, dotted name, is a package's __init__) of every module under packages/*/src."""
    found = []
    for path in sorted(ROOT.glob("packages/*/src/robota/**/*.py")):
        src = next(p for p in path.parents if p.name == "src")
        parts = path.relative_to(src).with_suffix("").parts
        is_package = parts[-1] == "__init__"
        found.append((path, ".".join(parts[:-1] if is_package else parts), is_package))
    return found


def imported_names(tree: ast.AST, module: str, is_package: bool) -> list[tuple[int, str]]:
    """(line, absolute dotted name) of everything ``module`` imports."""
    package = module.split(".") if is_package else module.split(".")[:-1]
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                prefix = ".".join([*base, *([node.module] if node.module else [])])
            else:
                prefix = node.module or ""
            names += [(node.lineno, f"{prefix}.{alias.name}") for alias in node.names]
    return names
