"""The suite's two tiers: which tests start real processes.

A test that starts real processes (an agent, a host, the ``robota`` script, tmux, the fake
model's server) is in the full tier only; ``./dev test --quick`` runs the rest (the pure cores,
the kernel, the store, renderers, protocol and config tests). The rule is read off the test
itself, so a new test lands in the right tier without a list to keep: it asks for a fixture that
starts a process, or its module names a helper or module that does.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = ["PROCESS_FIXTURES", "starts_processes"]

# Fixtures that start a process: the fake model's HTTP server, the sandboxed robota script.
PROCESS_FIXTURES = frozenset({"model", "robota"})

# What a module names when its tests start processes of their own.
_PROCESS_SOURCE = re.compile(
    r"support\.agents|support import [^\n]*\bagents\b|host_process|model_server|FakeModel"
    r"|\bsubprocess\b|\btmux\b|open_process|sys\.executable|fault_agent|run_bench"
)


def starts_processes(fixtures: Iterable[str], module_source: str) -> bool:
    """Whether a test with these fixtures, in a module with this text, starts real processes."""
    if PROCESS_FIXTURES.intersection(fixtures):
        return True
    return _PROCESS_SOURCE.search(module_source) is not None
