"""The statistics of an interleaved benchmark, pure: the order of a round's measurements, a
figure computed per round, and its median and quartiles.

A difference of medians (median send - median raw turn - median CLI start) mixes three
distributions measured at different moments of a shared machine's load; the same difference
taken inside each round, where the three ran within a second of each other, cancels most of
that load, and its spread says how far the median can be trusted.
"""

from __future__ import annotations

import random
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

__all__ = ["Spread", "per_round", "round_order", "spread"]


@dataclass(frozen=True)
class Spread:
    """Median and quartiles of ``n`` values (NaN when there are none)."""

    n: int
    median: float
    q1: float
    q3: float

    @property
    def iqr(self) -> float:
        return self.q3 - self.q1

    def ms(self) -> str:
        """The values as seconds, printed in ms: ``median (IQR q1 .. q3, n=N)``."""
        return (
            f"{self.median * 1e3:7.1f} ms  (IQR {self.q1 * 1e3:.1f} .. {self.q3 * 1e3:.1f}, "
            f"{self.iqr * 1e3:.1f} wide, n={self.n})"
        )


def spread(values: Sequence[float]) -> Spread:
    """Median and quartiles, linear between order statistics (``statistics.quantiles``'
    inclusive method: the quartiles of one value are that value)."""
    if not values:
        nan = float("nan")
        return Spread(0, nan, nan, nan)
    if len(values) == 1:
        return Spread(1, values[0], values[0], values[0])
    q1, med, q3 = statistics.quantiles(values, n=4, method="inclusive")
    return Spread(len(values), med, q1, q3)


def per_round(
    rounds: Sequence[Mapping[str, float]], plus: Sequence[str], minus: Sequence[str]
) -> list[float]:
    """Per round, the sum of its ``plus`` measurements less its ``minus`` ones; a round
    missing any of them is left out (it cannot be compared with itself)."""
    names = (*plus, *minus)
    return [
        sum(r[name] for name in plus) - sum(r[name] for name in minus)
        for r in rounds
        if all(name in r for name in names)
    ]


def round_order(names: Sequence[str], rng: random.Random) -> list[str]:
    """The round's measurements in a fresh random order: none always runs right after the
    same other one (a cache it warmed, a CPU burst it left), so no position biases one."""
    order = list(names)
    rng.shuffle(order)
    return order
