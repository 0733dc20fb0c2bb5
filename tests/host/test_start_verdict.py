"""When ``robota server start`` is done with a host that answers (``start_verdict``): ready,
or serving with each transport connected or failed, or serving once the settle wait passed;
never a wait on a platform that refuses or does not answer."""

from __future__ import annotations

from typing import Any

import pytest

from robota.host import SETTLE_TIMEOUT, start_verdict


def status(ready: bool, *states: str) -> dict[str, Any]:
    return {
        "ready": ready,
        "transports": [{"name": f"t{n}", "state": state} for n, state in enumerate(states)],
    }


@pytest.mark.parametrize(
    ("answer", "after", "verdict"),
    [
        (status(True), 0.0, "ready"),
        (status(True, "connected"), 0.0, "ready"),
        (status(False), 0.0, "wait"),  # answers, its tree still starting
        (status(False), SETTLE_TIMEOUT, "serving"),
        (status(False, "connecting"), 0.0, "wait"),
        (status(False, "connecting"), SETTLE_TIMEOUT - 0.1, "wait"),
        (status(False, "connecting"), SETTLE_TIMEOUT, "serving"),
        (status(False, "failed"), 0.0, "serving"),
        (status(False, "connected", "failed"), 0.0, "serving"),
        (status(False, "connected"), 0.0, "wait"),  # ready a moment later
        (status(False, "failed", "connecting"), 0.0, "wait"),
        (status(False, "failed", "connecting"), SETTLE_TIMEOUT + 9, "serving"),
        ({"transports": None}, 0.0, "wait"),
        ({"ready": False, "transports": ["garbage"]}, 0.0, "wait"),
    ],
)
def test_start_verdict(answer: dict[str, Any], after: float, verdict: str) -> None:
    assert start_verdict(answer, after) == verdict


def test_the_settle_wait_is_a_few_seconds() -> None:
    assert 0 < SETTLE_TIMEOUT <= 10
