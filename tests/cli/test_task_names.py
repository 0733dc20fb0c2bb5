"""What TASK means on a ``robota task`` command line (``robota.host``), as tables:
numbers, full ids, prefixes, titles, ambiguity and the environment of an agent."""

from __future__ import annotations

from collections.abc import Mapping

import pytest

from robota.core.frontend import AmbiguousTask, TaskNotFound, TaskNotResolved
from robota.core.store import Task
from robota.host import NoTaskGiven, TaskLookup, pick_task

from ..support.records import make_task

# Newest first, as ``task list`` numbers them.
TASKS = [
    make_task("ab12cd34ef56", title="deploy", remote_id="thread-1"),
    make_task("ab99000000aa", title="review"),
    make_task("123456789012", title="numbers only"),
    make_task("2f0000000000", title="deploy"),
    make_task("ffeeddccbbaa", remote_id="thread-2"),
    make_task("ffee00000000", remote_id="thread-2"),
]


def lookup(listed: list[Task] = TASKS) -> TaskLookup:
    def matching(name: str) -> list[Task]:
        prefixed = [t for t in listed if t.id.startswith(name)]
        return prefixed or [t for t in listed if t.title == name]

    return TaskLookup(
        by_id=lambda task_id: next((t for t in listed if t.id == task_id), None),
        numbered=lambda n: listed[n - 1] if 0 < n <= len(listed) else None,
        matching=matching,
        by_remote_id=lambda remote: [t for t in listed if t.remote_id == remote],
    )


@pytest.mark.parametrize(
    ("wanted", "environ", "expected"),
    [
        ("ab12cd34ef56", {}, "ab12cd34ef56"),  # a full id
        ("1", {}, "ab12cd34ef56"),  # list numbers count from 1, newest first
        ("3", {}, "123456789012"),
        (" 2 ", {}, "ab99000000aa"),  # spaces around do not count
        ("ab1", {}, "ab12cd34ef56"),  # a unique prefix
        ("2f", {}, "2f0000000000"),  # a prefix starting with a digit is no number
        ("12", {}, "123456789012"),  # past the list's end: a prefix again
        ("123456789012", {}, "123456789012"),  # a full id of digits is that task
        ("review", {}, "ab99000000aa"),  # an exact title, as -r takes it
        # An explicit TASK wins over the environment.
        ("2", {"ROBOTA_TASK_ID": "ab12cd34ef56"}, "ab99000000aa"),
        (None, {"ROBOTA_TASK_ID": "ab99000000aa"}, "ab99000000aa"),
        (None, {"CODEX_THREAD_ID": "thread-1"}, "ab12cd34ef56"),
        # ROBOTA_TASK_ID is robota's own: it comes before Codex's thread id.
        (None, {"ROBOTA_TASK_ID": "2f0000000000", "CODEX_THREAD_ID": "thread-1"}, "2f0000000000"),
        ("", {"ROBOTA_TASK_ID": "ab99000000aa"}, "ab99000000aa"),  # empty = omitted
    ],
)
def test_task_resolves(wanted: str | None, environ: Mapping[str, str], expected: str) -> None:
    assert pick_task(wanted, lookup(), environ).id == expected


@pytest.mark.parametrize(
    ("wanted", "environ", "error", "words"),
    [
        ("ab", {}, AmbiguousTask, ["ab12cd34ef56", "ab99000000aa"]),  # candidates listed
        ("deploy", {}, AmbiguousTask, ["ab12cd34ef56", "2f0000000000"]),
        ("0", {}, TaskNotFound, ["'0'"]),  # no task 0, no id starting with 0
        ("99", {}, TaskNotFound, ["'99'"]),
        ("zz", {}, TaskNotFound, ["'zz'"]),
        (None, {}, NoTaskGiven, ["robota task list", "ROBOTA_TASK_ID", "CODEX_THREAD_ID"]),
        (None, {"ROBOTA_TASK_ID": "000000000000"}, TaskNotResolved, ["ROBOTA_TASK_ID="]),
        (None, {"CODEX_THREAD_ID": "thread-9"}, TaskNotResolved, ["CODEX_THREAD_ID=thread-9"]),
        (None, {"CODEX_THREAD_ID": "thread-2"}, AmbiguousTask, ["ffeeddccbbaa", "ffee00000000"]),
        (None, {"ROBOTA_TASK_ID": "  "}, NoTaskGiven, ["give TASK"]),
    ],
)
def test_task_is_refused_with_the_reason(
    wanted: str | None,
    environ: Mapping[str, str],
    error: type[TaskNotResolved],
    words: list[str],
) -> None:
    with pytest.raises(error) as raised:
        pick_task(wanted, lookup(), environ)
    for word in words:
        assert word in str(raised.value)


def test_a_long_digit_string_is_a_prefix_never_a_number() -> None:
    """Seven digits or more is how an id starts, whatever the list's length."""
    many = [make_task(f"{n:012x}") for n in range(1, 40)]
    digits = make_task("1000000fffff")
    found = pick_task("1000000", lookup([*many, digits]), {})
    assert found.id == "1000000fffff"
