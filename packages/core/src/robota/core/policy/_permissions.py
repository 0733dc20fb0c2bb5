"""Who may do what in a team group: role x level -> decision, before anything reaches an agent.

The decision table (cc-bot's permission checker, exactly):

=================  ==============  =================
level \\ role       admin           member
=================  ==============  =================
public             allow           allow
admin              allow           reject
admin-confirm      confirm-needed  reject
group-rejected     group-rejected  group-rejected
=================  ==============  =================

Role: a sender is an admin when the team's ``admins`` list it or it is the transport's owner
(read on every call, never cached, so an edited config takes effect with the next message); a
member when the team's ``members`` are ``all`` or list it; otherwise the sender is not heard
(``None``), as non-owners are not heard outside teams.

Level: the built-ins ``ask``, ``status``, ``help``, ``queue`` are public and ``switch`` (the bot
on or off) is group-rejected, none overridable; a project intent has the level its
``intentPermissions`` entry declares, else the name heuristic's: admin when the key matches
``RISKY_NAME`` or ends ``-deploy`` / ``-publish`` / ``-prod``, public otherwise. Declaring a
risky name ``public`` opens it to members on purpose. The engine's other chat commands
(``/new``, ``/permissions``, ``/model`` ...) change a task's settings, so in a team group they
are admin-level: a member's plain request must not leave ``memberPermissionMode`` by a command.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from ..config import BUILTIN_INTENTS, TeamConfig

__all__ = [
    "COMMAND_INTENT_PREFIX",
    "DECISIONS",
    "RISKY_NAME",
    "RISKY_SUFFIXES",
    "Check",
    "Decision",
    "Level",
    "Role",
    "check",
    "decide",
    "heuristic_level",
    "level_of",
    "role_of",
]

Role = Literal["admin", "member"]
Level = Literal["public", "admin", "admin-confirm", "group-rejected"]
Decision = Literal["allow", "reject", "confirm-needed", "group-rejected"]

RISKY_NAME = re.compile(
    r"^(deploy|publish|release|push_to_|drop_|delete_|remove_|reset_|restart_|kill_|purge_|prod)"
)
RISKY_SUFFIXES = ("-deploy", "-publish", "-prod")
COMMAND_INTENT_PREFIX = "command:"
"""How an engine command is named as an intent (``command:new``), in checks and the audit."""

DECISIONS: Mapping[tuple[Level, Role], Decision] = {
    ("public", "admin"): "allow",
    ("public", "member"): "allow",
    ("admin", "admin"): "allow",
    ("admin", "member"): "reject",
    ("admin-confirm", "admin"): "confirm-needed",
    ("admin-confirm", "member"): "reject",
    ("group-rejected", "admin"): "group-rejected",
    ("group-rejected", "member"): "group-rejected",
}

_BUILTIN_LEVELS: Mapping[str, Level] = {
    name: ("group-rejected" if name == "switch" else "public") for name in BUILTIN_INTENTS
}


@dataclass(frozen=True, slots=True)
class Check:
    """A permission decision with what it was made of (all of it goes to the audit)."""

    decision: Decision
    role: Role
    level: Level
    intent: str


def decide(role: Role, level: Level) -> Decision:
    return DECISIONS[level, role]


def role_of(sender: str, team: TeamConfig, owner: str | None) -> Role | None:
    """``owner``: the transport's owner, always an admin; ``None`` when it has none."""
    if sender == owner or sender in team.admins:
        return "admin"
    if team.members is None or sender in team.members:
        return "member"
    return None


def heuristic_level(key: str) -> Level:
    """The level of a project intent without an ``intentPermissions`` entry."""
    if RISKY_NAME.match(key) or key.endswith(RISKY_SUFFIXES):
        return "admin"
    return "public"


def level_of(intent: str, team: TeamConfig) -> Level:
    """The level of ``intent``: a built-in, ``command:<name>``, or a project intent's key."""
    builtin = _BUILTIN_LEVELS.get(intent)
    if builtin is not None:
        return builtin
    if intent.startswith(COMMAND_INTENT_PREFIX):
        return "admin"
    declared = team.intent_permissions.get(intent)
    return declared if declared is not None else heuristic_level(intent)


def check(sender: str, intent: str, team: TeamConfig, owner: str | None) -> Check | None:
    """The decision for ``sender`` invoking ``intent``; ``None`` for a sender not heard."""
    role = role_of(sender, team, owner)
    if role is None:
        return None
    level = level_of(intent, team)
    return Check(decide(role, level), role, level, intent)
