"""What a team message is, an intent's prompt, a request's tags and permission mode, /help."""

from __future__ import annotations

import pytest

from robota.core.policy import (
    Ask,
    Builtin,
    EngineCommand,
    Parsed,
    ProjectIntent,
    SwitchRequest,
    UnknownIntent,
    help_text,
    intent_name,
    parse_message,
    permission_mode_for,
    render_prompt,
    request_tags,
)

from ._teams import PROJECT, intent, make_team

DEPLOY = intent("deploy", "deploy {args}", ("write:/srv/web", "net:push"))
LOGS = intent("query_logs", "show logs {args}")
TEAM = make_team(intents=(DEPLOY, LOGS))


@pytest.mark.parametrize(
    ("text", "prefix", "parsed", "name"),
    [
        ("why is the login page slow?", "/", Ask("why is the login page slow?"), "ask"),
        ("/deploy staging now", "/", ProjectIntent(DEPLOY, "staging now"), "deploy"),
        ("  /DEPLOY  ", "/", ProjectIntent(DEPLOY, ""), "deploy"),
        ("/query_logs api", "/", ProjectIntent(LOGS, "api"), "query_logs"),
        ("!deploy prod", "!", ProjectIntent(DEPLOY, "prod"), "deploy"),
        ("/deploy prod", "!", Ask("/deploy prod"), "ask"),  # Slack: / is the client's
        ("//deploy is a word", "/", Ask("/deploy is a word"), "ask"),
        ("!!deploy", "!", Ask("!deploy"), "ask"),
        ("/ask what broke?", "/", Ask("what broke?"), "ask"),
        ("/status", "/", Builtin("status", ""), "status"),
        ("/queue", "/", Builtin("queue", ""), "queue"),
        ("/help me", "/", Builtin("help", "me"), "help"),
        ("/new --dir /tmp", "/", EngineCommand("new", "--dir /tmp"), "command:new"),
        (
            "/permissions bypassPermissions",
            "/",
            EngineCommand("permissions", "bypassPermissions"),
            "command:permissions",
        ),
        ("/dep", "/", UnknownIntent("dep"), "unknown"),  # no prefixes in a team group
        ("/sess", "/", UnknownIntent("sess"), "unknown"),
        ("/ns later", "/", UnknownIntent("ns"), "unknown"),  # nor initialisms
        ("/", "/", UnknownIntent(""), "unknown"),
        ("/rollback", "/", UnknownIntent("rollback"), "unknown"),
        ("/pause", "/", SwitchRequest(), "switch"),
        ("/switch 2", "/", SwitchRequest(), "switch"),
        ("关闭", "/", SwitchRequest(), "switch"),
        ("turn off the bot", "!", SwitchRequest(), "switch"),
    ],
)
def test_parse_message(text: str, prefix: str, parsed: Parsed, name: str) -> None:
    assert parse_message(text, TEAM, prefix) == parsed
    assert intent_name(parsed) == name


@pytest.mark.parametrize(
    ("template", "args", "prompt"),
    [
        ("deploy {args}", "staging", "deploy staging"),
        (
            "{sender} in {chat} asks for {args} in {project}",
            "x",
            "ou_a in oc_group asks for x in /srv/web",
        ),
        ("no placeholders", "ignored", "no placeholders"),
        ('json {{"a": 1}} and {args}', "y", 'json {"a": 1} and y'),
        ("a {args} that says {project}", "{project}", "a {project} that says /srv/web"),
        ("a lone { brace", "", "a lone { brace"),
    ],
)
def test_render_prompt(template: str, args: str, prompt: str) -> None:
    rendered = render_prompt(
        intent("x", template), args=args, project=str(PROJECT), chat="oc_group", sender="ou_a"
    )
    assert rendered == prompt


def test_request_tags_by_role_and_intent() -> None:
    untagged = intent("notes")
    team = make_team(intents=(DEPLOY, untagged))
    assert request_tags(Ask("q"), "member", team) == ("read:/srv/web",)
    assert request_tags(Ask("q"), "admin", team) == ("write:/srv/web",)
    assert request_tags(ProjectIntent(DEPLOY, ""), "member", team) == DEPLOY.tags
    assert request_tags(ProjectIntent(untagged, ""), "member", team) == ("read:/srv/web",)
    assert request_tags(ProjectIntent(untagged, ""), "admin", team) == ("write:/srv/web",)
    for parsed in (Builtin("status", ""), EngineCommand("stop", ""), SwitchRequest()):
        assert request_tags(parsed, "admin", team) == ()


def test_permission_mode_by_role() -> None:
    assert permission_mode_for("member", TEAM) == "plan"
    assert permission_mode_for("admin", TEAM) is None


def test_help_lists_built_ins_commands_and_intents() -> None:
    text = help_text(TEAM)
    assert text.splitlines()[0].startswith("/status")
    assert "/new [--dir PATH | --nodir] [--agent NAME] [PROMPT] - start a new task" in text
    assert "/deploy - the deploy action" in text and "/query_logs - the query_logs action" in text
    assert "本项目的操作" in text
    # The team's built-ins are not listed again as engine commands; /switch is the bot switch.
    assert "/switch" not in text and "- the commands" not in text
    slack = help_text(make_team(intents=(DEPLOY,), transport="slack"), prefix="!")
    assert "!deploy - the deploy action" in slack and "This project's actions" in slack
    assert "/" not in slack.splitlines()[0]
