"""Write the table of the suite's slowest tests (tests/support/slowest.txt) from a run's JUnit XML.

    .venv/bin/python -m pytest -n 4 --dist loadgroup --junitxml=/tmp/run.xml
    python tools/slowest.py /tmp/run.xml [MORE.xml ...] [--over SECONDS] [--most N]

``./dev test`` hands the tests the table names to its workers first, longest first
(tests/support/slowest.py says why). A test's time is what the report gives it (setup, call
and teardown); its parametrizations share one line, the longest of them, and across several
reports a test keeps its longest time. Only the relative order matters, so a run on a loaded
machine serves as well as a quiet one. Refresh it when the slowest tests change much; a stale
table still runs every test. ``--merge`` keeps the table's lines too (each test its longest
time): a run of only the new slow tests adds them without a whole suite's report.
"""

from __future__ import annotations

import argparse
import sys
import xml.etree.ElementTree as ET
from collections.abc import Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

# The table's reader is the suite's own (tests/support is not an installed package).
from tests.support.slowest import parse_table  # noqa: E402

TABLE = ROOT / "tests" / "support" / "slowest.txt"
HEADER = (
    "# The suite's slowest tests, longest first: SECONDS NODEID (parameters left off).\n"
    "# Written by tools/slowest.py from a run's JUnit XML; read by tests/support/slowest.py.\n"
)


def case_times(report: str) -> Iterable[tuple[str, float]]:
    """Each test case of a JUnit XML report as (node id, seconds)."""
    for case in ET.fromstring(report).iter("testcase"):
        module = case.get("classname", "")
        name = case.get("name", "")
        parts = module.split(".")
        # pytest writes classname as the module's dotted path, a test class appended.
        cut = next((i for i, part in enumerate(parts) if part.startswith("test_")), len(parts))
        path = "/".join(parts[: cut + 1]) + ".py"
        nodeid = "::".join([path, *parts[cut + 1 :], name])
        yield nodeid, float(case.get("time", "0") or 0)


def table_text(times: Iterable[tuple[str, float]], *, over: float, most: int) -> str:
    """The table: each test's longest time over its parametrizations, those over ``over``
    seconds, the ``most`` longest, longest first."""
    longest: dict[str, float] = {}
    for nodeid, seconds in times:
        at = nodeid.rfind("@")  # pytest-xdist's ``@GROUP`` of a test in an xdist_group
        base = (nodeid[:at] if at > nodeid.rfind("]") else nodeid).split("[", 1)[0]
        longest[base] = max(seconds, longest.get(base, 0.0))
    rows = sorted(((s, n) for n, s in longest.items() if s >= over), key=lambda r: (-r[0], r[1]))
    return HEADER + "".join(f"{seconds:.1f} {nodeid}\n" for seconds, nodeid in rows[:most])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("reports", nargs="+", type=Path, help="JUnit XML reports (--junitxml)")
    parser.add_argument("--over", type=float, default=3.0, help="seconds a test must take")
    parser.add_argument("--most", type=int, default=100, help="how many tests at the most")
    parser.add_argument("--merge", action="store_true", help="keep the table's lines too")
    args = parser.parse_args(argv)
    times = [t for report in args.reports for t in case_times(report.read_text("utf-8"))]
    if args.merge and TABLE.is_file():
        times += parse_table(TABLE.read_text("utf-8")).items()
    TABLE.write_text(table_text(times, over=args.over, most=args.most), encoding="utf-8")
    shown = TABLE.relative_to(ROOT) if TABLE.is_relative_to(ROOT) else TABLE
    print(f"{shown}: written from {len(times)} test cases", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
