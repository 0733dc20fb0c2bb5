"""The suite's slowest tests first, so parallel workers do not end on one long test.

``./dev test`` hands tests to its workers in collection order (pytest-xdist, ``--dist
loadgroup``; every test is its own unit there unless it names an ``xdist_group``). A 40-second
test handed out last keeps one worker busy while the others have nothing left: the run's tail.
Handing out the longest first (the longest-processing-time rule) leaves the short ones to fill
in at the end. The estimates are a checked-in table, ``slowest.txt`` beside this module (one
``SECONDS NODEID`` a line, the parameters left off the id), written by ``tools/slowest.py`` from
a run's JUnit XML; a test not in it keeps its collection place after the ones that are. A stale
line costs nothing but its place: the order changes, never which tests run.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

__all__ = ["TABLE", "base_id", "parse_table", "read_table", "slowest_first"]

TABLE = Path(__file__).with_name("slowest.txt")


def base_id(nodeid: str) -> str:
    """``nodeid`` without its parameters (each parametrization shares its test's estimate) and
    without the ``@GROUP`` pytest-xdist appends to a test in an ``xdist_group``."""
    at = nodeid.rfind("@")
    if at > nodeid.rfind("]"):
        nodeid = nodeid[:at]
    return nodeid.split("[", 1)[0]


def parse_table(text: str) -> dict[str, float]:
    """The table's estimates by base node id; blank lines and ``#`` comments are skipped."""
    table: dict[str, float] = {}
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        seconds, _, nodeid = line.partition(" ")
        try:
            table[nodeid.strip()] = float(seconds)
        except ValueError:
            raise ValueError(f"{TABLE.name} line {number}: expected SECONDS NODEID") from None
    return table


def read_table(path: Path = TABLE) -> dict[str, float]:
    return parse_table(path.read_text(encoding="utf-8")) if path.exists() else {}


def slowest_first(nodeids: Sequence[str], table: Mapping[str, float]) -> list[int]:
    """The positions of ``nodeids`` in the order to run them: those the table knows, longest
    first (ties in collection order), then the rest in collection order."""
    known = [i for i, nodeid in enumerate(nodeids) if base_id(nodeid) in table]
    known.sort(key=lambda i: -table[base_id(nodeids[i])])
    taken = set(known)
    return known + [i for i in range(len(nodeids)) if i not in taken]
