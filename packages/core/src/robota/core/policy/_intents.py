"""What a message in a team group asks for: plain text, a built-in, a project intent, a command.

Resolution of one message (switch detection first, because it wins over everything):

1. a switch request (``_switch``) -> ``SwitchRequest`` (the group-rejected ``switch`` intent);
2. text not starting with the command prefix (``/``; Slack ``!``, whose clients keep ``/`` for
   their own commands) -> ``Ask``, the built-in public intent; a doubled prefix (``//x``) is the
   escape for text that starts with the prefix;
3. ``/<key> args``: a project intent's key -> ``ProjectIntent``; ``status``, ``help``, ``queue``
   -> ``Builtin``; ``ask`` -> ``Ask`` of the arguments; one of the engine's commands ->
   ``EngineCommand``; anything else -> ``UnknownIntent``, answered with the fixed "no such
   action" reply and never sent to the agent.

Names are matched exactly, case-insensitively (no prefixes or initialisms, unlike a personal
chat): a team's vocabulary is what ``/help`` lists, and a prefix that later becomes ambiguous
when the project adds an intent would change what a teammate's habit does.

Also here: an intent's prompt from its template (``{args}``, ``{project}``, ``{chat}``,
``{sender}``; ``{{`` and ``}}`` are literal braces), the tags a request carries to the
scheduler, and the permission mode a request's task starts with.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .._commands import COMMANDS
from ..config import PLACEHOLDER, IntentConfig, PermissionMode, TeamConfig
from ._permissions import COMMAND_INTENT_PREFIX, Role
from ._switch import is_switch_request

__all__ = [
    "Ask",
    "Builtin",
    "EngineCommand",
    "Parsed",
    "ProjectIntent",
    "SwitchRequest",
    "UnknownIntent",
    "intent_name",
    "parse_message",
    "permission_mode_for",
    "render_prompt",
    "request_tags",
]

_ENGINE_COMMANDS = frozenset(spec.name for spec in COMMANDS)
_TEAM_BUILTINS = ("status", "help", "queue")


@dataclass(frozen=True, slots=True)
class Ask:
    text: str


@dataclass(frozen=True, slots=True)
class Builtin:
    name: str
    """``status``, ``help`` or ``queue``: the team answers these itself, without an agent."""
    args: str


@dataclass(frozen=True, slots=True)
class SwitchRequest:
    pass


@dataclass(frozen=True, slots=True)
class ProjectIntent:
    intent: IntentConfig
    args: str


@dataclass(frozen=True, slots=True)
class EngineCommand:
    name: str
    args: str


@dataclass(frozen=True, slots=True)
class UnknownIntent:
    key: str


Parsed = Ask | Builtin | SwitchRequest | ProjectIntent | EngineCommand | UnknownIntent


def parse_message(text: str, team: TeamConfig, prefix: str = "/") -> Parsed:
    """What ``text`` in ``team``'s group is; ``prefix`` is the transport's command prefix."""
    if is_switch_request(text):
        return SwitchRequest()
    stripped = text.strip()
    if not stripped.startswith(prefix):
        return Ask(text)
    if stripped.startswith(prefix * 2):
        return Ask(stripped[len(prefix) :])
    parts = stripped[len(prefix) :].split(maxsplit=1)
    key = parts[0].lower() if parts else ""
    args = parts[1].strip() if len(parts) > 1 else ""
    intent = team.intents.get(key)
    if intent is not None:
        return ProjectIntent(intent, args)
    if key in _TEAM_BUILTINS:
        return Builtin(key, args)
    if key == "ask":
        return Ask(args)
    if key in _ENGINE_COMMANDS:
        return EngineCommand(key, args)
    return UnknownIntent(key)


def intent_name(parsed: Parsed) -> str:
    """The intent a parsed message invokes, as the permission check and the audit name it."""
    if isinstance(parsed, Ask):
        return "ask"
    if isinstance(parsed, Builtin):
        return parsed.name
    if isinstance(parsed, SwitchRequest):
        return "switch"
    if isinstance(parsed, ProjectIntent):
        return parsed.intent.key
    if isinstance(parsed, EngineCommand):
        return COMMAND_INTENT_PREFIX + parsed.name
    return "unknown"


def render_prompt(intent: IntentConfig, *, args: str, project: str, chat: str, sender: str) -> str:
    values = {"args": args, "project": project, "chat": chat, "sender": sender}

    def one(match: re.Match[str]) -> str:
        token = match.group(0)
        if token in ("{{", "}}"):
            return token[0]
        return values.get(match.group(1), token)

    return PLACEHOLDER.sub(one, intent.prompt)


def request_tags(parsed: Parsed, role: Role, team: TeamConfig) -> tuple[str, ...]:
    """The tags a request takes to the scheduler (empty: it takes no slot).

    A plain request reads the project when a member sends it and may write it when an admin
    does; a project intent carries its declared tags, or the sender's default when it declares
    none (an untagged intent must not run beside a write of the project unchecked).
    """
    default = (f"{'write' if role == 'admin' else 'read'}:{team.project}",)
    if isinstance(parsed, Ask):
        return default
    if isinstance(parsed, ProjectIntent):
        return parsed.intent.tags or default
    return ()


def permission_mode_for(role: Role, team: TeamConfig) -> PermissionMode | None:
    """A member's task runs in ``memberPermissionMode``; ``None``: the task default (admins)."""
    return team.member_permission_mode if role == "member" else None
