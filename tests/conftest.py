"""Suite-wide test configuration.

Race-prone tests carry ``@pytest.mark.concurrency``; each runs ``--concurrency-reps`` times
(20 by default) in every test run, so a race shows up in CI instead of in a user's hands.
"""

from __future__ import annotations

import sys

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


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    # lark_oapi's long-connection module makes an event loop when it is imported (the SDK
    # acceptance tests import it) and never closes it: close it here, or the interpreter's exit
    # reports the loop and its self-pipe as unclosed.
    client = sys.modules.get("lark_oapi.ws.client")
    loop = getattr(client, "loop", None)
    if loop is not None and not loop.is_running() and not loop.is_closed():
        loop.close()
