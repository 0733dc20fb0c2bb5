"""``tools/bench/mcp.py`` runs end to end (``--quick``): a ``robota_run`` through ``robota mcp
serve`` and the raw turn, on codex (App Server) and claude-agent-acp (ACP); the figures are
printed and no agent is left running. No figure is judged here: benchmarks print."""

from __future__ import annotations

import re
from pathlib import Path

from ..support.bench import run_bench


def test_the_mcp_bench_runs(tmp_path: Path) -> None:
    out = run_bench("mcp.py", tmp_path)
    for agent in ("codex (app-server)", "claude-agent-acp (acp)"):
        assert f"{agent}\n" in out, out
    assert len(re.findall(r"robota adds +-?\d+\.\d ms +target < 10 ms", out)) == 2
