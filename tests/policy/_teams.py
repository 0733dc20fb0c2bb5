"""A team config for the policy's tests, built directly (config validation has its own tests)."""

from __future__ import annotations

from pathlib import Path
from types import MappingProxyType

from robota.core.config import IntentConfig, IntentLevel, TeamConfig, team_defaults

PROJECT = Path("/srv/web")


def make_team(
    *,
    intents: tuple[IntentConfig, ...] = (),
    levels: dict[str, IntentLevel] | None = None,
    admins: frozenset[str] = frozenset({"ou_admin"}),
    members: frozenset[str] | None = None,
    transport: str = "feishu",
) -> TeamConfig:
    return TeamConfig(
        name="web",
        transport=transport,
        chat="oc_group",
        project=PROJECT,
        admins=admins,
        members=members,
        intents=MappingProxyType({intent.key: intent for intent in intents}),
        intent_permissions=MappingProxyType(levels or {}),
        defaults=team_defaults(transport),  # as config validation sets it: the plugin's
    )


def intent(key: str, prompt: str = "do {args}", tags: tuple[str, ...] = ()) -> IntentConfig:
    return IntentConfig(key=key, description=f"the {key} action", prompt=prompt, tags=tags)
