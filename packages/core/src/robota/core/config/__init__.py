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
"""

from ._detect import KNOWN_AGENTS, AgentStatus, KnownAgent, detect_agents
from ._dotenv import dotenv_values, format_assignment, merge_dotenv, set_dotenv
from ._files import atomic_write
from ._init import FileOutcome, InitResult, init_profile, template_text
from ._load import load_config, load_dotenv, parse_config
from ._lock import InitLockTimeout, init_lock
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
    PermissionMode,
    StorageConfig,
    TeamConfig,
    Transports,
    WsSettings,
)
from ._paths import Profile, profile_environment, resolve_profile
from ._reader import Reader, credential_url
from ._secrets import is_secret_value, looks_secret
from ._teams import (
    BUILTIN_INTENTS,
    PLACEHOLDER,
    PLACEHOLDERS,
    SWITCH_COMMANDS,
    TAG_KINDS,
    reserved_intent_keys,
)

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
    "reserved_intent_keys",
    # loading
    "load_config",
    "load_dotenv",
    "parse_config",
    "looks_secret",
    # files written whole or not at all, owner-only
    "atomic_write",
    "is_secret_value",
    # what transport plugins validate their sections with
    "Reader",
    "credential_url",
    # .env text
    "dotenv_values",
    "format_assignment",
    "merge_dotenv",
    "set_dotenv",
    # robota init
    "FileOutcome",
    "InitLockTimeout",
    "init_lock",
    "InitResult",
    "init_profile",
    "merge_config_text",
    "template_text",
    # agent detection
    "KNOWN_AGENTS",
    "AgentStatus",
    "KnownAgent",
    "detect_agents",
]
