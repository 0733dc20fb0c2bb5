"""robota.core.config: profiles, config.yaml, .env, and the ``robota init`` machinery.

A *profile* is one directory tree of robota state: config.yaml and .env (the config directory),
the SQLite database (the data directory) and logs. ``ROBOTA_HOME`` puts all of it under one
directory; otherwise platformdirs decides. ``ROBOTA_CONFIG`` points at another config file.

Loading is .env first (the environment wins), then config.yaml with ``${NAME}`` expanded, then
validation into frozen dataclasses. Every problem is a ``robota.core.ConfigError`` naming the file,
the key path, what was found and what was expected, and never quoting a secret. A chat
transport's section is validated by its plugin, with the same ``Reader``. ``teams.<name>``
(``_teams``) holds what ``robota.core.policy`` needs to run a team group; its vocabulary (built-in
intents, switch commands, tag kinds, placeholders) is defined here, below the policy.

Parsing, validation and merging are pure functions of text; the loaders and ``init_profile`` are
the thin I/O around them.

The facade is lazy (PEP 562, ``robota.core.kernel._lazy``): importing ``robota.core.config`` loads
nothing but this file, and each name loads its module on first use, so loading a profile's
configuration (``load_config``) does not pay for ``robota init``'s machinery (templates,
merging, agent detection, the init lock).
"""

import typing

from ..kernel import lazy_attributes as _lazy_attributes

if typing.TYPE_CHECKING:
    from ._detect import AgentStatus, KnownAgent, KnowsAgents, detect_agents, known_agents
    from ._dotenv import dotenv_values, format_assignment, merge_dotenv, set_dotenv
    from ._files import atomic_write
    from ._init import FileOutcome, InitResult, init_profile
    from ._init_steps import InitOutcome, InitRequest, SetsUpOnInit
    from ._keys import (
        CONFIG_SECTIONS,
        ENABLED_KEY,
        PROJECT_SECTIONS,
        REQUIRED,
        ConfigKey,
        DescribesKeys,
        key_names,
    )
    from ._load import load_config, load_dotenv, parse_config
    from ._lock import InitLockTimeout, init_lock
    from ._mcp_servers import merged_servers
    from ._merge import merge_config_text
    from ._model import (
        AgentConfig,
        AgentKind,
        Config,
        ConsoleSettings,
        Defaults,
        IntentConfig,
        IntentLevel,
        Locale,
        LoggingConfig,
        LogLevel,
        MeshPeer,
        MeshSettings,
        PermissionMode,
        StorageConfig,
        TeamConfig,
        TeamDefaults,
        Transports,
        WsSettings,
    )
    from ._parsed import ParseCache, parse_cache, use_parse_cache
    from ._paths import Profile, profile_environment, resolve_profile
    from ._project import ProjectConfig, apply_project, load_project_config, parse_project_config
    from ._reader import Reader, credential_url
    from ._secrets import is_secret_value, looks_secret
    from ._teams import (
        BUILTIN_INTENTS,
        PLACEHOLDER,
        PLACEHOLDERS,
        SWITCH_COMMANDS,
        TAG_KINDS,
        SetsTeamDefaults,
        reserved_intent_keys,
        team_defaults,
    )
    from ._templates import template_text
    from ._transport_plugin import TransportPlugin, transport_plugin

