"""Suite-wide test configuration.

Race-prone tests carry ``@pytest.mark.concurrency``; each runs ``--concurrency-reps`` times
(20 by default) in every test run, so a race shows up in CI instead of in a user's hands.
"""

from __future__ import annotations

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--concurrency-reps",
        type=int,
        default=20,
        help="how many times each @pytest.mark.concurrency test runs (default 20)",
    )


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if metafunc.definition.get_closest_marker("concurrency") is None:
        return
    reps = metafunc.config.getoption("--concurrency-reps")
    if reps < 1:
        raise pytest.UsageError("--concurrency-reps must be >= 1")
    metafunc.fixturenames.append("repetition")
    metafunc.parametrize("repetition", range(reps), ids=lambda i: f"rep{i}")
