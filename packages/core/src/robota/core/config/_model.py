"""The validated configuration: small frozen dataclasses, one per config.yaml section.

Every path is absolute and every ``${NAME}`` is expanded by the time a value lands here, so code
that reads a ``Config`` never consults the environment or the current directory again.
Fields that hold credentials are left out of ``repr`` so that a logged or printed config does
not carry them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Literal

__all__ = [
    "AGENT_KINDS",
    "LOG_LEVELS",
    "PERMISSION_MODES",
    "THINKING_CARD_LAYOUTS",
    "AgentConfig",
    "AgentKind",
    "Config",
    "ConsoleSettings",
    "Defaults",
    "FeishuSettings",
    "LogLevel",
    "LoggingConfig",
    "PermissionMode",
    "SlackSettings",
    "StorageConfig",
    "ThinkingCardLayout",
    "Transports",
    "WsSettings",
]

AgentKind = Literal["app-server", "acp"]
AGENT_KINDS: tuple[AgentKind, ...] = ("app-server", "acp")

PermissionMode = Literal["default", "acceptEdits", "bypassPermissions", "plan"]
PERMISSION_MODES: tuple[PermissionMode, ...] = (
    "default",
    "acceptEdits",
    "bypassPermissions",
    "plan",
)

ThinkingCardLayout = Literal["grouped", "timeline"]
THINKING_CARD_LAYOUTS: tuple[ThinkingCardLayout, ...] = ("grouped", "timeline")

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
class FeishuSettings:
    app_id: str
    app_secret: str = field(repr=False)
    user_open_id: str | None
    """The owner; required while ``respond_to_owner_only`` is on."""
    respond_to_owner_only: bool = True
    respond_to_all_group_messages: bool = False
    thinking_card_layout: ThinkingCardLayout = "grouped"


@dataclass(frozen=True, slots=True)
class SlackSettings:
    bot_token: str = field(repr=False)
    app_token: str = field(repr=False)
    user_id: str
    """The owner: the Slack user robota answers."""
    signing_secret: str | None = field(default=None, repr=False)


@dataclass(frozen=True, slots=True)
class WsSettings:
    port: int
    host: str = "127.0.0.1"


@dataclass(frozen=True, slots=True)
class Transports:
    """Where conversations come from. A chat transport is on when its section is present."""

    console: ConsoleSettings = ConsoleSettings()
    feishu: FeishuSettings | None = None
    slack: SlackSettings | None = None
    ws: WsSettings | None = None


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
