"""Every exception class robota defines is in the one tree of ``robota.core._errors``.

The tree is drawn in that module's docstring; a class added anywhere under packages/*/src
that does not descend from ``RobotaError``, or that the drawing does not name, fails here.
"""

from __future__ import annotations

import importlib
import inspect
from pathlib import Path

from robota.core import RobotaError, Terminated
from robota.core import _errors as errors

ROOT = Path(__file__).resolve().parents[2]


def module_names() -> list[str]:
    names = []
    for source in sorted(ROOT.glob("packages/*/src/robota/**/*.py")):
        src = next(p for p in source.parents if p.name == "src")
        parts = source.with_suffix("").relative_to(src).parts
        names.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return names


def defined_exceptions() -> dict[str, type[BaseException]]:
    """``module.Class`` -> class, for every exception class a robota module defines."""
    found: dict[str, type[BaseException]] = {}
    for name in module_names():
        module = importlib.import_module(name)
        for value in vars(module).values():
            if (
                inspect.isclass(value)
                and issubclass(value, BaseException)
                and value.__module__ == name
            ):
                found[f"{name}.{value.__qualname__}"] = value
    return found


def test_every_exception_class_descends_from_robota_error() -> None:
    found = defined_exceptions()
    # The walk reaches every package: one class known from each.
    assert {
        "robota.core._errors.ConfigError",
        "robota.core.kernel._bridge.OutboxClosed",
        "robota.runtimes._jsonrpc.RpcError",
        "robota.cli._print.UsageError",
        "robota.mcp._tools.BadArgument",
    } <= set(found)
    outside = sorted(
        name
        for name, cls in found.items()
        if not issubclass(cls, RobotaError) and cls is not Terminated
    )
    assert outside == [], f"exception classes outside the RobotaError tree: {outside}"


def test_the_drawn_tree_names_every_class_under_its_parent() -> None:
    doc = errors.__doc__ or ""
    drawn: dict[str, int] = {}  # class name -> its depth in the drawing
    for line in doc.splitlines():
        branch = line.lstrip(" │")
        if not branch.startswith(("├── ", "└── ", "RobotaError ")):
            continue
        head = branch.removeprefix("├── ").removeprefix("└── ")
        drawn[head.split()[0]] = (len(line) - len(line.lstrip(" │├└─"))) // 4
    found = defined_exceptions()
    for name, cls in found.items():
        if cls is Terminated:
            assert "``Terminated``" in doc
            continue
        short = cls.__name__
        assert short in drawn, f"{name} is not drawn in robota.core._errors"
        if cls is RobotaError:
            assert drawn[short] == 1, "RobotaError is the root"
            continue
        parent = next(base for base in cls.__mro__[1:] if base.__name__ in drawn)
        assert drawn[parent.__name__] == drawn[short] - 1, (
            f"{name} is drawn under the wrong parent (its parent is {parent.__name__})"
        )
    stale = set(drawn) - {cls.__name__ for cls in found.values()}
    assert stale == set(), f"drawn but defined nowhere: {sorted(stale)}"
