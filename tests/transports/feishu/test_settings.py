"""``transports.feishu``: the domain (the one base URL of REST and the endpoint call), the
other keys, and the chats served at once."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.support.transport_context import unserved_context

from robota.core import ConfigError
from robota.core.config import parse_config, resolve_profile
from robota.core.frontend import MAX_BUSY_CHATS
from robota.transports.feishu import DEFAULT_DOMAIN, FeishuSettings
from robota.transports.feishu._adapter import service

HOME = Path("/profiles/p")
CONFIG = """\
agents:
  mine:
    kind: acp
    command: my-agent
defaults:
  agent: mine
transports:
  feishu:
    appId: cli_a
    appSecret: ${FEISHU_APP_SECRET}
    userOpenId: ou_owner
"""


def feishu(extra: str = "") -> FeishuSettings:
    config = parse_config(
        CONFIG + extra,
        file=HOME / "config.yaml",
        environ={"FEISHU_APP_SECRET": "s3cret-value"},
        profile=resolve_profile({"ROBOTA_HOME": str(HOME)}),
        start_dir=Path("/work"),
    )
    settings = config.transports.feishu
    assert isinstance(settings, FeishuSettings)
    return settings


def test_the_domain_defaults_to_feishu() -> None:
    assert feishu().domain == DEFAULT_DOMAIN == "https://open.feishu.cn"


@pytest.mark.parametrize(
    ("value", "domain"),
    [
        ("https://open.larksuite.com", "https://open.larksuite.com"),
        ("https://open.feishu.cn/", "https://open.feishu.cn"),
        ("http://127.0.0.1:8123", "http://127.0.0.1:8123"),
        ("http://localhost:9000/", "http://localhost:9000"),
    ],
)
def test_a_domain_is_accepted(value: str, domain: str) -> None:
    assert feishu(f"    domain: {value}\n").domain == domain


@pytest.mark.parametrize(
    "value",
    [
        "http://open.feishu.cn",  # the secret would travel in clear text
        "open.feishu.cn",
        "ftp://open.feishu.cn",
        "https://open.feishu.cn/open-apis",
        "https://open.feishu.cn?x=1",
        "http://127.0.0.1:port",
        "https://",
    ],
)
def test_a_bad_domain_names_the_key_what_was_found_and_what_is_expected(value: str) -> None:
    with pytest.raises(ConfigError) as raised:
        feishu(f"    domain: '{value}'\n")
    error = raised.value
    assert error.key == "transports.feishu.domain"
    assert error.found == repr(value)
    assert "https://open.feishu.cn" in error.expected and "loopback" in error.expected
    assert error.file == str(HOME / "config.yaml")


def test_the_app_secret_joins_the_secrets_log_lines_are_masked_with() -> None:
    config = parse_config(
        CONFIG,
        file=HOME / "config.yaml",
        environ={"FEISHU_APP_SECRET": "s3cret-value"},
        profile=resolve_profile({"ROBOTA_HOME": str(HOME)}),
        start_dir=Path("/work"),
    )
    assert "s3cret-value" in config.secrets
    assert "s3cret-value" not in repr(config.transports.feishu)


def test_enabled_and_group_defaults_and_the_agents_environment() -> None:
    from robota.transports.feishu import plugin

    settings = feishu()
    assert settings.enabled and settings.respond_to_all_group_messages
    off = feishu("    enabled: false\n    respondToAllGroupMessages: false\n")
    assert not off.enabled and not off.respond_to_all_group_messages
    # A platform that does not answer (a loopback port nobody serves): no bot id, no delay
    # beyond the look-up's bound, and the rest is there.
    env = plugin.agent_env(feishu("    domain: http://127.0.0.1:1\n"))
    assert env == {"ROBOTA_LARK_APP_ID": "cli_a", "ROBOTA_LARK_USER_OPEN_ID": "ou_owner"}
    assert "s3cret-value" not in repr(env)


def test_enabled_must_be_a_boolean() -> None:
    with pytest.raises(ConfigError) as raised:
        feishu("    enabled: sometimes\n")
    assert "transports.feishu.enabled" in str(raised.value)


def test_the_bots_open_id_the_service_read_goes_to_the_agents_without_a_look_up() -> None:
    """The service tells its plugin what the platform said (``bot_read``); the agents of a
    later start in this process get it, with no look-up (the domain is a port nobody serves),
    and only for that app."""
    from robota.transports.feishu import FeishuTransport

    plugin = FeishuTransport()
    settings = feishu("    domain: http://127.0.0.1:1\n")
    plugin._bot_read("cli_other", "ou_other_bot")
    assert "ROBOTA_LARK_BOT_OPEN_ID" not in plugin.agent_env(settings)
    plugin._bot_read("cli_a", "ou_bot")
    assert plugin.agent_env(settings)["ROBOTA_LARK_BOT_OPEN_ID"] == "ou_bot"


@pytest.mark.parametrize(
    ("extra", "busy"),
    [
        ("", None),  # the chat service's own bound (``MAX_BUSY_CHATS``)
        ("    maxBusyChats: 1\n", 1),
        ("    maxBusyChats: 200\n", 200),
    ],
)
def test_the_chats_served_at_once(extra: str, busy: int | None) -> None:
    assert feishu(extra).max_busy_chats == busy


@pytest.mark.parametrize("value", ["0", "1001", "many", "2.5", "true"])
def test_the_chats_served_at_once_is_a_whole_number_from_1_to_1000(value: str) -> None:
    with pytest.raises(ConfigError) as raised:
        feishu(f"    maxBusyChats: {value}\n")
    assert raised.value.key == "transports.feishu.maxBusyChats"
    assert "a whole number from 1 to 1000" in str(raised.value)


@pytest.mark.parametrize(("extra", "limit"), [("", MAX_BUSY_CHATS), ("    maxBusyChats: 4\n", 4)])
def test_the_service_serves_that_many_chats_at_once(extra: str, limit: int) -> None:
    context = unserved_context("feishu", feishu(extra))
    assert service(context, bot_read=lambda _app, _bot: None).turns.gate.limit == limit
