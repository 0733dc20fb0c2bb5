"""``teams.<name>``: defaults, resolution, and what every mistake says (file, key, found,
expected)."""

from __future__ import annotations

from pathlib import Path

import pytest

from robota.core import ConfigError
from robota.core.config import parse_config, reserved_intent_keys, resolve_profile

from ._teams import BASE, FILE, HOME, _parse, _team


def _error(teams: str) -> str:
    with pytest.raises(ConfigError) as caught:
        _parse(teams)
    assert caught.value.file == str(FILE)
    return str(caught.value)


def test_a_minimal_team_gets_the_documented_defaults() -> None:
    config = _parse(_team(""))
    team = config.teams["web"]
    assert (team.name, team.transport, team.chat, team.project) == (
        "web",
        "feishu",
        "oc_1",
        Path("/srv/web"),
    )
    assert team.admins == frozenset() and team.members is None
    assert (team.locale, team.time_zone) == (None, None)  # the transport's (robota.core.policy)
    assert (team.slots, team.queue_limit, team.max_turn_minutes) == (3, 10, 30)
    assert team.member_permission_mode == "plan"
    assert dict(team.intents) == {} and dict(team.intent_permissions) == {}
    assert team.respond_to_all_messages is False


def test_no_team_section_means_no_teams() -> None:
    assert dict(_parse("").teams) == {}


def test_every_key_read_and_tags_resolved_against_the_project() -> None:
    config = _parse(
        """\
teams:
  web:
    transport: feishu
    chat: oc_1
    project: /srv/web/
    admins: [ou_admin]
    members: [ou_a, ou_b]
    locale: en-US
    slots: 2
    queueLimit: 0
    maxTurnMinutes: 5
    memberPermissionMode: default
    respondToAllMessages: true
    timeZone: Europe/Paris
    intents:
      db-deploy:
        description: deploy the database
        prompt: "deploy {args} from {project} for {sender} in {chat}; literal {{x}}"
        tags: [write:db, "read:/etc/app/", net:push, port:5432, mcp:pg, exclusive:deploy]
      query_logs:
        prompt: show the logs
    intentPermissions:
      db-deploy: admin-confirm
      query_logs: public
"""
    )
    team = config.teams["web"]
    assert team.project == Path("/srv/web")
    assert team.admins == {"ou_admin"} and team.members == {"ou_a", "ou_b"}
    assert (team.locale, team.slots, team.queue_limit, team.max_turn_minutes) == ("en-US", 2, 0, 5)
    assert team.member_permission_mode == "default" and team.respond_to_all_messages
    assert team.time_zone == "Europe/Paris"
    assert list(team.intents) == ["db-deploy", "query_logs"]
    deploy = team.intents["db-deploy"]
    assert deploy.description == "deploy the database"
    assert deploy.tags == (
        "write:/srv/web/db",
        "read:/etc/app",
        "net:push",
        "port:5432",
        "mcp:pg",
        "exclusive:deploy",
    )
    assert team.intents["query_logs"].description == "" and team.intents["query_logs"].tags == ()
    assert dict(team.intent_permissions) == {"db-deploy": "admin-confirm", "query_logs": "public"}


GO = "    intents:\n      go:\n        prompt: x\n"


def _intent(key: str, body: str = "prompt: go") -> str:
    return _team(f"    intents:\n      {key}:\n        {body}\n")


