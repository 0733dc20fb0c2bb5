"""What one team message leads to: a table of (sender, text, in a thread) -> outcome, the
issue's scenarios among them (a member's /deploy refused, an admin's admin-confirm intent asked
for confirmation, a plain question run read-only in plan mode, an admin's off-switch rejected)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from robota.core.config import TeamConfig
from robota.core.policy import (
    Answer,
    Check,
    Command,
    Confirm,
    FollowUp,
    Ignore,
    Inbound,
    Pending,
    Report,
    Run,
    confirmed,
    inbound,
)

from ._teams import intent, make_team

TEAM = make_team(
    intents=(
        intent(
            "deploy", "deploy {args} from {project} for {sender}", ("write:/srv/web", "net:push")
        ),
        intent("drop_db", "drop the table {args}"),
        intent("query_logs", "logs of {args}", ("read:/var/log",)),
    ),
    levels={"drop_db": "admin-confirm"},
    members=frozenset({"ou_member"}),
)
ADMIN, MEMBER, OWNER = "ou_admin", "ou_member", "ou_owner"
SWITCH = (
    "Switching the bot on or off is done from the operator's terminal"
    " (robota team pause / resume); switch requests from the group are rejected."
)


def _check(decision: str, role: str, level: str, intent: str) -> Check:
    return Check(decision, role, level, intent)  # type: ignore[arg-type]


def en() -> TeamConfig:
    return replace(TEAM, locale="en-US")


@pytest.mark.parametrize(
    ("sender", "text", "in_thread", "outcome"),
    [
        ("ou_stranger", "/deploy", False, Ignore()),
        (
            MEMBER,
            "/deploy prod",
            False,
            Answer(
                _check("reject", "member", "admin", "deploy"),
                "This operation requires administrator authorization.",
            ),
        ),
        (
            ADMIN,
            "/deploy prod",
            False,
            Run(
                _check("allow", "admin", "admin", "deploy"),
                "deploy prod from /srv/web for ou_admin",
                ("write:/srv/web", "net:push"),
                None,
            ),
        ),
        (
            ADMIN,
            "/drop_db users",
            False,
            Confirm(
                _check("confirm-needed", "admin", "admin-confirm", "drop_db"),
                "users",
                "Run drop_db? Reply Y, yes or confirm within 15 minutes; anything else cancels it.",
            ),
        ),
        (
            MEMBER,
            "/drop_db users",
            False,
            Answer(
                _check("reject", "member", "admin-confirm", "drop_db"),
                "This operation requires administrator authorization.",
            ),
        ),
        (
            MEMBER,
            "why is login slow?",
            False,
            Run(
                _check("allow", "member", "public", "ask"),
                "why is login slow?",
                ("read:/srv/web",),
                "plan",
            ),
        ),
        (
            OWNER,
            "fix the login page",
            False,
            Run(
                _check("allow", "admin", "public", "ask"),
                "fix the login page",
                ("write:/srv/web",),
                None,
            ),
        ),
        (
            MEMBER,
            "/query_logs api",
            True,
            Run(
                _check("allow", "member", "public", "query_logs"),
                "logs of api",
                ("read:/var/log",),
                "plan",
            ),
        ),
        (
            ADMIN,
            "关闭",
            False,
            Answer(_check("group-rejected", "admin", "group-rejected", "switch"), SWITCH),
        ),
        (
            OWNER,
            "/pause",
            True,
            Answer(_check("group-rejected", "admin", "group-rejected", "switch"), SWITCH),
        ),
        (
            MEMBER,
            "turn off the bot",
            False,
            Answer(_check("group-rejected", "member", "group-rejected", "switch"), SWITCH),
        ),
        (
            MEMBER,
            "/rollback",
            False,
            Answer(
                _check("allow", "member", "public", "unknown"),
                "This project has no such action. /help lists the actions.",
            ),
        ),
        (MEMBER, "/status", True, Report(_check("allow", "member", "public", "status"), "status")),
        (MEMBER, "/queue", False, Report(_check("allow", "member", "public", "queue"), "queue")),
        (
            MEMBER,
            "/permissions bypassPermissions",
            True,
            Answer(
                _check("reject", "member", "admin", "command:permissions"),
                "This operation requires administrator authorization.",
            ),
        ),
        (
            ADMIN,
            "/stop",
            True,
            Command(_check("allow", "admin", "admin", "command:stop"), "stop", ""),
        ),
        (
            MEMBER,
            "继续",
            True,
            FollowUp(_check("allow", "member", "public", "ask"), "继续", "Continuing"),
        ),
        (
            MEMBER,
            "thanks!",
            True,
            FollowUp(_check("allow", "member", "public", "ask"), "thanks!", None),
        ),
        (
            MEMBER,
            "also check the signup page",
            True,
            FollowUp(
                _check("allow", "member", "public", "ask"), "also check the signup page", None
            ),
        ),
    ],
)
def test_inbound(sender: str, text: str, in_thread: bool, outcome: Inbound) -> None:
    result = inbound(
        en(), sender=sender, text=text, chat="oc_group", in_thread=in_thread, owner=OWNER
    )
    assert result == outcome


def test_replies_follow_the_team_locale_and_help_lists_the_actions() -> None:
    refused = inbound(TEAM, sender=MEMBER, text="/deploy", chat="c", in_thread=False, owner=None)
    assert isinstance(refused, Answer) and refused.text == "该操作需要管理员授权。"
    helped = inbound(TEAM, sender=MEMBER, text="/help", chat="c", in_thread=False, owner=None)
    assert isinstance(helped, Answer) and "/drop_db - the drop_db action" in helped.text
    slack = inbound(
        en(), sender=MEMBER, text="!deploy", chat="c", in_thread=False, owner=None, prefix="!"
    )
    assert isinstance(slack, Answer) and slack.check.intent == "deploy"


def test_a_confirmed_intent_runs_after_its_permission_is_checked_again() -> None:
    pending = Pending("t1", ADMIN, "drop_db", "users", 1.0)
    run = confirmed(en(), pending, chat="oc_group", owner=OWNER)
    assert run == Run(
        _check("allow", "admin", "admin-confirm", "drop_db"),
        "drop the table users",
        ("write:/srv/web",),
        None,
    )
    demoted = replace(en(), admins=frozenset(), members=None)
    refused = confirmed(demoted, pending, chat="oc_group", owner=OWNER)
    assert refused == Answer(
        _check("reject", "member", "admin-confirm", "drop_db"),
        "This operation requires administrator authorization.",
    )
    gone = replace(en(), intents={})
    assert isinstance(confirmed(gone, pending, chat="c", owner=OWNER), Answer)
    outsider = replace(en(), admins=frozenset(), members=frozenset())
    assert confirmed(outsider, pending, chat="c", owner=OWNER) == Ignore()
