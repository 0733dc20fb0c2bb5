"""Suite-wide test configuration.

Race-prone tests carry ``@pytest.mark.concurrency``; each runs ``--concurrency-reps`` times
(20 in CI, where ``CI`` is set, 5 on a developer's machine) in every test run, so a race shows up
in CI instead of in a user's hands.

Two tiers: a test that starts real processes is marked ``processes`` at collection, by the rule
in ``tests/support/tiers.py``; ``./dev test --quick`` deselects them (``-m "not processes"``) for
the inner loop, ``./dev test`` runs both.

``./dev test`` runs the tests in parallel workers (pytest-xdist, ``--dist loadgroup``): each test
makes its own sandbox (temporary directories, free ports, its own tmux server, network
namespaces named after its pid), so any two may run at once; a test that cannot share the
machine would carry ``@pytest.mark.xdist_group("name")`` and run in one worker with the rest of
its group. The slowest tests are handed out first, by the table ``tests/support/slowest.txt``
(``tools/slowest.py`` writes it), so the run does not end waiting on one long test.
"""

from __future__ import annotations

import functools
import os
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from .support.slowest import read_table, slowest_first
from .support.tiers import starts_processes

# The suite runs in parallel workers (./dev test) on a machine other work shares: how fast
# Hypothesis makes its inputs, and how long one example took on the wall clock, say nothing of
# robota, so its too_slow health check is off and so is its default 200 ms deadline per example
# (a 0.2 ms example was once measured at 300 ms on a loaded 2-core machine, and Hypothesis
# reported the test as flaky). What the properties assert is unchanged; a test that wants a
# deadline still sets its own.
settings.register_profile("robota", suppress_health_check=[HealthCheck.too_slow], deadline=None)
settings.load_profile("robota")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--concurrency-reps",
        type=int,
        default=20 if os.environ.get("CI") else 5,
        help="how many times each @pytest.mark.concurrency test runs (default 20 in CI, else 5)",
    )


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if metafunc.definition.get_closest_marker("concurrency") is None:
        return
    reps = metafunc.config.getoption("--concurrency-reps")
    if reps < 1:
        raise pytest.UsageError("--concurrency-reps must be >= 1")
    metafunc.fixturenames.append("repetition")
    metafunc.parametrize("repetition", range(reps), ids=lambda i: f"rep{i}")


@functools.cache
def _module_source(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        fixtures = getattr(item, "fixturenames", ())
        if starts_processes(fixtures, _module_source(item.path)):
            item.add_marker(pytest.mark.processes)
    # The slowest first, so the workers' last tests are short ones (tests/support/slowest.py).
    order = slowest_first([item.nodeid for item in items], read_table())
    items[:] = [items[i] for i in order]


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    # lark_oapi's long-connection module makes an event loop when it is imported (the SDK
    # acceptance tests import it) and never closes it: close it here, or the interpreter's exit
    # reports the loop and its self-pipe as unclosed.
    client = sys.modules.get("lark_oapi.ws.client")
    loop = getattr(client, "loop", None)
    if loop is not None and not loop.is_running() and not loop.is_closed():
        loop.close()