__all__ = [
    # profiles
    "Profile",
    "profile_environment",
    "resolve_profile",
    # the validated configuration
    "AgentConfig",
    "AgentKind",
    "Config",
    "ConsoleSettings",
    "Defaults",
    "LogLevel",
    "LoggingConfig",
    "MeshPeer",
    "MeshSettings",
    "PermissionMode",
    "StorageConfig",
    "Transports",
    "WsSettings",
    # teams: a group chat as the front door of one project
    "BUILTIN_INTENTS",
    "IntentConfig",
    "IntentLevel",
    "Locale",
    "PLACEHOLDER",
    "PLACEHOLDERS",
    "SWITCH_COMMANDS",
    "TAG_KINDS",
    "TeamConfig",
    "TeamDefaults",
    "SetsTeamDefaults",
    "team_defaults",
    "reserved_intent_keys",
    # loading
    "load_config",
    "ProjectConfig",
    "apply_project",
    "merged_servers",
    "load_project_config",
    "parse_project_config",
    "load_dotenv",
    "parse_config",
    "ParseCache",
    "parse_cache",
    "use_parse_cache",
    "looks_secret",
    # files written whole or not at all, owner-only
    "atomic_write",
    "is_secret_value",
    # what transport plugins validate their sections with, and describe their keys with
    "Reader",
    "TransportPlugin",
    "credential_url",
    "transport_plugin",
    "ConfigKey",
    "DescribesKeys",
    "ENABLED_KEY",
    "key_names",
    # every key core validates (the configuration reference is generated from these)
    "CONFIG_SECTIONS",
    "PROJECT_SECTIONS",
    "REQUIRED",
    # .env text
    "dotenv_values",
    "format_assignment",
    "merge_dotenv",
    "set_dotenv",
    # robota init
    "InitOutcome",
    "InitRequest",
    "SetsUpOnInit",
    "FileOutcome",
    "InitLockTimeout",
    "init_lock",
    "InitResult",
    "init_profile",
    "merge_config_text",
    "template_text",
    # agent detection
    "AgentStatus",
    "KnownAgent",
    "KnowsAgents",
    "detect_agents",
    "known_agents",
]

_HOMES = {
    "AgentStatus": "._detect",
    "KnownAgent": "._detect",
    "KnowsAgents": "._detect",
    "detect_agents": "._detect",
    "known_agents": "._detect",
    "dotenv_values": "._dotenv",
    "format_assignment": "._dotenv",
    "merge_dotenv": "._dotenv",
    "set_dotenv": "._dotenv",
    "atomic_write": "._files",
    "ParseCache": "._parsed",
    "parse_cache": "._parsed",
    "use_parse_cache": "._parsed",
    "InitOutcome": "._init_steps",
    "InitRequest": "._init_steps",
    "SetsUpOnInit": "._init_steps",
    "FileOutcome": "._init",
    "InitResult": "._init",
    "init_profile": "._init",
    "template_text": "._templates",
    "load_config": "._load",
    "load_dotenv": "._load",
    "parse_config": "._load",
    "InitLockTimeout": "._lock",
    "init_lock": "._lock",
    "merge_config_text": "._merge",
    "AgentConfig": "._model",
    "AgentKind": "._model",
    "Config": "._model",
    "ConsoleSettings": "._model",
    "Defaults": "._model",
    "IntentConfig": "._model",
    "IntentLevel": "._model",
    "Locale": "._model",
    "LoggingConfig": "._model",
    "LogLevel": "._model",
    "MeshPeer": "._model",
    "MeshSettings": "._model",
    "PermissionMode": "._model",
    "StorageConfig": "._model",
    "TeamConfig": "._model",
    "TeamDefaults": "._model",
    "Transports": "._model",
    "WsSettings": "._model",
    "Profile": "._paths",
    "ProjectConfig": "._project",
    "apply_project": "._project",
    "merged_servers": "._mcp_servers",
    "load_project_config": "._project",
    "parse_project_config": "._project",
    "profile_environment": "._paths",
    "resolve_profile": "._paths",
    "Reader": "._reader",
    "CONFIG_SECTIONS": "._keys",
    "REQUIRED": "._keys",
    "PROJECT_SECTIONS": "._keys",
    "ConfigKey": "._keys",
    "ENABLED_KEY": "._keys",
    "DescribesKeys": "._keys",
    "key_names": "._keys",
    "credential_url": "._reader",
    "is_secret_value": "._secrets",
    "looks_secret": "._secrets",
    "TransportPlugin": "._transport_plugin",
    "transport_plugin": "._transport_plugin",
    "BUILTIN_INTENTS": "._teams",
    "PLACEHOLDER": "._teams",
    "PLACEHOLDERS": "._teams",
    "SWITCH_COMMANDS": "._teams",
    "TAG_KINDS": "._teams",
    "reserved_intent_keys": "._teams",
    "SetsTeamDefaults": "._teams",
    "team_defaults": "._teams",
}
"""Where each lazily loaded name lives (the same as the imports for type checkers above)."""

__getattr__, __dir__ = _lazy_attributes(__name__, _HOMES)
