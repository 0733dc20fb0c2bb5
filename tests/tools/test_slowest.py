"""The slowest tests first (tests/support/slowest.py) and the table tools/slowest.py writes."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from ..support.slowest import TABLE, base_id, parse_table, read_table, slowest_first

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import tools.slowest as tool  # noqa: E402
from tools.slowest import case_times, table_text  # noqa: E402

A, B, C, D = "t/test_a.py::x", "t/test_b.py::y", "t/test_c.py::z", "t/test_d.py::w"


@pytest.mark.parametrize(
    ("nodeids", "table", "order"),
    [
        # Nothing known: collection order.
        ([A, B, C], {}, [0, 1, 2]),
        # The known ones first, longest first; the rest after, in collection order.
        ([A, B, C, D], {C: 30.0, B: 5.0}, [2, 1, 0, 3]),
        ([A, B, C, D], {D: 1.0}, [3, 0, 1, 2]),
        # Equal estimates keep collection order.
        ([A, B, C], {A: 2.0, C: 2.0}, [0, 2, 1]),
        # Parametrizations share their test's line.
        ([A, f"{B}[1]", f"{B}[2]", C], {B: 9.0}, [1, 2, 0, 3]),
        # A line naming no collected test changes nothing.
        ([A, B], {"gone.py::t": 99.0}, [0, 1]),
    ],
)
def test_the_order(nodeids: list[str], table: dict[str, float], order: list[int]) -> None:
    assert slowest_first(nodeids, table) == order


@pytest.mark.parametrize(
    ("nodeid", "base"),
    [
        (A, A),
        (f"{A}[codex]", A),
        (f"{A}[a[b]-rep0]", A),
        ("t/test_a.py::Class::method[x]", "t/test_a.py::Class::method"),
        (f"{A}@chaos", A),
        (f"{A}[x]@chaos", A),
        (f"{A}[a@b]", A),
    ],
)
def test_the_base_id(nodeid: str, base: str) -> None:
    assert base_id(nodeid) == base


def test_the_table_is_read_and_a_wrong_line_named() -> None:
    text = "# a comment\n\n12.5 t/test_a.py::x\n 3 t/test_b.py::y \n"
    assert parse_table(text) == {A: 12.5, B: 3.0}
    with pytest.raises(ValueError, match="line 2: expected SECONDS NODEID"):
        parse_table("1 t/test_a.py::x\nslow t/test_b.py::y\n")


def test_the_checked_in_table_reads_and_names_test_modules() -> None:
    table = read_table()
    assert table, f"{TABLE} is empty"
    for nodeid, seconds in table.items():
        path, _, name = nodeid.partition("::")
        assert seconds > 0 and name.startswith("test_"), nodeid
        assert (ROOT / path).is_file(), nodeid
    assert read_table(TABLE.with_name("absent.txt")) == {}


REPORT = """<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest">
<testcase classname="tests.host.test_host" name="test_quick" time="0.010" />
<testcase classname="tests.host.test_host" name="test_slow[codex]" time="12.000" />
<testcase classname="tests.host.test_host" name="test_slow[claude]" time="20.500" />
<testcase classname="tests.cards.test_properties.TestCards" name="test_card" time="7.300" />
<testcase classname="tests.cli.test_print" name="test_mid" time="3.000" />
<testcase classname="tests.cli.test_print" name="test_grouped[x]@chaos" time="4.000" />
</testsuite></testsuites>
"""


def test_a_report_becomes_the_longest_first_table() -> None:
    times = list(case_times(REPORT))
    assert times[0] == ("tests/host/test_host.py::test_quick", 0.01)
    assert times[3] == ("tests/cards/test_properties.py::TestCards::test_card", 7.3)
    text = table_text(times, over=3.0, most=10)
    assert parse_table(text) == {
        "tests/host/test_host.py::test_slow": 20.5,
        "tests/cards/test_properties.py::TestCards::test_card": 7.3,
        "tests/cli/test_print.py::test_grouped": 4.0,
        "tests/cli/test_print.py::test_mid": 3.0,
    }
    assert list(parse_table(text)) == sorted(parse_table(text), key=lambda n: -parse_table(text)[n])
    assert list(parse_table(table_text(times, over=0.0, most=2))) == [
        "tests/host/test_host.py::test_slow",
        "tests/cards/test_properties.py::TestCards::test_card",
    ]


def test_a_partial_report_merged_keeps_the_tables_other_lines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    table = tmp_path / "slowest.txt"
    table.write_text(
        "30.0 tests/other/test_x.py::test_long\n5.0 tests/host/test_host.py::test_slow\n"
    )
    monkeypatch.setattr(tool, "TABLE", table)
    report = tmp_path / "run.xml"
    report.write_text(REPORT)
    assert tool.main([str(report), "--merge"]) == 0
    assert parse_table(table.read_text()) == {
        "tests/other/test_x.py::test_long": 30.0,
        "tests/host/test_host.py::test_slow": 20.5,  # the longer of the table's and the run's
        "tests/cards/test_properties.py::TestCards::test_card": 7.3,
        "tests/cli/test_print.py::test_grouped": 4.0,
        "tests/cli/test_print.py::test_mid": 3.0,
    }
    assert tool.main([str(report)]) == 0  # without it the run's report alone
    assert "tests/other/test_x.py::test_long" not in parse_table(table.read_text())
