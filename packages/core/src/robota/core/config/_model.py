"""The validated configuration: small frozen dataclasses, one per config.yaml section.

Every path is absolute and every ``${NAME}`` is expanded by the time a value lands here, so code
that reads a ``Config`` never consults the environment or the current directory again.
Fields that hold credentials are left out of ``repr`` so that a logged or printed config does
not carry them.

Two sections belong to plugins, so core names no value of them: ``agents.<name>.kind`` is the
name of an installed runtime plugin, and each chat transport's settings are whatever object its
transport plugin's ``validate`` returns (``Transports.chat``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from .._plugins import McpServer

__all__ = [
    "LOG_LEVELS",
    "PERMISSION_MODES",
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
    "INTENT_LEVELS",
    "LOCALES",
    "IntentConfig",
    "IntentLevel",
    "Locale",
    "TeamConfig",
    "TeamDefaults",
    "Transports",
    "WsSettings",
]

AgentKind = str
"""The name of an installed runtime plugin (``robota.runtimes`` entry point): robota ships
``app-server`` and ``acp``; a third-party distribution may add more."""

PermissionMode = Literal["default", "acceptEdits", "bypassPermissions", "plan"]
PERMISSION_MODES: tuple[PermissionMode, ...] = (
    "default",
    "acceptEdits",
    "bypassPermissions",
    "plan",
)

LogLevel = Literal["debug", "info", "warning", "error"]
LOG_LEVELS: tuple[LogLevel, ...] = ("debug", "info", "warning", "error")

_EMPTY: Mapping[str, str] = MappingProxyType({})
_NO_SERVERS: Mapping[str, McpServer] = MappingProxyType({})

Locale = Literal["zh-CN", "en-US"]
LOCALES: tuple[Locale, ...] = ("zh-CN", "en-US")


IntentLevel = Literal["public", "admin", "admin-confirm"]
"""Who may run a project intent: everyone, admins, or admins after a confirmation."""
INTENT_LEVELS: tuple[IntentLevel, ...] = ("public", "admin", "admin-confirm")


@dataclass(frozen=True, slots=True)
class AgentConfig:
    """How to start one coding agent."""

    name: str
    kind: AgentKind
    command: str
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=lambda: _EMPTY, repr=False)
    """Added to robota's own environment when the agent starts; often holds API keys."""
    title: str = ""
    mcp_servers: Mapping[str, McpServer] = field(default_factory=lambda: _NO_SERVERS)
    """``agents.<name>.mcpServers``: on top of the top-level ones, for this agent only."""


@dataclass(frozen=True, slots=True)
class Defaults:
    """What a new conversation starts with."""

    agent: str
    cwd: Path
    permission_mode: PermissionMode = "default"


@dataclass(frozen=True, slots=True)
class ConsoleSettings:
    enabled: bool = True


@dataclass(frozen=True, slots=True)
class WsSettings:
    """The loopback WebSocket host (a front end of robota's own, not a chat plugin)."""

    port: int
    host: str = "127.0.0.1"


_NO_CHAT: Mapping[str, object] = MappingProxyType({})


@dataclass(frozen=True, slots=True)
class Transports:
    """Where conversations come from. A chat transport is on when its section is present.

    ``console`` and ``ws`` are robota's own front ends; every other ``transports.<name>``
    section belongs to the transport plugin of that name, and ``chat`` holds what its
    ``validate`` made of it. For an installed plugin, ``config.transports.<name>`` reads the
    same as ``chat.get(name)``: its settings, or ``None`` when the file has no section for it.
    """

    console: ConsoleSettings = ConsoleSettings()
    ws: WsSettings | None = None
    chat: Mapping[str, object] = field(default_factory=lambda: _NO_CHAT)
    """Each configured chat transport's settings, by plugin name, in file order."""
    installed: frozenset[str] = frozenset()
    """The name of every installed transport plugin, configured or not."""

    def get(self, name: str) -> object | None:
        """The settings of chat transport ``name``, or ``None`` when it has no section."""
        return self.chat.get(name)

    def __getattr__(self, name: str) -> Any:
        # Only names that are not fields reach here; a slot still unset (during copy or
        # unpickling) must stay an AttributeError, not recurse into ``chat``.
        if name.startswith("_") or name in ("console", "ws", "chat", "installed"):
            raise AttributeError(name)
        if name in self.chat:
            return self.chat[name]
        if name in self.installed:
            return None
        raise AttributeError(f"no transport plugin {name!r} is installed")


