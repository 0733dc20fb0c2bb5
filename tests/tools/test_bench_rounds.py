"""The benchmarks' round statistics (tools/bench/_rounds.py): quartiles, per-round figures and
the shuffled order of a round's measurements."""

from __future__ import annotations

import math
import random
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "tools" / "bench"
if str(BENCH) not in sys.path:
    sys.path.insert(0, str(BENCH))

from _rounds import Spread, per_round, round_order, spread  # noqa: E402


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        ([5.0], Spread(1, 5.0, 5.0, 5.0)),
        ([1.0, 3.0], Spread(2, 2.0, 1.5, 2.5)),
        ([1.0, 2.0, 3.0, 4.0, 5.0], Spread(5, 3.0, 2.0, 4.0)),
        ([4.0, 1.0, 3.0, 2.0], Spread(4, 2.5, 1.75, 3.25)),
        # an outlier moves neither quartile far: why IQR, not the range
        ([1.0, 2.0, 3.0, 4.0, 500.0], Spread(5, 3.0, 2.0, 4.0)),
        ([-2.0, -1.0, 0.0, 1.0, 2.0], Spread(5, 0.0, -1.0, 1.0)),
    ],
)
def test_spread(values: list[float], expected: Spread) -> None:
    assert spread(values) == expected
    assert spread(values).iqr == expected.q3 - expected.q1


def test_spread_of_nothing_is_nan() -> None:
    empty = spread([])
    assert empty.n == 0 and math.isnan(empty.median) and math.isnan(empty.iqr)


def test_spread_prints_milliseconds() -> None:
    assert spread([0.001, 0.002, 0.003]).ms() == "    2.0 ms  (IQR 1.5 .. 2.5, 1.0 wide, n=3)"


@pytest.mark.parametrize(
    ("rounds", "expected"),
    [
        ([{"send": 10.0, "raw": 3.0, "cli": 5.0}], [2.0]),
        ([{"send": 10.0, "raw": 3.0, "cli": 8.0}], [-1.0]),  # below zero is a true figure
        (
            [{"send": 10.0, "raw": 3.0, "cli": 5.0}, {"send": 20.0, "raw": 4.0, "cli": 5.0}],
            [2.0, 11.0],
        ),
        # a round that lost one measurement is left out, not compared with another round's
        ([{"send": 10.0, "cli": 5.0}, {"send": 9.0, "raw": 1.0, "cli": 5.0}], [3.0]),
        ([], []),
    ],
)
def test_per_round(rounds: list[dict[str, float]], expected: list[float]) -> None:
    assert per_round(rounds, ["send"], ["raw", "cli"]) == expected


def test_per_round_is_not_a_difference_of_medians() -> None:
    rounds = [
        {"send": 10.0, "raw": 1.0, "cli": 9.0},
        {"send": 12.0, "raw": 1.0, "cli": 11.0},
        {"send": 30.0, "raw": 1.0, "cli": 1.0},
    ]
    # medians: 12 - 1 - 9 = 2; per round: 0, 0, 28, median 0
    assert spread(per_round(rounds, ["send"], ["raw", "cli"])).median == 0.0


def test_round_order_is_a_shuffle_that_varies() -> None:
    names = ["send", "raw", "cli"]
    rng = random.Random(7)
    orders = [round_order(names, rng) for _ in range(30)]
    assert all(sorted(order) == sorted(names) for order in orders)
    assert {order[0] for order in orders} == set(names)
    assert names == ["send", "raw", "cli"]  # the caller's list is left alone
    again = random.Random(7)
    assert [round_order(names, again) for _ in range(30)] == orders  # seeded: repeatable
