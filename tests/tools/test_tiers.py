"""The tier rule: a test that starts real processes is kept out of ``./dev test --quick``."""

from __future__ import annotations

from pathlib import Path

import pytest

from ..support.tiers import starts_processes

TESTS = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize(
    ("fixtures", "source", "expected"),
    [
        ((), "def test_pure(): assert 1 + 1 == 2\n", False),
        (("tmp_path",), "from robota.core.policy import decide\n", False),
        (("model",), "", True),
        (("tmp_path", "robota"), "", True),
        ((), "from ..support.model_server import FakeModel\n", True),
        ((), "from ..support import agents\n", True),
        ((), "from ..support.agents import installed\n", True),
        ((), "from .host_process import Host\n", True),
        ((), "import subprocess\n", True),
        ((), "out = run([sys.executable, '-c', 'pass'])\n", True),
        ((), "proc = await trio.lowlevel.open_process(argv)\n", True),
        ((), "pane = tmux('new-session')\n", True),
        ((), "from ..support.fault_agent import FAULT\n", True),
        # A word that only contains one of the names is not a reach for it.
        ((), "subprocesses = 3  # no process here\n", False),
        ((), "remodel = 'agents'\n", False),
        # The benches run tools/bench's scripts, each a process tree of its own.
        ((), "from ..support.bench import run_bench\n", True),
    ],
)
def test_the_rule(fixtures: tuple[str, ...], source: str, expected: bool) -> None:
    assert starts_processes(fixtures, source) is expected


@pytest.mark.parametrize(
    ("module", "expected"),
    [
        ("host/test_host.py", True),
        ("runtimes/test_agent_real.py", True),
        ("cli/test_print.py", True),
        ("tools/test_benches.py", True),
        ("policy/test_scheduler.py", False),
        ("kernel/test_supervision.py", False),
        ("presentation/test_markdown.py", False),
    ],
)
def test_the_suites_own_modules_land_in_their_tier(module: str, expected: bool) -> None:
    source = (TESTS / module).read_text(encoding="utf-8")
    assert starts_processes((), source) is expected
