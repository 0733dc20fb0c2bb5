"""Every package's public surface is its facade: ``__all__`` names exactly what it exports."""

from __future__ import annotations
import __future__

import importlib
import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]


def facades() -> list[str]:
    """Every public package under packages/*/src: an __init__.py with no private path part."""
    names = []
    for init in sorted(ROOT.glob("packages/*/src/robota/**/__init__.py")):
        src = next(p for p in init.parents if p.name == "src")
        parts = init.parent.relative_to(src).parts
        if any(part.startswith("_") for part in parts):
            continue
        names.append(".".join(parts))
    return names


def test_every_package_has_a_facade() -> None:
    assert {
        "robota.core",
        "robota.core.testing",
        "robota.mesh",
        "robota.host",
        "robota.cli",
    } <= set(facades())


@pytest.mark.parametrize("name", facades())
def test_all_equals_the_public_names(name: str) -> None:
    module = importlib.import_module(name)
    exported = getattr(module, "__all__", None)
    assert exported is not None, f"{name} has no __all__"
    assert len(exported) == len(set(exported)), f"{name}.__all__ has duplicates"
    for attr in exported:
        # Reached as an importer reaches it: a lazy facade (PEP 562 ``__getattr__``) binds a
        # name on first use, and one it cannot find raises AttributeError here.
        getattr(module, attr)
    public = {
        attr
        for attr, value in vars(module).items()
        if not attr.startswith("_")
        and not isinstance(value, ModuleType)  # subpackages are reached by their own facade
        and not isinstance(value, __future__._Feature)
    }
    assert public == set(exported), (
        f"{name}: public but not exported: {sorted(public - set(exported))}; "
        f"exported but missing: {sorted(set(exported) - public)}"
    )


HEAVY = ("trio", "sqlite_utils", "cryptography", "ruamel", "textual", "prompt_toolkit", "urwid")

PROBE = """
import json, sys
from robota.cli import main
try:
    main(["--help"])
except SystemExit:
    pass
sys.stdout.flush()
print("\\n" + json.dumps(sorted(sys.modules)))
"""


def test_robota_help_imports_nothing_heavy() -> None:
    """Measured in a fresh interpreter, as click's own import test does."""
    result = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=60, check=True
    )
    modules = json.loads(result.stdout.strip().splitlines()[-1])
    assert "Usage: robota" in result.stdout
    loaded = sorted(m for m in modules if m.split(".")[0] in HEAVY)
    assert loaded == [], f"robota --help imported {loaded}"
