"""Which route the host drives a task through, and what kind a route key is: tables."""

from __future__ import annotations

import pytest

from robota.host import (
    CLI_KIND,
    MadeHere,
    TaskRoute,
    cli_route,
    route_for_task,
    route_kind,
    serves,
)

KINDS = frozenset({CLI_KIND, "feishu"})


@pytest.mark.parametrize(
    ("route_key", "kind"),
    [
        ("cli:abc", "cli"),
        ("feishu:oc_1:t_2", "feishu"),
        ("tui:1234:5", "tui"),
        ("print", "print"),
        ("", ""),
        (":rest", ""),
    ],
)
def test_route_kind_is_what_comes_before_the_first_colon(route_key: str, kind: str) -> None:
    assert route_kind(route_key) == kind


@pytest.mark.parametrize(
    ("route_key", "served"),
    [
        ("cli:abc", True),
        ("feishu:oc_1:t_2", True),
        ("tui:1234:5", False),
        ("print:1", False),
        ("clix:abc", False),
        ("feishu", True),
    ],
)
def test_serves_only_the_hosts_kinds(route_key: str, served: bool) -> None:
    assert serves(KINDS, route_key) is served


@pytest.mark.parametrize(
    ("current_on", "expected"),
    [
        # on no route: the host's own cli route, to be bound first
        ([], TaskRoute("cli:t1", bind=True)),
        # on a terminal's route only: never adopted
        (["tui:99:1"], TaskRoute("cli:t1", bind=True)),
        (["print:7", "tui:99:1"], TaskRoute("cli:t1", bind=True)),
        # on a served route: driven through it, no bind
        (["cli:t1"], TaskRoute("cli:t1", bind=False)),
        (["cli:other"], TaskRoute("cli:other", bind=False)),
        (["feishu:oc_1:t_2"], TaskRoute("feishu:oc_1:t_2", bind=False)),
        # the newest served binding wins, unserved ones are skipped
        (["tui:99:1", "feishu:oc_1:t_2", "cli:t1"], TaskRoute("feishu:oc_1:t_2", bind=False)),
        (["cli:t1", "feishu:oc_1:t_2"], TaskRoute("cli:t1", bind=False)),
    ],
)
def test_route_for_task(current_on: list[str], expected: TaskRoute) -> None:
    assert route_for_task("t1", current_on, KINDS) == expected


def test_a_host_serving_only_cli_does_not_adopt_a_chat_route() -> None:
    assert route_for_task("t1", ["feishu:oc_1"], {CLI_KIND}) == TaskRoute("cli:t1", bind=True)


def test_cli_route_names_a_cli_kind_key() -> None:
    assert cli_route("t1") == "cli:t1"
    assert route_kind(cli_route("t1")) == CLI_KIND


@pytest.mark.parametrize(
    ("current_on", "made", "expected"),
    [
        # a print route this host's print run made holds its task's session: driven there
        (["print:7"], {"print:7"}, TaskRoute("print:7", bind=False)),
        # another process's print route (same store, not made here) is never adopted
        (["print:8"], {"print:7"}, TaskRoute("cli:t1", bind=True)),
        # the newest binding of the host's own routes wins, made or served
        (["print:7", "cli:t1"], {"print:7"}, TaskRoute("print:7", bind=False)),
        (["cli:t1", "print:7"], {"print:7"}, TaskRoute("cli:t1", bind=False)),
        (["print:8", "tui:99:1", "print:7"], {"print:7"}, TaskRoute("print:7", bind=False)),
    ],
)
def test_route_for_task_with_the_print_routes_this_host_made(
    current_on: list[str], made: set[str], expected: TaskRoute
) -> None:
    assert route_for_task("t1", current_on, KINDS, made) == expected


HERE = MadeHere("print", "ab12cd34")


@pytest.mark.parametrize(
    ("route_key", "made"),
    [
        ("print:ab12cd34-0123456789ab", True),
        ("print:ab12cd34-", True),
        # another process's print run (print mode's own, a host that ran before)
        ("print:0123456789ab", False),
        ("print:ffff0000-0123456789ab", False),
        ("print:ab12cd34", False),  # the prefix alone, no run
        ("print:ab12cd345-0123", False),  # a longer prefix that starts with ours
        ("tui:ab12cd34-0123456789ab", False),
        ("cli:ab12cd34-0123456789ab", False),
    ],
)
def test_a_print_route_this_process_made_is_told_by_its_key(route_key: str, made: bool) -> None:
    assert (route_key in HERE) is made


@pytest.mark.parametrize(
    ("current_on", "expected"),
    [
        (["print:ab12cd34-77"], TaskRoute("print:ab12cd34-77", bind=False)),
        (["print:99999999-77"], TaskRoute("cli:t1", bind=True)),
        (["print:99999999-77", "print:ab12cd34-76"], TaskRoute("print:ab12cd34-76", bind=False)),
        (["cli:t1", "print:ab12cd34-77"], TaskRoute("cli:t1", bind=False)),
    ],
)
def test_route_for_task_with_the_print_routes_this_process_makes(
    current_on: list[str], expected: TaskRoute
) -> None:
    assert route_for_task("t1", current_on, KINDS, HERE) == expected


def test_the_print_routes_a_process_made_are_not_kept_however_many_runs() -> None:
    """What a host keeps of its print runs' routes does not grow with them (it was a set that
    grew by one key per run, never pruned): ten thousand runs later it is the same value, and
    it still tells each of their routes, and none of another process's."""
    made = MadeHere.for_this_process("print")
    before = (made, len(repr(made)))
    routes = [made.new_route() for _ in range(10_000)]
    assert len(set(routes)) == len(routes)
    assert all(route in made for route in routes)
    assert all(
        route_for_task("t1", [route], KINDS, made) == TaskRoute(route, bind=False)
        for route in routes[::100]
    )
    other = MadeHere.for_this_process("print")
    assert other.prefix != made.prefix
    assert not any(route in other for route in routes)
    assert (made, len(repr(made))) == before
