"""A workspace's own robota settings: ``.robota/config.yaml``, applied only when trusted.

    defaults:
      agent: claude               # one of the profile's agents
      permissionMode: acceptEdits # default | acceptEdits | bypassPermissions | plan
    agents:
      codex:
        env:
          RUST_LOG: info          # literal text only

Validated like the profile's file (``ConfigError`` names the file, the key, what was found
and what was expected). The environment overrides must not become a way to move a secret
into an agent: a secret-named variable (``looks_secret``), one of robota's own (``ROBOTA*``)
and any ``${NAME}`` reference (which would copy a variable of robota's environment under
another name) are refused; values are literal. The merged environment is still the runtimes'
to scrub (the chat transports' reserved names are theirs, never set from here).

The file is opened without following links (``O_NOFOLLOW``, and ``.robota`` itself must be a
directory, not a link): a workspace cannot point its settings elsewhere. Whether to load it at
all is the caller's decision (``robota.core.trust``): an untrusted workspace's file is never
read.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import MappingProxyType

from .._errors import ConfigError
from .._plugins import McpServer
from ._keys import PROJECT_AGENT_KEYS, PROJECT_DEFAULTS_KEYS, PROJECT_TOP_LEVEL_KEYS, key_names
from ._load import parse_yaml
from ._mcp_servers import validate_mcp_servers
from ._model import PERMISSION_MODES, Config, PermissionMode
from ._reader import Reader, describe, one_of
from ._secrets import looks_secret

__all__ = ["ProjectConfig", "apply_project", "load_project_config", "parse_project_config"]

PROJECT_FILE = Path(".robota") / "config.yaml"
MAX_PROJECT_BYTES = 256 * 1024
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_RESERVED = re.compile(r"^ROBOTA", re.IGNORECASE)
_EMPTY: Mapping[str, Mapping[str, str]] = MappingProxyType({})
_NO_SERVERS: Mapping[str, McpServer] = MappingProxyType({})


@dataclass(frozen=True, slots=True)
class ProjectConfig:
    file: Path
    agent: str | None = None
    permission_mode: PermissionMode | None = None
    env: Mapping[str, Mapping[str, str]] = field(default_factory=lambda: _EMPTY)
    """``agents.<name>.env`` overrides, by agent name."""
    mcp_servers: Mapping[str, McpServer] = field(default_factory=lambda: _NO_SERVERS)
    """``mcpServers``: literal only, on top of the profile's."""


def _mapping(file: str, value: object, path: str, allowed: tuple[str, ...]) -> Mapping[str, object]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise ConfigError(file, path, describe(value), "a mapping")
    for key in value:
        if not isinstance(key, str) or key not in allowed:
            raise ConfigError(file, path, f"the key {describe(key)}", one_of(allowed))
    return value


def _env(file: str, agent: str, raw: object) -> dict[str, str]:
    path = f"agents.{agent}.env"
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        raise ConfigError(file, path, describe(raw), "a mapping of NAME: value")
    env: dict[str, str] = {}
    for name, raw_value in raw.items():
        if not isinstance(name, str) or not _ENV_NAME.match(name):
            raise ConfigError(file, path, f"the name {describe(name)}", "NAME: value")
        where = f"{path}.{name}"
        if looks_secret(name):
            raise ConfigError(
                file,
                where,
                "a secret-named variable",
                "no credentials in a project's settings (put them in the profile's .env)",
            )
        if _RESERVED.match(name):
            raise ConfigError(
                file,
                where,
                f"the reserved name {name}",
                "a name not starting ROBOTA (robota's own)",
            )
        value = raw_value
        if isinstance(value, int | float) and not isinstance(value, bool):
            value = str(value)
        if not isinstance(value, str):
            raise ConfigError(file, where, describe(value), "text")
        if "${" in value:
            raise ConfigError(
                file,
                where,
                "a ${NAME} reference",
                "literal text (no expansion in project settings)",
            )
        env[name] = value
    return env


