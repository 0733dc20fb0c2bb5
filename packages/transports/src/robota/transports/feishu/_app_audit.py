"""What the bot needs of its Feishu/Lark app, and what a published app version lacks; pure.

``REQUIREMENTS`` is the one list: the one-click registration asks for it (``addons_manifest``)
and ``assess`` checks the published version against it. *Core* requirements are what basic
messaging cannot do without; *optional* ones each enable one feature, and a missing one only
turns that feature off. ``im:message.group_msg`` is core only when the bot answers every group
message (``respondToAllGroupMessages``), and Feishu cannot add it through one-click
registration, so it is never in the manifest: the report links to the console page that adds
it.

Scopes are read from the version's ``scopes[].scope``, events from ``events`` and
``event_infos[].event_type``; callbacks are not part of a version, so they are read from the
application's ``callback.subscribed_callbacks`` when the platform includes it and reported as
unverified otherwise (never as missing on a guess).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal
from urllib.parse import quote

__all__ = [
    "REQUIREMENTS",
    "AppAudit",
    "Requirement",
    "addons_manifest",
    "assess",
    "audit_failed",
    "requirements",
    "scope_url",
]

Kind = Literal["scope", "event", "callback"]


@dataclass(frozen=True, slots=True)
class Requirement:
    kind: Kind
    name: str
    feature: str
    """What works only with it, in words for the report."""
    core: bool
    equivalents: tuple[str, ...] = ()
    """Broader grants that cover it too."""
    one_click: bool = True
    """Whether one-click registration can add it."""

    def met_by(self, granted: frozenset[str]) -> bool:
        return self.name in granted or any(name in granted for name in self.equivalents)


GROUP_MESSAGES = Requirement(
    "scope",
    "im:message.group_msg",
    "every message in groups with the bot, not only @mentions (respondToAllGroupMessages)",
    core=True,
    one_click=False,
)

REQUIREMENTS: tuple[Requirement, ...] = (
    Requirement("event", "im.message.receive_v1", "receiving messages", core=True),
    Requirement(
        "scope",
        "im:message:send_as_bot",
        "sending replies and cards",
        core=True,
        equivalents=("im:message",),
    ),
    Requirement(
        "scope",
        "application:application:self_manage",
        "this check of the published app version",
        core=True,
    ),
    GROUP_MESSAGES,
    Requirement(
        "scope",
        "im:chat:create",
        "/newgroup and /forkgroup",
        core=False,
        equivalents=("im:chat",),
    ),
    Requirement(
        "scope",
        "im:chat:read",
        "reading group metadata",
        core=False,
        equivalents=("im:chat", "im:chat:readonly"),
    ),
    Requirement("event", "im.chat.updated_v1", "group-title synchronization", core=False),
    Requirement(
        "scope",
        "im:message.reactions:write_only",
        "processing-status reactions",
        core=False,
    ),
    Requirement(
        "scope",
        "im:message:readonly",
        "reading the images and files of incoming messages",
        core=False,
        equivalents=("im:message",),
    ),
    Requirement("scope", "im:resource", "incoming and outgoing images and files", core=False),
    Requirement(
        "callback",
        "card.action.trigger",
        "card buttons (approvals, Stop, Reset, paging)",
        core=False,
    ),
)


def requirements(*, all_group_messages: bool) -> tuple[Requirement, ...]:
    """The requirements in force: ``im:message.group_msg`` only for all-group-message mode."""
    return tuple(r for r in REQUIREMENTS if r is not GROUP_MESSAGES or all_group_messages)


def addons_manifest() -> dict[str, object]:
    """The ``addons`` JSON of the registration link: everything one-click can add."""
    wanted = [r for r in REQUIREMENTS if r.one_click]
    return {
        "scopes": {"tenant": [r.name for r in wanted if r.kind == "scope"]},
        "events": {"items": {"tenant": [r.name for r in wanted if r.kind == "event"]}},
        "callbacks": {"items": [r.name for r in wanted if r.kind == "callback"]},
    }


def scope_url(console: str, app_id: str, scopes: Iterable[str]) -> str:
    """The developer console's permission page of the app, filtered to ``scopes``."""
    query = quote(",".join(scopes), safe="")
    return f"{console}/app/{app_id}/auth?q={query}&op_from=openapi&token_type=tenant"


@dataclass(frozen=True, slots=True)
class AppAudit:
    """What the published version of the app lacks, and where to fix it."""

    app_id: str
    version: str | None
    """The published version's id; ``None`` when nothing is published (or the check failed)."""
    missing_core: tuple[Requirement, ...] = ()
    missing_optional: tuple[Requirement, ...] = ()
    unverified: tuple[Requirement, ...] = ()
    fix_urls: tuple[str, ...] = ()
    error: str | None = None
    """Why the check could not be made; the requirements are then unknown, not missing."""

    @property
    def complete(self) -> bool:
        return self.error is None and not self.missing_core and not self.missing_optional


def _strings(items: object, key: str | None = None) -> set[str]:
    found: set[str] = set()
    if not isinstance(items, Sequence) or isinstance(items, str):
        return found
    for item in items:
        value = item.get(key) if key is not None and isinstance(item, Mapping) else item
        if isinstance(value, str) and value:
            found.add(value)
    return found


def _fix_urls(console: str, app_id: str, missing: Sequence[Requirement]) -> tuple[str, ...]:
    urls: list[str] = []
    scopes = [r.name for r in missing if r.kind == "scope"]
    if scopes:
        urls.append(scope_url(console, app_id, scopes))
    if any(r.kind != "scope" for r in missing):
        urls.append(f"{console}/app/{app_id}/event")
    return tuple(urls)


def assess(
    app: Mapping[str, object],
    version: Mapping[str, object] | None,
    *,
    console: str,
    all_group_messages: bool,
) -> AppAudit:
    """Check the application (``data.app``) and its published version (``data.app_version``,
    ``None`` when nothing is published) against the requirements in force."""
    app_id = app.get("app_id")
    app_id = app_id if isinstance(app_id, str) else ""
    wanted = requirements(all_group_messages=all_group_messages)
    if version is None:
        return AppAudit(
            app_id,
            None,
            missing_core=tuple(r for r in wanted if r.core),
            missing_optional=tuple(r for r in wanted if not r.core),
            fix_urls=(f"{console}/app/{app_id}",),
            error=None,
        )
    granted = {
        "scope": frozenset(_strings(version.get("scopes"), "scope")),
        "event": frozenset(
            _strings(version.get("events")) | _strings(version.get("event_infos"), "event_type")
        ),
    }
    callback = app.get("callback")
    if isinstance(callback, Mapping) and "subscribed_callbacks" in callback:
        granted["callback"] = frozenset(_strings(callback.get("subscribed_callbacks")))
    missing = [r for r in wanted if r.kind in granted and not r.met_by(granted[r.kind])]
    version_id = version.get("version_id")
    return AppAudit(
        app_id,
        str(version_id) if isinstance(version_id, str | int) else None,
        missing_core=tuple(r for r in missing if r.core),
        missing_optional=tuple(r for r in missing if not r.core),
        unverified=tuple(r for r in wanted if r.kind not in granted),
        fix_urls=_fix_urls(console, app_id, missing),
    )


def audit_failed(app_id: str, console: str, reason: str, *, permission: bool) -> AppAudit:
    """The check itself failed; ``permission``: because the app may not read itself, which
    its own scope fixes."""
    urls = (scope_url(console, app_id, ["application:application:self_manage"]),)
    return AppAudit(app_id, None, fix_urls=urls if permission else (), error=reason)
