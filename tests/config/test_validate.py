"""config.yaml validation: what a valid file becomes, and what every mistake says."""

from __future__ import annotations

from pathlib import Path

import pytest

from robota.core import ConfigError
from robota.core.config import template_text

from ._validate import HOME, MINIMAL, START, _parse


def _error(text: str, environ: dict[str, str] | None = None) -> str:
    with pytest.raises(ConfigError) as caught:
        _parse(text, environ)
    assert caught.value.file == str(HOME / "config.yaml")
    return str(caught.value)


def test_the_packaged_template_is_valid_and_starts_codex() -> None:
    config = _parse(template_text("config.yaml"))
    assert list(config.agents) == ["codex", "codex-acp", "gemini", "qwen", "opencode", "claude"]
    codex = config.default_agent
    assert (codex.name, codex.kind, codex.command) == ("codex", "app-server", "codex")
    assert codex.args == ("app-server", "--listen", "stdio://")
    assert config.agents["claude"].command == "claude-agent-acp"
    assert config.agents["gemini"].args == ("--acp",)
    assert config.defaults.cwd == START / "."
    assert config.defaults.permission_mode == "default"
    assert config.transports.console.enabled
    assert config.transports.feishu is None and config.transports.slack is None
    assert config.storage.sqlite_path == HOME / "data" / "robota.sqlite"
    assert config.logging.path == HOME / "logs" / "robota.log"
    assert config.logging.level == "info"


def test_defaults_and_path_resolution() -> None:
    config = _parse(
        MINIMAL
        + """\
  cwd: projects
  permissionMode: plan
storage:
  sqlitePath: db/robota.sqlite
logging:
  level: DEBUG
  path: /var/log/robota.log
"""
    )
    agent = config.agents["mine"]
    assert (agent.args, dict(agent.env), agent.title) == ((), {}, "mine")
    # defaults.cwd resolves against the start directory, storage against the config file's.
    assert config.defaults.cwd == START / "projects"
    assert config.storage.sqlite_path == HOME / "db" / "robota.sqlite"
    assert config.logging.path == Path("/var/log/robota.log")
    assert config.logging.level == "debug"
    assert config.defaults.permission_mode == "plan"


def test_transports_with_expanded_credentials() -> None:
    environ = {
        "FEISHU_APP_ID": "cli_a1",
        "FEISHU_APP_SECRET": "feishu-secret-value",
        "SLACK_BOT_TOKEN": "xoxb-123-abc",
        "SLACK_APP_TOKEN": "xapp-1-xyz",
        "WS_PORT": "8765",
    }
    config = _parse(
        MINIMAL
        + """\
transports:
  console:
    enabled: false
  feishu:
    appId: ${FEISHU_APP_ID}
    appSecret: ${FEISHU_APP_SECRET}
    respondToOwnerOnly: false
    thinkingCardLayout: timeline
  slack:
    botToken: ${SLACK_BOT_TOKEN}
    appToken: ${SLACK_APP_TOKEN}
    apiUrl: ${SLACK_API_URL}
    userId: U123
  ws:
    port: ${WS_PORT}
""",
        environ,
    )
    feishu, slack, ws = config.transports.feishu, config.transports.slack, config.transports.ws
    assert feishu is not None and slack is not None and ws is not None
    assert not config.transports.console.enabled
    assert (feishu.app_id, feishu.app_secret, feishu.user_open_id) == (
        "cli_a1",
        "feishu-secret-value",
        None,
    )
    assert feishu.thinking_card_layout == "timeline"
    assert feishu.respond_to_all_group_messages
    # An unset reference in an optional field means "not set".
    assert slack.api_url == "https://slack.com/api/"
    assert (ws.host, ws.port) == ("127.0.0.1", 8765)
    # Credentials are known secrets, and never part of a repr.
    assert {"feishu-secret-value", "xoxb-123-abc", "xapp-1-xyz"} <= config.secrets
    assert "feishu-secret-value" not in repr(config)
    assert "xoxb-123-abc" not in repr(config)


def test_agent_env_passes_set_variables_and_drops_unset_ones() -> None:
    config = _parse(
        """\
agents:
  mine:
    kind: app-server
    command: ${TOOLS}/agent
    args: [--port, "${PORT}"]
    env:
      OPENAI_API_KEY: ${OPENAI_API_KEY}
      ANTHROPIC_API_KEY: ${ANTHROPIC_API_KEY}
      RETRIES: 3
      EMPTY: ""
      LITERAL: "$${NOT_EXPANDED} and $5"
defaults:
  agent: mine
""",
        {"TOOLS": "/opt/tools", "PORT": "9000", "OPENAI_API_KEY": "sk-test-openai-key"},
    )
    agent = config.agents["mine"]
    assert agent.command == "/opt/tools/agent"
    assert agent.args == ("--port", "9000")
    assert dict(agent.env) == {
        "OPENAI_API_KEY": "sk-test-openai-key",
        "RETRIES": "3",
        "EMPTY": "",
        "LITERAL": "${NOT_EXPANDED} and $5",
    }
    assert "sk-test-openai-key" in config.secrets
    assert "sk-test-openai-key" not in repr(config)


