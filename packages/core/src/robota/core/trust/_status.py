"""What trusting a workspace would enable, from file-system metadata only.

``preview`` never opens a file of the workspace and never follows a link: it ``lstat``s the
project configuration (``.robota/config.yaml``) and lists ``.robota`` with
``os.scandir`` (``follow_symlinks=False``). A link where the configuration should be is
reported and is ignored even once trusted (the loader opens it with ``O_NOFOLLOW``).

``decide`` is the one decision: a workspace runs Restricted unless the store says trusted
(an unreadable store says nothing: Restricted, fail closed).

Stdlib only.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

from ._store import TrustState, TrustStore, TrustStoreUnreadable, workspace_root

__all__ = [
    "PROJECT_CONFIG",
    "TrustDecision",
    "decide",
    "preview",
]

PROJECT_CONFIG = Path(".robota") / "config.yaml"
"""The project's own robota settings, relative to the workspace root."""


@dataclass(frozen=True, slots=True)
class TrustDecision:
    workspace: Path
    state: TrustState
    problem: str | None = None
    """Why the store could not say (``state == "unreadable"``)."""

    @property
    def restricted(self) -> bool:
        return self.state != "trusted"


def decide(store: TrustStore, path: Path) -> TrustDecision:
    """The trust decision of the workspace ``path`` is in."""
    workspace = workspace_root(path)
    try:
        entry = store.entry(workspace)
    except TrustStoreUnreadable as error:
        return TrustDecision(workspace, "unreadable", error.problem)
    return TrustDecision(workspace, entry.state if entry is not None else "untrusted")


def _kind(mode: int) -> str:
    if stat.S_ISLNK(mode):
        return "symlink"
    if stat.S_ISDIR(mode):
        return "directory"
    if stat.S_ISREG(mode):
        return "file"
    return "other"


def preview(store: TrustStore, path: Path) -> dict[str, object]:
    """``robota trust status``: the workspace, its trust state and what trusting enables."""
    decision = decide(store, path)
    workspace = decision.workspace
    git = os.path.lexists(workspace / ".git")
    entry = None
    if decision.state in ("trusted", "revoked"):
        entry = store.entry(workspace)
    config_path = workspace / PROJECT_CONFIG
    project: dict[str, object] = {"path": str(config_path), "exists": False}
    enables: list[str] = []
    try:
        dot = os.lstat(workspace / ".robota")
    except OSError:
        dot = None
    if dot is not None and not stat.S_ISDIR(dot.st_mode):
        project["note"] = f".robota is a {_kind(dot.st_mode)}, not followed"
    elif dot is not None:
        try:
            info = os.lstat(config_path)
        except OSError:
            info = None
        if info is not None:
            kind = _kind(info.st_mode)
            project |= {"exists": True, "kind": kind, "size": info.st_size}
            if kind == "file":
                enables = [
                    "project defaults (defaults.*)",
                    "per-agent environment overrides (agents.<name>.env)",
                ]
            else:
                project["note"] = f"a {kind}, not followed: ignored even when trusted"
        try:
            with os.scandir(workspace / ".robota") as listing:
                project["entries"] = sorted(
                    f"{e.name} ({_kind(e.stat(follow_symlinks=False).st_mode)})" for e in listing
                )
        except OSError as error:
            project["note"] = f".robota cannot be listed ({error.strerror})"
    result: dict[str, object] = {
        "workspace": str(workspace),
        "key": "git repository root" if git else "directory",
        "git_root": str(workspace) if git else None,
        "state": decision.state,
        "restricted": decision.restricted,
        "trusted_at": entry.trusted_at if entry is not None else None,
        "revoked_at": entry.revoked_at if entry is not None else None,
        "project_config": project,
        "trust_enables": enables,
        "restricted_means": "project config ignored; permission mode plan",
    }
    if decision.problem is not None:
        result["problem"] = decision.problem
    return result
