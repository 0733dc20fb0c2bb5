"""config.yaml data -> ``Config``: expansion, validation and path resolution.

No I/O of its own, beyond what plugins need: the names of the installed runtime and transport
plugins (read from their distributions' metadata) and the transport plugins whose sections the
file has (imported to validate them).

Validation stops at the first problem and reports it as a ``ConfigError`` naming the file, the
key path (``agents.codex.command``), what was found and what was expected. What was found
is described, never quoted, when it may be a credential: a secret-named key, or any value that
came from a ``${NAME}`` reference.

Each section's keys come from ``_keys``' tables (type, default, meaning: the configuration
reference is generated from them). Unknown keys are errors at every level: ``permisionMode:
plan`` silently falling back to the default mode is the kind of typo that costs a user their
working tree.

Plugins own two parts of the file (see ``robota.core._plugins`` and ``_transport_plugin``):
``agents.<name>.kind`` must name an installed runtime plugin, and each chat transport's section
is validated by its transport plugin, through the same ``Reader``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType

from .._plugins import PluginError, runtime_kinds, transport_names
from ._expand import expand
from ._keys import (
    AGENT_KEYS,
    CONSOLE_KEYS,
    DEFAULTS_KEYS,
    LOGGING_KEYS,
    STORAGE_KEYS,
    TOP_LEVEL_KEYS,
    WS_KEYS,
    key_names,
)
from ._kinds import as_the_template_orders
from ._mcp_servers import validate_mcp_servers
from ._mesh import validate_mesh
from ._model import (
    LOG_LEVELS,
    PERMISSION_MODES,
    AgentConfig,
    Config,
    ConsoleSettings,
    Defaults,
    LoggingConfig,
    StorageConfig,
    Transports,
    WsSettings,
)
from ._paths import Profile
from ._reader import Reader, describe, one_of
from ._secrets import is_secret_value, looks_secret
from ._teams import validate_teams
from ._transport_plugin import transport_plugin

__all__ = ["AGENT_NAME", "SECTIONS", "validate_config"]

AGENT_NAME = re.compile(r"[a-z0-9][a-z0-9_-]*\Z")
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
SECTIONS = key_names(TOP_LEVEL_KEYS)
_AGENT_KEYS = key_names(AGENT_KEYS)
_OWN_TRANSPORTS = ("console", "ws")
"""robota's own front ends; every other ``transports`` key names a transport plugin."""
_PERMISSION_HINT = (
    " (Agent Bot's 'confirm' is 'default'; its 'auto' is 'acceptEdits' or 'bypassPermissions',"
    " pick one on purpose)"
)


def _kind(reader: Reader, raw: object, path: str, kinds: tuple[str, ...]) -> str:
    if isinstance(raw, str) and raw in kinds:
        return raw  # the common case, before building the expected text below
    expected = (
        f"{one_of(as_the_template_orders(kinds))} (the installed runtime plugins)"
        if kinds
        else "the kind of an installed runtime plugin (none is installed)"
    )
    if raw is None:
        raise reader.error(path, "nothing", expected)
    kind = reader.text(raw, path, required=True, expected=expected)
    assert kind is not None
    if kind not in kinds:
        raise reader.error(path, reader.describe_value(raw, kind, False), expected)
    return kind


def _agent(reader: Reader, name: str, raw: object, kinds: tuple[str, ...]) -> AgentConfig:
    path = f"agents.{name}"
    section = reader.section(raw, path, _AGENT_KEYS, nullable=False)
    agent_kind = _kind(reader, section.get("kind"), f"{path}.kind", kinds)
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
    servers = validate_mcp_servers(reader, section.get("mcpServers"), f"{path}.mcpServers")
    return AgentConfig(
        name=name,
        kind=agent_kind,
        command=command,
        args=tuple(args),
        env=MappingProxyType(env),
        title=title,
        mcp_servers=MappingProxyType(servers),
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
    kinds = runtime_kinds()
    for name, spec in raw.items():
        if not isinstance(name, str) or not AGENT_NAME.match(name):
            raise reader.error(
                "agents", f"the agent name {describe(name)}", "a name like [a-z0-9][a-z0-9-_]*"
            )
        agents[name] = _agent(reader, name, spec, kinds)
    return agents


def _defaults(
    reader: Reader, raw: object, agents: Mapping[str, AgentConfig], start_dir: Path
) -> Defaults:
    section = reader.section(raw, "defaults", key_names(DEFAULTS_KEYS))
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


def _chat(reader: Reader, name: str, raw: object) -> object:
    """A chat transport's section, validated by its plugin (imported here, and only here)."""
    try:
        plugin = transport_plugin(name)
    except PluginError as error:
        raise reader.error(
            f"transports.{name}",
            f"a section for a transport plugin that is broken ({error})",
            f"a working installation of the {name!r} transport plugin",
        ) from error
    return plugin.validate(reader, raw)


def _transports(reader: Reader, raw: object) -> Transports:
    installed = transport_names()
    allowed = (*_OWN_TRANSPORTS, *installed)
    if isinstance(raw, Mapping):
        unknown = [key for key in raw if isinstance(key, str) and key not in allowed]
        if unknown:
            plugins = ", ".join(installed) if installed else "none"
            raise reader.error(
                f"transports.{unknown[0]}",
                f"a section for {unknown[0]!r}, which no installed transport plugin provides",
                f"{one_of(allowed)} (installed transport plugins: {plugins})",
            )
    section = reader.section(raw, "transports", allowed)
    console = reader.section(section.get("console"), "transports.console", key_names(CONSOLE_KEYS))
    ws: WsSettings | None = None
    if "ws" in section:
        ws_section = reader.section(
            section["ws"], "transports.ws", key_names(WS_KEYS), nullable=False
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
        ws=ws,
        chat=MappingProxyType(
            {
                name: _chat(reader, name, value)
                for name, value in section.items()
                if name not in _OWN_TRANSPORTS
            }
        ),
        installed=frozenset(installed),
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
    teams = validate_teams(reader, top.get("teams"), transports.chat)
    servers = validate_mcp_servers(reader, top.get("mcpServers"), "mcpServers")
    base = file.parent
    storage = reader.section(top.get("storage"), "storage", key_names(STORAGE_KEYS))
    logging = reader.section(top.get("logging"), "logging", key_names(LOGGING_KEYS))
    mesh = validate_mesh(reader, top.get("mesh"))
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
        teams=MappingProxyType(teams),
        mesh=mesh,
        mcp_servers=MappingProxyType(servers),
        secrets=frozenset(reader.secrets) | extra_secrets,
    )
