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
from typing import Any, Literal

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
    "PermissionMode",
    "StorageConfig",
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
    secrets: frozenset[str] = field(default=frozenset(), repr=False)
    """Every value that must never reach a log line: .env values and secret-named fields."""

    @property
    def default_agent(self) -> AgentConfig:
        return self.agents[self.defaults.agent]
