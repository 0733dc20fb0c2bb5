"""config.yaml data -> ``Config``: expansion, validation and path resolution, without I/O.

Validation stops at the first problem and reports it as a ``ConfigError`` naming the file, the
key path (``transports.slack.botToken``), what was found and what was expected. What was found
is described, never quoted, when it may be a credential: a secret-named key, or any value that
came from a ``${NAME}`` reference.

Unknown keys are errors at every level: ``permisionMode: plan`` silently falling back to the
default mode is the kind of typo that costs a user their working tree.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any

from ._expand import expand
from ._model import (
    AGENT_KINDS,
    LOG_LEVELS,
    PERMISSION_MODES,
    THINKING_CARD_LAYOUTS,
    AgentConfig,
    Config,
    ConsoleSettings,
    Defaults,
    FeishuSettings,
    LoggingConfig,
    SlackSettings,
    StorageConfig,
    Transports,
    WsSettings,
)
from ._paths import Profile
from ._reader import Reader, describe, one_of
from ._secrets import is_secret_value, looks_secret

__all__ = ["AGENT_NAME", "SECTIONS", "validate_config"]

AGENT_NAME = re.compile(r"[a-z0-9][a-z0-9_-]*\Z")
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
SECTIONS = ("agents", "defaults", "transports", "storage", "logging")
_AGENT_KEYS = ("kind", "command", "args", "env", "title")
_PERMISSION_HINT = (
    " (Agent Bot's 'confirm' is 'default'; its 'auto' is 'acceptEdits' or 'bypassPermissions',"
    " pick one on purpose)"
)


def _agent(reader: Reader, name: str, raw: object) -> AgentConfig:
    path = f"agents.{name}"
    section = reader.section(raw, path, _AGENT_KEYS, nullable=False)
    kind = section.get("kind")
    if kind is None:
        raise reader.error(f"{path}.kind", "nothing", one_of(AGENT_KINDS))
    agent_kind = reader.choice(kind, f"{path}.kind", AGENT_KINDS, AGENT_KINDS[0])
    command = reader.text(section.get("command"), f"{path}.command", required=True)
    assert command is not None
    raw_args = section.get("args")
    args: list[str] = []
    if raw_args is not None:
        if not isinstance(raw_args, list):
            raise reader.error(f"{path}.args", describe(raw_args), "a list of text arguments")
        for index, item in enumerate(raw_args):
            arg = reader.text(item, f"{path}.args[{index}]", required=True)
            assert arg is not None
            args.append(arg)
    env: dict[str, str] = {}
    raw_env = section.get("env")
    if raw_env is not None:
        if not isinstance(raw_env, Mapping):
            raise reader.error(f"{path}.env", describe(raw_env), "a mapping of NAME: value")
        for key, value in raw_env.items():
            if not isinstance(key, str) or not _ENV_NAME.match(key):
                raise reader.error(f"{path}.env", f"the name {describe(key)}", "NAME: value")
            text = reader.env_value(value, f"{path}.env.{key}", secret=looks_secret(key))
            if text is not None:
                env[key] = text
    title = reader.text(section.get("title"), f"{path}.title", required=False) or name
    return AgentConfig(
        name=name,
        kind=agent_kind,
        command=command,
        args=tuple(args),
        env=MappingProxyType(env),
        title=title,
    )


def _agents(reader: Reader, raw: object) -> dict[str, AgentConfig]:
    expected = "a mapping of agent names to {kind, command, args, env, title}"
    if raw is None:
        raise reader.error("agents", "nothing", expected + " with at least one agent")
    if not isinstance(raw, Mapping):
        raise reader.error("agents", describe(raw), expected)
    if not raw:
        raise reader.error("agents", "no agents", "at least one agent")
    agents: dict[str, AgentConfig] = {}
    for name, spec in raw.items():
        if not isinstance(name, str) or not AGENT_NAME.match(name):
            raise reader.error(
                "agents", f"the agent name {describe(name)}", "a name like [a-z0-9][a-z0-9-_]*"
            )
        agents[name] = _agent(reader, name, spec)
    return agents


def _defaults(
    reader: Reader, raw: object, agents: Mapping[str, AgentConfig], start_dir: Path
) -> Defaults:
    section = reader.section(raw, "defaults", ("agent", "cwd", "permissionMode"))
    configured = "one of the configured agents: " + ", ".join(agents)
    agent = reader.text(section.get("agent"), "defaults.agent", required=True, expected=configured)
    assert agent is not None
    if agent not in agents:
        raise reader.error(
            "defaults.agent", reader.describe_value(section.get("agent"), agent, False), configured
        )
    return Defaults(
        agent=agent,
        cwd=reader.path(section.get("cwd"), "defaults.cwd", start_dir, start_dir),
        permission_mode=reader.choice(
            section.get("permissionMode"),
            "defaults.permissionMode",
            PERMISSION_MODES,
            "default",
            hint=_PERMISSION_HINT,
        ),
    )


def _feishu(reader: Reader, raw: object) -> FeishuSettings:
    path = "transports.feishu"
    keys = (
        "appId",
        "appSecret",
        "userOpenId",
        "respondToOwnerOnly",
        "respondToAllGroupMessages",
        "thinkingCardLayout",
    )
    section = reader.section(raw, path, keys, nullable=False)
    owner_only = reader.boolean(
        section.get("respondToOwnerOnly"), f"{path}.respondToOwnerOnly", True
    )
    app_id = reader.text(section.get("appId"), f"{path}.appId", required=True)
    app_secret = reader.secret(section, "appSecret", path, required=True)
    owner = reader.text(
        section.get("userOpenId"),
        f"{path}.userOpenId",
        required=owner_only,
        expected="the owner's open_id (needed while respondToOwnerOnly is true)",
    )
    assert app_id is not None and app_secret is not None
    return FeishuSettings(
        app_id=app_id,
        app_secret=app_secret,
        user_open_id=owner,
        respond_to_owner_only=owner_only,
        respond_to_all_group_messages=reader.boolean(
            section.get("respondToAllGroupMessages"), f"{path}.respondToAllGroupMessages", False
        ),
        thinking_card_layout=reader.choice(
            section.get("thinkingCardLayout"),
            f"{path}.thinkingCardLayout",
            THINKING_CARD_LAYOUTS,
            "grouped",
        ),
    )


def _slack_token(reader: Reader, section: Mapping[str, Any], key: str, prefix: str) -> str:
    path = "transports.slack"
    token = reader.secret(section, key, path, required=True)
    assert token is not None
    if not token.startswith(prefix):
        raise reader.error(
            f"{path}.{key}", f"a value that does not start with {prefix}", f"a {prefix}... token"
        )
    return token


def _slack(reader: Reader, raw: object) -> SlackSettings:
    path = "transports.slack"
    keys = ("botToken", "appToken", "signingSecret", "userId")
    section = reader.section(raw, path, keys, nullable=False)
    bot_token = _slack_token(reader, section, "botToken", "xoxb-")
    app_token = _slack_token(reader, section, "appToken", "xapp-")
    user_id = reader.text(
        section.get("userId"), f"{path}.userId", required=True, expected="the owner's Slack user id"
    )
    assert user_id is not None
    return SlackSettings(
        bot_token=bot_token,
        app_token=app_token,
        user_id=user_id,
        signing_secret=reader.secret(section, "signingSecret", path, required=False),
    )


def _transports(reader: Reader, raw: object) -> Transports:
    section = reader.section(raw, "transports", ("console", "feishu", "slack", "ws"))
    console = reader.section(section.get("console"), "transports.console", ("enabled",))
    ws: WsSettings | None = None
    if "ws" in section:
        ws_section = reader.section(
            section["ws"], "transports.ws", ("host", "port"), nullable=False
        )
        host = reader.text(ws_section.get("host"), "transports.ws.host", required=False)
        ws = WsSettings(
            port=reader.integer(ws_section.get("port"), "transports.ws.port", 0, 65535),
            host=host or "127.0.0.1",
        )
    return Transports(
        console=ConsoleSettings(
            enabled=reader.boolean(console.get("enabled"), "transports.console.enabled", True)
        ),
        feishu=_feishu(reader, section["feishu"]) if "feishu" in section else None,
        slack=_slack(reader, section["slack"]) if "slack" in section else None,
        ws=ws,
    )


def _collect_named_secrets(reader: Reader, value: object) -> None:
    """Record secret-named values anywhere in the file, even under keys we ignore today."""
    if isinstance(value, Mapping):
        for key, item in value.items():
            if isinstance(key, str) and isinstance(item, str) and looks_secret(key):
                expanded = expand(item, reader.environ).value
                if is_secret_value(key, expanded):
                    reader.secrets.add(expanded)
            _collect_named_secrets(reader, item)
    elif isinstance(value, list):
        for item in value:
            _collect_named_secrets(reader, item)


def validate_config(
    data: object,
    *,
    file: Path,
    environ: Mapping[str, str],
    profile: Profile,
    start_dir: Path,
    extra_secrets: frozenset[str] = frozenset(),
) -> Config:
    """Turn the loaded YAML of ``file`` into a ``Config``, or raise ``ConfigError``.

    ``environ`` must already include the profile's .env. Relative storage and log paths resolve
    against the config file's directory (so a profile can be moved as a whole); ``defaults.cwd``
    resolves against ``start_dir``, the directory robota was started in.
    """
    reader = Reader(str(file), environ, profile.env_file)
    if data is None:
        raise reader.error("(top level)", "an empty file", "a mapping with an `agents` section")
    top = reader.section(data, "(top level)", SECTIONS, nullable=False)
    if "agents" not in top:
        raise reader.error("agents", "nothing", "at least one agent")
    agents = _agents(reader, top["agents"])
    defaults = _defaults(reader, top.get("defaults"), agents, start_dir)
    transports = _transports(reader, top.get("transports"))
    base = file.parent
    storage = reader.section(top.get("storage"), "storage", ("sqlitePath",))
    logging = reader.section(top.get("logging"), "logging", ("level", "path"))
    _collect_named_secrets(reader, data)
    return Config(
        file=file,
        agents=MappingProxyType(agents),
        defaults=defaults,
        transports=transports,
        storage=StorageConfig(
            sqlite_path=reader.path(
                storage.get("sqlitePath"), "storage.sqlitePath", base, profile.default_sqlite_path
            )
        ),
        logging=LoggingConfig(
            level=reader.choice(
                logging.get("level"), "logging.level", LOG_LEVELS, "info", fold_case=True
            ),
            path=reader.path(logging.get("path"), "logging.path", base, profile.default_log_path),
        ),
        secrets=frozenset(reader.secrets) | extra_secrets,
    )
