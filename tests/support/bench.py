"""Running one of ``tools/bench``'s benchmarks end to end (``--quick``), with no agent left."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from .processes import processes_with_home_under

BENCH = Path(__file__).resolve().parents[2] / "tools" / "bench"


def run_bench(name: str, tmp_path: Path, *args: str) -> str:
    done = subprocess.run(
        [sys.executable, str(BENCH / name), "--quick", *args],
        env={**os.environ, "TMPDIR": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert processes_with_home_under(tmp_path) == []
    return done.stdout