@pytest.mark.parametrize(
    ("text", "key", "found", "expected"),
    [
        ("agents: {}\n", "agents", "no agents", "at least one agent"),
        ("defaults: {agent: x}\n", "agents", "nothing", "at least one agent"),
        ("[1, 2]\n", "(top level)", "a list", "a mapping"),
        ("", "(top level)", "an empty file", "agents"),
        (MINIMAL + "loging: {}\n", "(top level)", "unknown key 'loging'", "one of agents"),
        (
            MINIMAL.replace("defaults:", "extra: 1\ntypo: 2\ndefaults:"),
            "(top level)",
            "unknown keys 'extra', 'typo'",
            "logging",
        ),
        (MINIMAL + "  permisionMode: plan\n", "defaults", "'permisionMode'", "permissionMode"),
        (MINIMAL.replace("mine:", "My Agent:", 1), "agents", "'My Agent'", "[a-z0-9]"),
        (MINIMAL.replace("kind: acp", "kind: mcp"), "agents.mine.kind", "'mcp'", "app-server, acp"),
        (MINIMAL.replace("    kind: acp\n", ""), "agents.mine.kind", "nothing", "app-server"),
        (MINIMAL.replace("command: my-agent", "command: 12"), "agents.mine.command", "12", "quote"),
        (MINIMAL.replace("command: my-agent", "args: x"), "agents.mine.command", "nothing", "text"),
        (MINIMAL + "  cwd: [a]\n", "defaults.cwd", "a list", "a path"),
        (
            MINIMAL.replace("agent: mine", "agent: codex"),
            "defaults.agent",
            "'codex'",
            "configured agents: mine",
        ),
        (MINIMAL.replace("  agent: mine\n", "  cwd: .\n"), "defaults.agent", "nothing", "mine"),
        (MINIMAL + "  permissionMode: auto\n", "defaults.permissionMode", "'auto'", "Agent Bot"),
        (
            MINIMAL + "transports:\n  console:\n    enabled: yes\n",
            "transports.console.enabled",
            "'yes'",
            "true or false",
        ),
        (MINIMAL + "transports:\n  ws:\n    port: 70000\n", "transports.ws.port", "70000", "65535"),
        (MINIMAL + "transports:\n  feishu:\n", "transports.feishu", "nothing", "a mapping"),
        (MINIMAL + "logging:\n  level: verbose\n", "logging.level", "'verbose'", "debug, info"),
        (MINIMAL + "storage: 3\n", "storage", "3 (a number)", "a mapping"),
    ],
)
def test_every_error_names_key_found_and_expected(
    text: str, key: str, found: str, expected: str
) -> None:
    message = _error(text)
    assert f"config.yaml: {key}: found " in message
    found_part, _, expected_part = message.partition(", expected ")
    assert found in found_part
    assert expected in expected_part


def test_unset_variable_in_a_required_field_names_the_variable() -> None:
    message = _error(
        MINIMAL + "transports:\n  feishu:\n    appId: ${FEISHU_APP_ID}\n    appSecret: x\n"
    )
    assert "transports.feishu.appId: found ${FEISHU_APP_ID} but FEISHU_APP_ID is not set" in message
    assert str(HOME / ".env") in message


def test_errors_never_quote_secrets() -> None:
    secret = "xoxp-wrong-kind-of-token-123"
    slack = (
        "transports:\n  slack:\n    botToken: ${SLACK_BOT_TOKEN}\n    appToken: xapp-1\n"
        "    userId: U1\n"
    )
    message = _error(MINIMAL + slack, {"SLACK_BOT_TOKEN": secret})
    assert "transports.slack.botToken: found a value that does not start with xoxb-" in message
    assert secret not in message and "xoxp" not in message

    # A secret of the wrong type is not echoed either.
    message = _error(
        MINIMAL + "transports:\n  feishu:\n    appId: a\n    appSecret: 123456789\n", {}
    )
    assert "appSecret: found a value that is not text" in message
    assert "123456789" not in message


def test_malformed_reference_is_an_error() -> None:
    message = _error(MINIMAL.replace("my-agent", "${TOOLS/agent"))
    assert "agents.mine.command: found a '${' that does not start a ${NAME} reference" in message


@pytest.mark.parametrize(
    ("text", "where", "found"),
    [
        ("agents: [\n", "line 2", "invalid YAML"),
        ("agents:\n  a: 1\n   b: 2\n", "line 3", "invalid YAML"),
        ("agents: {}\nagents: {secret: hunter2}\n", "line 2", "a key that appears twice"),
    ],
)
def test_yaml_syntax_errors_give_a_position_not_the_text(text: str, where: str, found: str) -> None:
    message = _error(text)
    assert f"config.yaml: {where}" in message
    assert found in message
    assert message.endswith("expected valid YAML")
    assert "hunter2" not in message