def parse_project_config(
    data: object, *, file: Path, agents: Mapping[str, object]
) -> ProjectConfig:
    """Validate the loaded YAML of a project's file against the profile's ``agents``."""
    name = str(file)
    if data is None:
        return ProjectConfig(file)
    if isinstance(data, Mapping) and "mesh" in data:
        # Only the profile's own settings may open the mesh: a repository that could would
        # expose this machine to the user's other devices (docs/architecture.md §14).
        raise ConfigError(
            name,
            "mesh",
            "a mesh section",
            "no mesh settings in a project (only the profile's config.yaml can turn the mesh on)",
        )
    top = _mapping(name, data, "(top level)", key_names(PROJECT_TOP_LEVEL_KEYS))
    defaults = _mapping(name, top.get("defaults"), "defaults", key_names(PROJECT_DEFAULTS_KEYS))
    configured = "one of the configured agents: " + ", ".join(agents)
    agent = defaults.get("agent")
    if agent is not None and (not isinstance(agent, str) or agent not in agents):
        raise ConfigError(name, "defaults.agent", describe(agent), configured)
    mode = defaults.get("permissionMode")
    if mode is not None and mode not in PERMISSION_MODES:
        raise ConfigError(name, "defaults.permissionMode", describe(mode), one_of(PERMISSION_MODES))
    raw_agents = top.get("agents")
    env: dict[str, Mapping[str, str]] = {}
    if raw_agents is not None:
        if not isinstance(raw_agents, Mapping):
            raise ConfigError(name, "agents", describe(raw_agents), "a mapping of agent names")
        for agent_name, section in raw_agents.items():
            if agent_name not in agents:
                raise ConfigError(name, "agents", f"the agent {describe(agent_name)}", configured)
            fields = _mapping(name, section, f"agents.{agent_name}", key_names(PROJECT_AGENT_KEYS))
            env[agent_name] = MappingProxyType(_env(name, agent_name, fields.get("env")))
    reader = Reader(name, {}, file)  # literal values: nothing of robota's environment
    servers = validate_mcp_servers(reader, top.get("mcpServers"), "mcpServers", literal=True)
    return ProjectConfig(
        file,
        agent=agent,
        permission_mode=mode,
        env=MappingProxyType(env),
        mcp_servers=MappingProxyType(servers),
    )


def _read(path: Path) -> bytes | None:
    """The file's bytes, ``None`` when there is none; never through a link."""
    name = str(path)
    try:
        dot = os.lstat(path.parent)
    except FileNotFoundError:
        return None
    if not stat.S_ISDIR(dot.st_mode):
        raise ConfigError(
            name, "(file)", f"{path.parent} is not a directory (a link?)", "a directory"
        )
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        return None
    except OSError as error:
        found = "a link" if path.is_symlink() else (error.strerror or "unreadable")
        raise ConfigError(name, "(file)", found, "a readable regular file") from None
    with os.fdopen(fd, "rb") as file:
        info = os.fstat(file.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise ConfigError(name, "(file)", "not a regular file", "a regular file")
        data = file.read(MAX_PROJECT_BYTES + 1)
    if len(data) > MAX_PROJECT_BYTES:
        raise ConfigError(name, "(file)", "more than 256 KiB", "a small settings file")
    return data


def load_project_config(workspace: Path, config: Config) -> ProjectConfig | None:
    """The workspace's settings, ``None`` when it has none; ``ConfigError`` when invalid."""
    path = workspace / PROJECT_FILE
    data = _read(path)
    if data is None:
        return None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise ConfigError(
            str(path), f"byte {error.start}", "bytes that are not UTF-8", "UTF-8 text"
        ) from None
    return parse_project_config(parse_yaml(text, file=str(path)), file=path, agents=config.agents)


def apply_project(config: Config, project: ProjectConfig | None) -> Config:
    """``config`` with the project's defaults and agent environment overrides on top."""
    if project is None:
        return config
    defaults = config.defaults
    if project.agent is not None:
        defaults = replace(defaults, agent=project.agent)
    if project.permission_mode is not None:
        defaults = replace(defaults, permission_mode=project.permission_mode)
    agents = {
        name: replace(agent, env=MappingProxyType({**agent.env, **project.env[name]}))
        if name in project.env
        else agent
        for name, agent in config.agents.items()
    }
    servers = MappingProxyType({**config.mcp_servers, **project.mcp_servers})
    return replace(config, defaults=defaults, agents=MappingProxyType(agents), mcp_servers=servers)
