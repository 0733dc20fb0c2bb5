"""``teams.<name>``: a group chat as the front door of one project, validated.

The section's vocabulary lives here, below ``robota.core.policy`` (which interprets it): the
built-in intents, the chat commands that ask to switch the bot on or off, the resource-tag
kinds and the prompt placeholders. An intent key may not shadow any of them, nor one of the
engine's slash commands (``robota.core._commands``): ``/status`` in a team group must mean one
thing, whatever the project declares.

Checked at load, each as a ``ConfigError`` naming file, key, found and expected:

* the transport names a configured chat transport (one with a ``transports.<name>`` section);
  a locale or time zone left out is the transport's default, which its plugin declares
  (``team_defaults``, ``SetsTeamDefaults``) and the team carries (``TeamConfig.defaults``):
  configuration names no transport;
* no two teams share one chat of one transport;
* ``project`` is absolute (a team's tasks must not depend on where robota was started);
* intent keys are names, collide with nothing above, and their prompts use known placeholders
  only (``{arg}`` for ``{args}`` would otherwise reach the agent verbatim);
* tags are ``read:PATH`` / ``write:PATH`` (relative paths resolve against the project),
  ``mcp:NAME``, ``port:N``, ``net:push`` or ``exclusive:NAME``;
* ``intentPermissions`` names declared intents only; built-in intents' levels are fixed.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any, Protocol, runtime_checkable

from .._plugins import PluginError
from ._keys import INTENT_KEYS as _INTENT_TABLE
from ._keys import TEAM_KEYS as _TEAM_TABLE
from ._keys import key_names
from ._model import (
    INTENT_LEVELS,
    LOCALES,
    PERMISSION_MODES,
    IntentConfig,
    IntentLevel,
    TeamConfig,
    TeamDefaults,
)
from ._reader import Reader, describe, one_of
from ._transport_plugin import transport_plugin

__all__ = [
    "BUILTIN_INTENTS",
    "PLACEHOLDER",
    "PLACEHOLDERS",
    "SWITCH_COMMANDS",
    "TAG_KINDS",
    "TEAM_KEYS",
    "SetsTeamDefaults",
    "reserved_intent_keys",
    "team_defaults",
    "validate_teams",
]


@runtime_checkable
class SetsTeamDefaults(Protocol):
    """What a transport plugin (``robota.core.TransportPlugin``) declares, on its entry point
    object, of the teams on its platform: the locale and time zone a team gets when its section
    leaves them out (the people of a platform's teams mostly share one)."""

    name: str
    team_defaults: TeamDefaults


def team_defaults(transport: str) -> TeamDefaults:
    """The defaults the installed transport plugin ``transport`` declares; ``TeamDefaults()``
    for one that declares none, or is not installed or broken (its section says why)."""
    try:
        plugin = transport_plugin(transport)
    except (KeyError, PluginError):
        return TeamDefaults()
    return plugin.team_defaults if isinstance(plugin, SetsTeamDefaults) else TeamDefaults()


BUILTIN_INTENTS: tuple[str, ...] = ("ask", "status", "help", "queue", "switch")
"""``ask`` is plain text; ``switch`` is turning the bot on or off (never from the group)."""
SWITCH_COMMANDS: tuple[str, ...] = ("pause", "resume", "stop-bot")
"""Chat commands that ask to switch the bot: always the ``switch`` intent, never an action."""
TAG_KINDS = ("read", "write", "mcp", "port", "net", "exclusive")
PLACEHOLDERS = ("args", "project", "chat", "sender")
PLACEHOLDER = re.compile(r"\{\{|\}\}|\{([A-Za-z_][A-Za-z0-9_]*)\}")
"""A doubled brace (a literal one) or ``{name}``; the renderer and this check share it."""

TEAM_KEYS = key_names(_TEAM_TABLE)
"""The keys of ``teams.<name>``, described in ``_keys.TEAM_KEYS``."""
_INTENT_KEYS = key_names(_INTENT_TABLE)
_NAME = re.compile(r"[a-z0-9][a-z0-9_-]*\Z")


def reserved_intent_keys() -> dict[str, str]:
    """Every name an intent key may not take, with why (for the error)."""
    # Lazy, as is zoneinfo below: a configuration without teams is loaded before print mode's
    # agent is spawned, so what only teams need stays off that path.
    from .._commands import COMMANDS  # noqa: PLC0415

    reserved = dict.fromkeys(BUILTIN_INTENTS, "a built-in intent")
    reserved.update(dict.fromkeys(SWITCH_COMMANDS, "a bot switch command"))
    for spec in COMMANDS:
        reserved.setdefault(spec.name, "one of the engine's commands")
        if spec.initialism:
            reserved.setdefault(spec.initialism, f"the engine's short form of /{spec.name}")
    return reserved


def _text_list(reader: Reader, raw: object, path: str) -> frozenset[str]:
    if raw is None:
        return frozenset()
    if not isinstance(raw, list):
        raise reader.error(path, describe(raw), "a list of sender ids")
    found: set[str] = set()
    for index, item in enumerate(raw):
        value = reader.text(item, f"{path}[{index}]", required=True, expected="a sender id")
        assert value is not None
        found.add(value)
    return frozenset(found)


def _members(reader: Reader, raw: object, path: str) -> frozenset[str] | None:
    if raw is None or raw == "all":
        return None
    if isinstance(raw, str):
        raise reader.error(path, describe(raw), "all, or a list of sender ids")
    return _text_list(reader, raw, path)


def _tag(reader: Reader, raw: object, path: str, project: Path) -> str:
    expected = (
        "read:PATH, write:PATH, mcp:NAME, port:N, net:push or exclusive:NAME"
        " (relative paths are the project's)"
    )
    value = reader.text(raw, path, required=True, expected=expected)
    assert value is not None
    kind, colon, rest = value.partition(":")
    if not colon or kind not in TAG_KINDS or not rest.strip():
        raise reader.error(path, describe(value), expected)
    rest = rest.strip()
    if kind in ("read", "write"):
        resolved = Path(rest).expanduser()
        if not resolved.is_absolute():
            resolved = project / resolved
        return f"{kind}:{os.path.normpath(resolved)}"
    if kind == "port" and not (rest.isdigit() and 0 < int(rest) < 65536):
        raise reader.error(path, describe(value), "port:N with N from 1 to 65535")
    if kind == "net" and rest != "push":
        raise reader.error(path, describe(value), "net:push (the only net tag)")
    return f"{kind}:{rest}"


def _prompt(reader: Reader, raw: object, path: str) -> str:
    value = reader.text(raw, path, required=True, expected="the prompt text")
    assert value is not None
    for match in PLACEHOLDER.finditer(value):
        name = match.group(1)
        if name is not None and name not in PLACEHOLDERS:
            raise reader.error(
                path,
                f"the placeholder {{{name}}}",
                "placeholders " + ", ".join(f"{{{p}}}" for p in PLACEHOLDERS) + " ({{ for {)",
            )
    return value


def _intent(reader: Reader, key: object, raw: object, path: str, project: Path) -> IntentConfig:
    if not isinstance(key, str) or not _NAME.match(key):
        raise reader.error(
            path, f"the intent key {describe(key)}", "a name like [a-z0-9][a-z0-9-_]*"
        )
    reserved = reserved_intent_keys()
    if key in reserved:
        raise reader.error(
            f"{path}.{key}",
            f"the intent key {key!r}, which is {reserved[key]}",
            "a key that is not " + ", ".join(sorted(reserved)),
        )
    section = reader.section(raw, f"{path}.{key}", _INTENT_KEYS, nullable=False)
    raw_tags = section.get("tags")
    if raw_tags is not None and not isinstance(raw_tags, list):
        raise reader.error(f"{path}.{key}.tags", describe(raw_tags), "a list of tags")
    return IntentConfig(
        key=key,
        description=reader.text(
            section.get("description"), f"{path}.{key}.description", required=False
        )
        or "",
        prompt=_prompt(reader, section.get("prompt"), f"{path}.{key}.prompt"),
        tags=tuple(
            dict.fromkeys(
                _tag(reader, tag, f"{path}.{key}.tags[{index}]", project)
                for index, tag in enumerate(raw_tags or [])
            )
        ),
    )


def _levels(
    reader: Reader, raw: object, path: str, intents: Mapping[str, IntentConfig]
) -> dict[str, IntentLevel]:
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        raise reader.error(
            path, describe(raw), "a mapping of intent keys to " + one_of(INTENT_LEVELS)
        )
    levels: dict[str, IntentLevel] = {}
    for key, value in raw.items():
        if key in BUILTIN_INTENTS:
            raise reader.error(
                f"{path}.{key}",
                f"a level for the built-in intent {key!r}",
                "a declared intent's key (built-ins' levels are fixed)",
            )
        if key not in intents:
            declared = ", ".join(intents) or "none"
            raise reader.error(
                f"{path}",
                f"a level for {describe(key)}, which the team does not declare",
                f"a key of intents (declared: {declared})",
            )
        if value is None:
            raise reader.error(f"{path}.{key}", "nothing", one_of(INTENT_LEVELS))
        levels[key] = reader.choice(value, f"{path}.{key}", INTENT_LEVELS, "public")
    return levels


def _team(
    reader: Reader, name: str, raw: object, chat_sections: Mapping[str, object]
) -> TeamConfig:
    path = f"teams.{name}"
    section: Mapping[str, Any] = reader.section(raw, path, TEAM_KEYS, nullable=False)
    configured = (
        "the name of a configured chat transport: " + ", ".join(chat_sections)
        if chat_sections
        else "the name of a configured chat transport (there is no transports.<name> section)"
    )
    transport = reader.text(
        section.get("transport"), f"{path}.transport", required=True, expected=configured
    )
    assert transport is not None
    if transport not in chat_sections:
        raise reader.error(
            f"{path}.transport", f"{transport!r}, which has no transports section", configured
        )
    chat = reader.text(
        section.get("chat"), f"{path}.chat", required=True, expected="the group's chat id"
    )
    assert chat is not None
    project_text = reader.text(
        section.get("project"), f"{path}.project", required=True, expected="an absolute path"
    )
    assert project_text is not None
    project = Path(project_text).expanduser()
    if not project.is_absolute():
        raise reader.error(
            f"{path}.project",
            describe(project_text),
            "an absolute path (a team's tasks must not depend on where robota was started)",
        )
    project = Path(os.path.normpath(project))
    raw_intents = section.get("intents")
    if raw_intents is not None and not isinstance(raw_intents, Mapping):
        raise reader.error(
            f"{path}.intents",
            describe(raw_intents),
            "a mapping of intent keys to {description, prompt, tags}",
        )
    intents = {
        key: _intent(reader, key, value, f"{path}.intents", project)
        for key, value in (raw_intents or {}).items()
    }
    zone = reader.text(section.get("timeZone"), f"{path}.timeZone", required=False)
    if zone is not None:
        from zoneinfo import ZoneInfo, ZoneInfoNotFoundError  # noqa: PLC0415

        try:
            ZoneInfo(zone)
        except (ZoneInfoNotFoundError, ValueError) as error:
            raise reader.error(
                f"{path}.timeZone", describe(zone), "an IANA time zone like Asia/Shanghai"
            ) from error
    return TeamConfig(
        name=name,
        transport=transport,
        chat=chat,
        project=project,
        admins=_text_list(reader, section.get("admins"), f"{path}.admins"),
        members=_members(reader, section.get("members"), f"{path}.members"),
        locale=None
        if section.get("locale") is None
        else reader.choice(section.get("locale"), f"{path}.locale", LOCALES, LOCALES[0]),
        slots=_number(reader, section.get("slots"), f"{path}.slots", (1, 64), 3),
        queue_limit=_number(reader, section.get("queueLimit"), f"{path}.queueLimit", (0, 1000), 10),
        max_turn_minutes=_number(
            reader, section.get("maxTurnMinutes"), f"{path}.maxTurnMinutes", (1, 1440), 30
        ),
        member_permission_mode=reader.choice(
            section.get("memberPermissionMode"),
            f"{path}.memberPermissionMode",
            PERMISSION_MODES,
            "plan",
        ),
        intents=MappingProxyType(intents),
        intent_permissions=MappingProxyType(
            _levels(reader, section.get("intentPermissions"), f"{path}.intentPermissions", intents)
        ),
        respond_to_all_messages=reader.boolean(
            section.get("respondToAllMessages"), f"{path}.respondToAllMessages", False
        ),
        time_zone=zone,
        # The plugin is loaded already: it validated the transport's section.
        defaults=team_defaults(transport),
    )


def _number(reader: Reader, raw: object, path: str, bounds: tuple[int, int], default: int) -> int:
    return default if raw is None else reader.integer(raw, path, *bounds)


def validate_teams(
    reader: Reader, raw: object, chat_sections: Mapping[str, object]
) -> dict[str, TeamConfig]:
    """``teams`` of config.yaml; ``chat_sections`` are the configured chat transports."""
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        raise reader.error("teams", describe(raw), "a mapping of team names to their settings")
    teams: dict[str, TeamConfig] = {}
    chats: dict[tuple[str, str], str] = {}
    for name, value in raw.items():
        if not isinstance(name, str) or not _NAME.match(name):
            raise reader.error(
                "teams", f"the team name {describe(name)}", "a name like [a-z0-9][a-z0-9-_]*"
            )
        team = _team(reader, name, value, chat_sections)
        other = chats.setdefault((team.transport, team.chat), name)
        if other != name:
            raise reader.error(
                f"teams.{name}.chat",
                f"the chat of team {other!r} on {team.transport}",
                "a chat no other team uses (one group, one project)",
            )
        teams[name] = team
    return teams