@dataclass(frozen=True, slots=True)
class IntentConfig:
    """One of a team project's named actions (``/<key> args`` in the group)."""

    key: str
    description: str
    prompt: str
    """May use ``{args}``, ``{project}``, ``{chat}``, ``{sender}``; ``{{`` is a literal brace."""
    tags: tuple[str, ...] = ()
    """Resource tags for the team's scheduler; ``read:``/``write:`` paths are absolute."""


_NO_INTENTS: Mapping[str, IntentConfig] = MappingProxyType({})
_NO_LEVELS: Mapping[str, IntentLevel] = MappingProxyType({})


@dataclass(frozen=True, slots=True)
class TeamDefaults:
    """What a team gets for the ``locale`` and ``timeZone`` its section leaves out: its
    transport's, which the transport plugin declares (``team_defaults``, ``SetsTeamDefaults``);
    these for a plugin that declares none."""

    locale: Locale = "en-US"
    time_zone: str = "UTC"
    """An IANA name."""


@dataclass(frozen=True, slots=True)
class TeamConfig:
    """``teams.<name>``: one group chat as the front door of one project."""

    name: str
    transport: str
    """The chat transport plugin the group is on (it has a ``transports.<name>`` section)."""
    chat: str
    """The group's chat id on ``transport``."""
    project: Path
    """The working directory of every task of the team (absolute)."""
    admins: frozenset[str] = frozenset()
    """Sender ids; the transport's owner is an admin as well, whatever this says."""
    members: frozenset[str] | None = None
    """``None`` is ``members: all``; otherwise only these senders (and admins) are heard."""
    locale: Locale | None = None
    """``None``: the transport's default (``defaults``, ``robota.core.policy.team_locale``)."""
    slots: int = 3
    queue_limit: int = 10
    max_turn_minutes: int = 30
    member_permission_mode: PermissionMode = "plan"
    intents: Mapping[str, IntentConfig] = field(default_factory=lambda: _NO_INTENTS)
    """In file order."""
    intent_permissions: Mapping[str, IntentLevel] = field(default_factory=lambda: _NO_LEVELS)
    respond_to_all_messages: bool = False
    """``False``: only messages that mention the bot are requests."""
    time_zone: str | None = None
    """For human-facing times in the group (an IANA name); ``None``: the transport's default
    (``defaults``, ``robota.core.policy.team_time_zone``)."""
    defaults: TeamDefaults = TeamDefaults()
    """The transport plugin's defaults for a locale and a time zone left out."""


_NO_TEAMS: Mapping[str, TeamConfig] = MappingProxyType({})


@dataclass(frozen=True, slots=True)
class MeshPeer:
    """``mesh.peers.<device id>``: a paired device's name and where to dial it."""

    name: str
    address: str | None = None
    """``HOST:PORT``; ``None``: this device does not dial it (it dials this one)."""


_NO_PEERS: Mapping[str, MeshPeer] = MappingProxyType({})


@dataclass(frozen=True, slots=True)
class MeshSettings:
    """``mesh``: the device mesh, off unless the profile's own file turns it on."""

    enabled: bool = False
    name: str = ""
    """This device's name (validation fills in the host name when the file has none)."""
    listen: tuple[str, ...] = ()
    """``HOST:PORT`` addresses to accept links on; empty: dial only."""
    peers: Mapping[str, MeshPeer] = field(default_factory=lambda: _NO_PEERS)
    """By device id (its printed form), in file order."""
    list_lifetime_seconds: int = 86400
    pairing_ttl_seconds: int = 300


@dataclass(frozen=True, slots=True)
class StorageConfig:
    sqlite_path: Path


@dataclass(frozen=True, slots=True)
class LoggingConfig:
    level: LogLevel
    path: Path


@dataclass(frozen=True, slots=True)
class Config:
    """A validated config.yaml together with the profile values it was read with."""

    file: Path
    agents: Mapping[str, AgentConfig]
    """In file order."""
    defaults: Defaults
    transports: Transports
    storage: StorageConfig
    logging: LoggingConfig
    teams: Mapping[str, TeamConfig] = field(default_factory=lambda: _NO_TEAMS)
    """``teams.<name>``, in file order."""
    mcp_servers: Mapping[str, McpServer] = field(default_factory=lambda: _NO_SERVERS)
    """``mcpServers``: offered to every agent's sessions (``McpServer``), in file order."""
    mesh: MeshSettings = MeshSettings()
    """``mesh``: the device mesh's settings (off by default)."""
    secrets: frozenset[str] = field(default=frozenset(), repr=False)
    """Every value that must never reach a log line: .env values and secret-named fields."""

    @property
    def default_agent(self) -> AgentConfig:
        return self.agents[self.defaults.agent]
