"""What a name given to -r means: one resolver for the TUI and print mode."""

from __future__ import annotations

import pytest

from robota.core.frontend import AmbiguousTask, TaskNotFound, resolve_task
from robota.core.store import Task

from ..support.tasks import make_task


def task(task_id: str, title: str | None = None) -> Task:
    return make_task(task_id, title=title)


TASKS = [
    task("a1b2c3", "fix the parser"),
    task("a1ffff", "write docs"),
    task("b00000", "write docs"),
    task("c0ffee", "a1b2c3x"),
    task("d1", "d1e"),
    task("d1e000"),
]

FOUND = [
    ("the exact id", "a1b2c3", "a1b2c3"),
    ("a unique id prefix", "a1b", "a1b2c3"),
    ("an exact title", "fix the parser", "a1b2c3"),
    ("a title that looks like an id", "a1b2c3x", "c0ffee"),
    ("an exact id over a longer id it prefixes", "d1", "d1"),
    ("an id prefix over an exact title", "d1e", "d1e000"),
]


@pytest.mark.parametrize(("case", "wanted", "task_id"), FOUND, ids=[f[0] for f in FOUND])
def test_a_name_picks_one_task(case: str, wanted: str, task_id: str) -> None:
    assert resolve_task(wanted, TASKS).id == task_id


NOT_FOUND = [
    ("an id prefix of several", "a1", AmbiguousTask, "'a1' names several sessions: a1b2c3, a1ffff"),
    ("a title of several", "write docs", AmbiguousTask, "a1ffff, b00000; give one id"),
    (
        "nothing",
        "zzz",
        TaskNotFound,
        "no session 'zzz': no task named 'zzz' and no task id starts with it",
    ),
    ("a title's part", "parser", TaskNotFound, "no task named 'parser'"),
    ("the empty name", "", TaskNotFound, "no session ''"),
]


@pytest.mark.parametrize(
    ("case", "wanted", "error", "text"), NOT_FOUND, ids=[n[0] for n in NOT_FOUND]
)
def test_a_name_that_picks_none_says_why(
    case: str, wanted: str, error: type[Exception], text: str
) -> None:
    with pytest.raises(error) as raised:
        resolve_task(wanted, TASKS)
    assert text in str(raised.value)


def test_an_ambiguous_name_lists_its_matches() -> None:
    with pytest.raises(AmbiguousTask) as raised:
        resolve_task("a1", TASKS)
    assert [t.id for t in raised.value.matches] == ["a1b2c3", "a1ffff"]
