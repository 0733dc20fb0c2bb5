"""The handoff chaos's pure parts (tests/mesh/_handoff_chaos.py): the tool's plans (the point
first, at most one later kill) and how a settled run is judged and counted."""

from __future__ import annotations

import random

import pytest

from ._handoff_chaos import MOMENTS, WHO, Kill, Outcome, Tally, plan_for


@pytest.mark.parametrize("point", MOMENTS)
def test_a_plan_kills_at_its_point_first_then_at_most_once_later(point: str) -> None:
    rng, seconds = random.Random(7), set()
    for _ in range(200):
        first, *rest = plan_for(point, rng)
        assert first.moment == point and first.who in WHO
        assert len(rest) <= 1
        for kill in rest:
            assert MOMENTS.index(kill.moment) > MOMENTS.index(point)
            seconds.add(kill.moment)
    assert seconds == set(MOMENTS[MOMENTS.index(point) + 1 :])


def test_a_kill_names_a_moment_and_a_side() -> None:
    for moment, who in (("later", "both"), ("offered", "neither")):
        with pytest.raises(ValueError, match="no kill"):
            Kill(moment, who)


@pytest.mark.parametrize(
    ("source", "destination", "history", "row"),
    [
        (False, True, True, [1, 0, 0, 0, 1]),
        (True, False, True, [1, 0, 0, 0, 1]),
        (False, False, False, [1, 1, 0, 0, 0]),
        (True, True, True, [1, 0, 1, 0, 0]),
        (False, True, False, [1, 0, 0, 1, 0]),
        (True, True, False, [1, 0, 1, 1, 0]),
    ],
)
def test_a_run_is_counted_by_where_the_task_can_run_and_what_it_has(
    *, source: bool, destination: bool, history: bool, row: list[int]
) -> None:
    outcome = Outcome("h", on_source=source, on_destination=destination, history_complete=history)
    tally = Tally()
    tally.add("staged", outcome)
    assert tally.rows == {"staged": row}
    assert tally.table().splitlines()[1].split() == ["staged", *map(str, row)]