@pytest.mark.parametrize(
    ("teams", "wanted"),
    [
        ("teams: [web]\n", "teams: found a list, expected a mapping of team names"),
        ("teams:\n  Web:\n    transport: feishu\n", "teams: found the team name 'Web'"),
        (
            "teams:\n  web:\n    chat: oc_1\n",
            "teams.web.transport: found nothing, expected the name of a configured chat"
            " transport: feishu, slack",
        ),
        (
            "teams:\n  web:\n    transport: teams\n",
            "teams.web.transport: found 'teams', which has no transports section, expected the"
            " name of a configured chat transport: feishu, slack",
        ),
        (_team("    colour: red\n"), "teams.web: found unknown key 'colour', expected one of"),
        (
            "teams:\n  web:\n    transport: feishu\n    project: /srv\n",
            "teams.web.chat: found nothing, expected the group's chat id",
        ),
        (
            "teams:\n  web:\n    transport: feishu\n    chat: oc_1\n    project: web\n",
            "teams.web.project: found 'web', expected an absolute path",
        ),
        (_team("    slots: 0\n"), "teams.web.slots: found 0, expected a whole number from 1 to 64"),
        (
            _team("    queueLimit: many\n"),
            "teams.web.queueLimit: found 'many', expected a whole number from 0 to 1000",
        ),
        (_team("    maxTurnMinutes: 0\n"), "teams.web.maxTurnMinutes: found 0"),
        (_team("    locale: fr-FR\n"), "web.locale: found 'fr-FR', expected one of zh-CN, en-US"),
        (_team("    memberPermissionMode: auto\n"), "teams.web.memberPermissionMode: found 'auto'"),
        (_team("    members: some\n"), "teams.web.members: found 'some', expected all, or a list"),
        (_team("    admins: ou_1\n"), "web.admins: found 'ou_1', expected a list of sender ids"),
        (_team("    admins: [1]\n"), "web.admins[0]: found 1 (a number), expected a sender id"),
        (_team("    timeZone: Mars/Base\n"), "web.timeZone: found 'Mars/Base', expected an IANA"),
        (_team("    respondToAllMessages: yes please\n"), "teams.web.respondToAllMessages"),
        (_team("    intents: [deploy]\n"), "teams.web.intents: found a list, expected a mapping"),
        (_intent("Deploy"), "teams.web.intents: found the intent key 'Deploy'"),
        (_intent("deploy", "tags: [write:x]"), "teams.web.intents.deploy.prompt: found nothing"),
        (
            _intent("deploy", "prompt: deploy {arg}"),
            "teams.web.intents.deploy.prompt: found the placeholder {arg}, expected placeholders"
            " {args}, {project}, {chat}, {sender}",
        ),
        (_intent("deploy", "descripton: x"), "teams.web.intents.deploy: found unknown key"),
        (
            _intent("deploy", "prompt: go\n        tags: write:x"),
            "teams.web.intents.deploy.tags: found 'write:x'",
        ),
        (
            _intent("deploy", "prompt: go\n        tags: [disk:/x]"),
            "teams.web.intents.deploy.tags[0]: found 'disk:/x', expected read:PATH, write:PATH",
        ),
        (
            _intent("deploy", "prompt: go\n        tags: ['read:']"),
            "teams.web.intents.deploy.tags[0]: found 'read:'",
        ),
        (
            _intent("deploy", "prompt: go\n        tags: [port:http]"),
            "expected port:N with N from 1 to 65535",
        ),
        (
            _intent("deploy", "prompt: go\n        tags: ['net:pull']"),
            "expected net:push (the only net tag)",
        ),
        (
            _team("    intentPermissions:\n      deploy: admin\n"),
            "teams.web.intentPermissions: found a level for 'deploy', which the team does not"
            " declare, expected a key of intents (declared: none)",
        ),
        (
            _team("    intentPermissions:\n      switch: public\n"),
            "teams.web.intentPermissions.switch: found a level for the built-in intent 'switch'",
        ),
        (
            _team(GO + "    intentPermissions:\n      go: root\n"),
            "teams.web.intentPermissions.go: found 'root', expected one of public, admin,"
            " admin-confirm",
        ),
        (
            _team(GO + "    intentPermissions:\n      go:\n"),
            "teams.web.intentPermissions.go: found nothing",
        ),
    ],
)
def test_mistakes_name_key_found_and_expected(teams: str, wanted: str) -> None:
    assert wanted in _error(teams)


def test_a_team_needs_its_transport_configured() -> None:
    text = BASE.split("transports:", maxsplit=1)[0] + _team("")
    with pytest.raises(ConfigError) as caught:
        parse_config(
            text,
            file=FILE,
            environ={},
            profile=resolve_profile({"ROBOTA_HOME": str(HOME)}),
            start_dir=Path("/start"),
        )
    assert (
        "teams.web.transport: found 'feishu', which has no transports section, expected the name"
        " of a configured chat transport (there is no transports.<name> section)"
    ) in str(caught.value)


def test_two_teams_cannot_share_one_chat() -> None:
    message = _error(
        "teams:\n"
        "  a:\n    transport: feishu\n    chat: oc_1\n    project: /a\n"
        "  b:\n    transport: slack\n    chat: oc_1\n    project: /b\n"
        "  c:\n    transport: feishu\n    chat: oc_1\n    project: /c\n"
    )
    assert "teams.c.chat: found the chat of team 'a' on feishu" in message


@pytest.mark.parametrize(
    ("key", "why"),
    [
        ("status", "a built-in intent"),
        ("ask", "a built-in intent"),
        ("switch", "a built-in intent"),
        ("pause", "a bot switch command"),
        ("stop-bot", "a bot switch command"),
        ("new", "one of the engine's commands"),
        ("sessions", "one of the engine's commands"),
        ("permissions", "one of the engine's commands"),
        ("ns", "the engine's short form of /nosteer"),
    ],
)
def test_intent_keys_that_collide_with_commands_are_refused_at_load(key: str, why: str) -> None:
    message = _error(_intent(key))
    assert f"teams.web.intents.{key}: found the intent key {key!r}, which is {why}" in message
    assert reserved_intent_keys()[key] == why
