"""The busy placeholder's two decisions and the notes' context share, as tables."""

from __future__ import annotations

import pytest

from robota.core.policy import (
    PLACEHOLDER_SECONDS,
    context_percent,
    placeholder_due,
    waits_for_operator,
)

OPERATOR = [("read:/p",)]


@pytest.mark.parametrize(
    ("reason", "tags", "operator", "expected"),
    [
        ("conflict:path-overlap:write:/p~read:/p", ("write:/p",), OPERATOR, True),
        ("conflict:path-overlap:write:/p/src~read:/p", ("write:/p/src",), OPERATOR, True),
        # a conflict with a teammate's request, not the operator's turn
        ("conflict:exclusive-tag:port:80", ("port:80",), OPERATOR, False),
        ("conflict:path-overlap:write:/p~read:/p", ("write:/p",), [], False),  # no operator
        ("slot_full", ("write:/p",), OPERATOR, False),
        ("user_serial", ("write:/p",), OPERATOR, False),
        ("conflict:path-overlap:write:/q~read:/q", ("write:/q",), OPERATOR, False),
    ],
)
def test_waits_for_operator(
    reason: str, tags: tuple[str, ...], operator: list[tuple[str, ...]], expected: bool
) -> None:
    assert waits_for_operator(reason, tags, operator) is expected


@pytest.mark.parametrize(
    ("last_at", "now", "expected"),
    [
        (None, 0.0, True),
        (100.0, 100.0, False),
        (100.0, 100.0 + PLACEHOLDER_SECONDS - 1, False),
        (100.0, 100.0 + PLACEHOLDER_SECONDS, True),
    ],
)
def test_placeholder_due(last_at: float | None, now: float, expected: bool) -> None:
    assert placeholder_due(last_at, now) is expected


@pytest.mark.parametrize(
    ("usage", "expected"),
    [
        (None, None),
        ("300/1000", None),
        ({"total_tokens": 300, "context_window": 1000}, 30.0),
        ({"input_tokens": 250, "context_window": 1000}, 25.0),
        ({"total_tokens": 300, "input_tokens": 250, "context_window": 1000}, 30.0),
        ({"total_tokens": 5000, "context_window": 1000}, 100.0),
        ({"total_tokens": 300}, None),
        ({"total_tokens": 300, "context_window": 0}, None),
        ({"total_tokens": True, "context_window": 1000}, None),
        ({"total_tokens": None, "input_tokens": None, "context_window": 1000}, None),
    ],
)
def test_context_percent(usage: object, expected: float | None) -> None:
    assert context_percent(usage) == expected
