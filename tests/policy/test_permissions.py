"""The permission decision table, the name heuristic, roles, and levels of every intent kind."""

from __future__ import annotations

import pytest

from robota.core.policy import (
    DECISIONS,
    Check,
    check,
    decide,
    heuristic_level,
    level_of,
    role_of,
)

from ._teams import intent, make_team


@pytest.mark.parametrize(
    ("level", "role", "decision"),
    [
        ("public", "admin", "allow"),
        ("public", "member", "allow"),
        ("admin", "admin", "allow"),
        ("admin", "member", "reject"),
        ("admin-confirm", "admin", "confirm-needed"),
        ("admin-confirm", "member", "reject"),
        ("group-rejected", "admin", "group-rejected"),
        ("group-rejected", "member", "group-rejected"),
    ],
)
def test_the_decision_table(level: str, role: str, decision: str) -> None:
    assert decide(role, level) == decision  # type: ignore[arg-type]


def test_the_table_has_every_cell_and_nothing_else() -> None:
    levels = ("public", "admin", "admin-confirm", "group-rejected")
    assert set(DECISIONS) == {(level, role) for level in levels for role in ("admin", "member")}


@pytest.mark.parametrize(
    ("key", "level"),
    [
        ("deploy", "admin"),
        ("deploy_web", "admin"),
        ("deployment-notes", "admin"),  # the regex anchors a prefix, as cc-bot's does
        ("publish", "admin"),
        ("release-notes", "admin"),
        ("push_to_main", "admin"),
        ("drop_db", "admin"),
        ("delete_user", "admin"),
        ("remove_cache", "admin"),
        ("reset_password", "admin"),
        ("restart_api", "admin"),
        ("kill_jobs", "admin"),
        ("purge_cdn", "admin"),
        ("prod", "admin"),
        ("prod-logs", "admin"),
        ("web-deploy", "admin"),
        ("docs-publish", "admin"),
        ("api-prod", "admin"),
        ("query_logs", "public"),
        ("push-notes", "public"),  # push_to_ is risky, push- is not
        ("drop", "public"),  # drop_ needs its underscore
        ("redeploy", "public"),  # -deploy is a suffix after a dash
        ("predeploy", "public"),
        ("web-deployer", "public"),
        ("product", "admin"),  # prod is a prefix: product pages are admin unless declared
    ],
)
def test_the_name_heuristic(key: str, level: str) -> None:
    assert heuristic_level(key) == level


def test_levels_of_built_ins_commands_declared_and_undeclared_intents() -> None:
    team = make_team(
        intents=(intent("deploy"), intent("drop_db"), intent("query_logs"), intent("notes")),
        levels={"deploy": "public", "drop_db": "admin-confirm", "query_logs": "admin"},
    )
    assert [level_of(name, team) for name in ("ask", "status", "help", "queue")] == ["public"] * 4
    assert level_of("switch", team) == "group-rejected"
    assert level_of("command:new", team) == "admin"
    assert level_of("command:permissions", team) == "admin"
    assert level_of("deploy", team) == "public"  # an explicit public opens a risky name
    assert level_of("drop_db", team) == "admin-confirm"
    assert level_of("query_logs", team) == "admin"  # declared beats the heuristic both ways
    assert level_of("notes", team) == "public"
    assert level_of("restart_web", team) == "admin"


@pytest.mark.parametrize(
    ("sender", "members", "owner", "role"),
    [
        ("ou_admin", None, None, "admin"),
        ("ou_owner", None, "ou_owner", "admin"),
        ("ou_owner", frozenset({"ou_a"}), "ou_owner", "admin"),
        ("ou_admin", frozenset({"ou_a"}), None, "admin"),  # admins need not be listed
        ("ou_a", None, "ou_owner", "member"),
        ("ou_a", frozenset({"ou_a"}), None, "member"),
        ("ou_b", frozenset({"ou_a"}), "ou_owner", None),
    ],
)
def test_roles(sender: str, members: frozenset[str] | None, owner: str | None, role: str) -> None:
    assert role_of(sender, make_team(members=members), owner) == role


@pytest.mark.parametrize(
    ("sender", "name", "decision"),
    [
        ("ou_member", "deploy", "reject"),
        ("ou_admin", "deploy", "allow"),
        ("ou_member", "drop_db", "reject"),
        ("ou_admin", "drop_db", "confirm-needed"),
        ("ou_member", "query_logs", "allow"),
        ("ou_member", "purge_cache", "allow"),  # declared public
        ("ou_member", "switch", "group-rejected"),
        ("ou_admin", "switch", "group-rejected"),
        ("ou_owner", "switch", "group-rejected"),
        ("ou_member", "ask", "allow"),
        ("ou_member", "command:model", "reject"),
        ("ou_owner", "command:model", "allow"),
    ],
)
def test_check_end_to_end(sender: str, name: str, decision: str) -> None:
    team = make_team(
        intents=(intent("deploy"), intent("drop_db"), intent("query_logs"), intent("purge_cache")),
        levels={"drop_db": "admin-confirm", "purge_cache": "public"},
    )
    result = check(sender, name, team, "ou_owner")
    assert isinstance(result, Check)
    assert (result.decision, result.intent) == (decision, name)
    assert result.role == ("member" if sender == "ou_member" else "admin")


def test_a_sender_not_among_the_members_is_not_heard() -> None:
    assert check("ou_x", "ask", make_team(members=frozenset({"ou_a"})), None) is None


def test_roles_are_read_from_the_config_every_time() -> None:
    before = make_team(admins=frozenset())
    after = make_team(admins=frozenset({"ou_a"}))
    assert role_of("ou_a", before, None) == "member"
    assert role_of("ou_a", after, None) == "admin"
