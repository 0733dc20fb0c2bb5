"""``transports.slack``: its keys, their defaults, and what each mistake says."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.support.transport_context import unserved_context

from robota.core import ConfigError
from robota.core.config import Config, parse_config, resolve_profile
from robota.core.frontend import MAX_BUSY_CHATS
from robota.transports.slack import DEFAULT_API_URL, SlackSettings
from robota.transports.slack._adapter import service

HOME = Path("/profiles/p")
BOT = "xoxb-1111-2222-bottokenvalue"
APP = "xapp-1-A0-appleveltokenvalue"
CONFIG = """\
agents:
  mine:
    kind: acp
    command: my-agent
defaults:
  agent: mine
transports:
  slack:
    botToken: ${SLACK_BOT_TOKEN}
    appToken: ${SLACK_APP_TOKEN}
"""


def parse(extra: str = "    userId: U0ALICE\n", environ: dict[str, str] | None = None) -> Config:
    return parse_config(
        CONFIG + extra,
        file=HOME / "config.yaml",
        environ={"SLACK_BOT_TOKEN": BOT, "SLACK_APP_TOKEN": APP} if environ is None else environ,
        profile=resolve_profile({"ROBOTA_HOME": str(HOME)}),
        start_dir=Path("/work"),
    )


def slack(extra: str = "    userId: U0ALICE\n") -> SlackSettings:
    settings = parse(extra).transports.slack
    assert isinstance(settings, SlackSettings)
    return settings


def error(extra: str, environ: dict[str, str] | None = None) -> ConfigError:
    with pytest.raises(ConfigError) as raised:
        parse(extra, environ)
    assert raised.value.file == str(HOME / "config.yaml")
    return raised.value


def test_the_defaults() -> None:
    settings = slack()
    assert settings == SlackSettings(bot_token=BOT, app_token=APP, user_id="U0ALICE")
    assert settings.enabled is True
    assert settings.api_url == DEFAULT_API_URL == "https://slack.com/api/"
    assert settings.respond_to_owner_only is True
    assert settings.respond_to_all_channel_messages is False


def test_every_key_is_read() -> None:
    settings = slack(
        "    enabled: false\n"
        "    userId: U0ALICE\n"
        "    apiUrl: http://127.0.0.1:8123/api/\n"
        "    respondToOwnerOnly: false\n"
        "    respondToAllChannelMessages: true\n"
    )
    assert (settings.enabled, settings.api_url) == (False, "http://127.0.0.1:8123/api/")
    assert not settings.respond_to_owner_only and settings.respond_to_all_channel_messages


@pytest.mark.parametrize(
    ("value", "url"),
    [
        ("https://slack.com/api", "https://slack.com/api/"),
        ("https://example.enterprise.slack.com/api/", "https://example.enterprise.slack.com/api/"),
        ("http://localhost:9000/api/", "http://localhost:9000/api/"),
        ("http://127.0.0.1:9000/", "http://127.0.0.1:9000/"),
    ],
)
def test_an_api_url_is_accepted_and_ends_in_a_slash(value: str, url: str) -> None:
    assert slack(f"    userId: U1\n    apiUrl: {value}\n").api_url == url


@pytest.mark.parametrize(
    "value",
    [
        "http://slack.com/api/",  # the tokens would travel in clear text
        "slack.com/api/",
        "ftp://slack.com/api/",
        "https://slack.com/api/?x=1",
        "https://slack.com/api/#top",
        "http://127.0.0.1:port/api/",
        "https://",
    ],
)
def test_a_bad_api_url_names_the_key_what_was_found_and_what_is_expected(value: str) -> None:
    raised = error(f"    userId: U1\n    apiUrl: '{value}'\n")
    assert raised.key == "transports.slack.apiUrl"
    assert raised.found == repr(value)
    assert "https://slack.com/api/" in raised.expected and "loopback" in raised.expected


def test_the_owner_is_required_while_only_the_owner_is_answered() -> None:
    raised = error("")
    assert raised.key == "transports.slack.userId"
    assert raised.found == "nothing" and "respondToOwnerOnly" in raised.expected
    assert slack("    respondToOwnerOnly: false\n").user_id is None


@pytest.mark.parametrize(
    ("environ", "key", "found"),
    [
        ({"SLACK_BOT_TOKEN": "xoxp-user-token-value", "SLACK_APP_TOKEN": APP}, "botToken", "xoxb-"),
        ({"SLACK_BOT_TOKEN": BOT, "SLACK_APP_TOKEN": BOT}, "appToken", "xapp-"),
    ],
)
def test_a_token_of_the_wrong_kind_is_described_never_quoted(
    environ: dict[str, str], key: str, found: str
) -> None:
    raised = error("    userId: U1\n", environ)
    assert raised.key == f"transports.slack.{key}"
    assert raised.found == f"a value that does not start with {found}"
    for value in environ.values():
        assert value not in str(raised)


def test_an_unset_token_names_the_variable() -> None:
    raised = error("    userId: U1\n", {"SLACK_APP_TOKEN": APP})
    assert raised.key == "transports.slack.botToken"
    assert "SLACK_BOT_TOKEN is not set" in raised.found


@pytest.mark.parametrize(
    ("extra", "key"),
    [
        ("    userId: U1\n    signingSecret: s\n", "transports.slack"),
        ("    userId: U1\n    enabled: 'yes'\n", "transports.slack.enabled"),
        (
            "    userId: U1\n    respondToAllChannelMessages: 1\n",
            "transports.slack.respondToAllChannelMessages",
        ),
    ],
)
def test_unknown_keys_and_wrong_types_are_errors(extra: str, key: str) -> None:
    assert error(extra).key == key


def test_the_tokens_are_secrets_and_never_in_a_repr() -> None:
    config = parse()
    assert {BOT, APP} <= config.secrets
    assert BOT not in repr(config) and APP not in repr(config)


@pytest.mark.parametrize(
    ("extra", "busy"),
    [
        ("    userId: U1\n", None),  # the chat service's own bound (``MAX_BUSY_CHATS``)
        ("    userId: U1\n    maxBusyChats: 4\n", 4),
    ],
)
def test_the_chats_served_at_once(extra: str, busy: int | None) -> None:
    assert slack(extra).max_busy_chats == busy


@pytest.mark.parametrize("value", ["0", "1001", "'lots'"])
def test_the_chats_served_at_once_is_a_whole_number_from_1_to_1000(value: str) -> None:
    raised = error(f"    userId: U1\n    maxBusyChats: {value}\n")
    assert raised.key == "transports.slack.maxBusyChats"
    assert "a whole number from 1 to 1000" in str(raised)


@pytest.mark.parametrize(("extra", "limit"), [("", MAX_BUSY_CHATS), ("    maxBusyChats: 4\n", 4)])
def test_the_service_serves_that_many_chats_at_once(extra: str, limit: int) -> None:
    context = unserved_context("slack", slack("    userId: U1\n" + extra))
    assert service(context).turns.gate.limit == limit
