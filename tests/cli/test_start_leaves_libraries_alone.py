"""A ``robota`` start leaves the libraries it loads as they are.

tests/packaging/test_no_patches.py reads the sources for assignments to a library's
attributes; this one watches a real start, which also catches a patch made through a
parameter or an import hook: every module attribute of the libraries loaded beforehand is
the same object after ``robota``'s ``main`` ran and print mode's modules (trio, attrs, pykka,
the engine) loaded. A submodule imported meanwhile may appear as its package's attribute;
nothing else may appear or change.
"""

from __future__ import annotations

import json
import subprocess
import sys

_PROBE = """
import json, sys, types
import attr._make, click, dataclasses, pykka, trio  # loaded before robota, as a library is
def snapshot():
    return {
        name: {key: id(value) for key, value in list(vars(module).items())}
        for name, module in list(sys.modules.items())
        if module is not None and not name.startswith(("robota", "__main__"))
    }
before = snapshot()
from robota.cli import main
try:
    main(["--version"])
except SystemExit:
    pass
import robota.cli._print, robota.host._engine_host, robota.runtimes
changed = []
for name, keys in before.items():
    now = vars(sys.modules[name]) if name in sys.modules else {}
    for key, value in now.items():
        if isinstance(value, types.ModuleType) and key not in keys:
            continue  # a submodule imported since
        if keys.get(key) != id(value):
            changed.append(f"{name}.{key}")
print(json.dumps(changed))
"""


def test_a_start_replaces_nothing_in_the_libraries_it_loads() -> None:
    out = subprocess.run(
        [sys.executable, "-c", _PROBE], capture_output=True, text=True, timeout=60, check=True
    )
    assert json.loads(out.stdout.splitlines()[-1]) == []
