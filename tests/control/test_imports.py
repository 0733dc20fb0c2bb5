"""What the control package costs a client command to import (the idea of
``tests/cli/test_import_budget.py``): beyond trio (the server's loop), the standard library and
its own modules only; no config package (ruamel), no engine, no store. ``robota.core``'s facade
is lazy and loads nothing by itself."""

from __future__ import annotations

import json
import subprocess
import sys


def modules_added_by(code: str) -> set[str]:
    script = (
        "import sys, json, robota.core, trio\n"
        "before = set(sys.modules)\n"
        f"{code}\n"
        "print(json.dumps(sorted(set(sys.modules) - before)))"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True
    )
    return set(json.loads(out.stdout.splitlines()[-1]))


def test_the_client_side_loads_no_config_engine_or_store() -> None:
    added = modules_added_by(
        "from robota.core.control import ControlClient, probe_host, NoHostRunning"
    )
    ours = {m for m in added if m.startswith("robota.")}
    assert "robota.core.control._client" in ours
    assert not any(m.startswith("robota.core.config") for m in ours), ours
    assert not any(m.startswith(("robota.core.engine", "robota.core.store")) for m in ours)
    outside = {m.split(".")[0] for m in added if not m.startswith("robota.")}
    assert outside <= set(sys.stdlib_module_names), outside - set(sys.stdlib_module_names)
