"""``robota mcp``'s share of the start-up budget: the SDK and the ASGI server load only when
``robota mcp serve`` runs (tests/cli/test_import_budget.py pins the rest)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

SERVE_ONLY = ("mcp", "mcp_types", "hypercorn", "starlette", "robota.mcp._server")


def imported_by(argv: list[str]) -> set[str]:
    code = (
        f"from robota.cli import main\ntry:\n    main({argv!r})\nexcept SystemExit:\n    pass\n"
        "import sys, json\nprint(json.dumps(sorted(sys.modules)))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    return set(json.loads(out.stdout.splitlines()[-1]))


@pytest.mark.parametrize("argv", [["--help"], ["mcp", "--help"], ["mcp", "serve", "--help"]])
def test_help_loads_no_sdk(argv: list[str]) -> None:
    modules = imported_by(argv)
    for heavy in (*SERVE_ONLY, "trio", "robota.core"):
        assert not any(m == heavy or m.startswith(heavy + ".") for m in modules), (
            f"robota {' '.join(argv)} imported {heavy}"
        )
