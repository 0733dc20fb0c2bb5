"""Workspace trust for the host and the front ends: the headless gate, the engine's hook and
the project's settings.

``headless_workspace`` is the gate every headless start passes (print mode, background
sessions, the daemon, ``--serve``): it refuses (``WorkspaceRefused``, exit 2 naming
``robota trust --yes``) a workspace that is untrusted, revoked, or whose trust cannot be
established (the store is unreadable), unless the start asked for ``--restricted``. What it
returns (``Workspace``) carries the configuration to build the engine from (the project's
``.robota/config.yaml`` applied only when trusted and not Restricted) and the engine's
``restricted(cwd)`` hook (every directory Restricted for a ``--restricted`` start, else
each directory by its own trust).

The TUI asks on its terminal instead (``robota.cli._trust_ask``: ``/dev/tty``, never stdin).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from robota.core import RobotaError

if TYPE_CHECKING:
    from robota.core.config import Config, Profile
    from robota.core.trust import TrustDecision, TrustStore

__all__ = [
    "Workspace",
    "WorkspaceRefused",
    "headless_workspace",
    "restricted_hook",
    "task_restricted_hook",
    "trust_store",
    "workspace_config",
]

Mode = Literal["print", "session", "daemon", "serve", "tui", "host"]
TRUST_HINT = "robota trust --yes"


class WorkspaceRefused(RobotaError):
    """A headless start in a workspace nobody trusted (or whose trust cannot be read)."""

    def __init__(self, decision: TrustDecision, mode: str) -> None:
        self.decision = decision
        why = {
            "untrusted": "is not trusted",
            "revoked": "was trusted, then revoked",
            "unreadable": f"cannot be established as trusted ({decision.problem})",
        }.get(decision.state, "is not trusted")
        super().__init__(
            f"the workspace {decision.workspace} {why}; a headless {mode} start does not run "
            f"there. Trust it (cd there and run: {TRUST_HINT}) or start with --restricted "
            "(project settings ignored, permission mode plan)"
        )


def trust_store(profile: Profile) -> TrustStore:
    from robota.core.trust import TrustStore, trust_store_path  # noqa: PLC0415

    return TrustStore(trust_store_path(profile.data_dir))


def restricted_hook(profile: Profile, *, forced: bool = False) -> Callable[[Path], bool]:
    """The engine's ``restricted(cwd)``: every directory when ``forced``, else each by its
    workspace's trust (fail closed: an unreadable store is Restricted)."""
    if forced:
        return lambda _cwd: True
    from robota.core.trust import decide  # noqa: PLC0415

    store = trust_store(profile)
    return lambda cwd: decide(store, cwd).restricted


def task_restricted_hook(profile: Profile, db_path: Path) -> Callable[[str], bool]:
    """Whether a task runs Restricted, by its id (its directory's trust): what a chat card
    asks (``TransportContext.restricted_task``)."""
    from contextlib import closing  # noqa: PLC0415

    from robota.core.store import open_reader  # noqa: PLC0415
    from robota.core.store import task as load_task  # noqa: PLC0415

    by_cwd = restricted_hook(profile)

    def restricted(task_id: str) -> bool:
        with closing(open_reader(db_path)) as db:
            task = load_task(db, task_id)
        return task is not None and by_cwd(Path(task.cwd))

    return restricted


@dataclass(frozen=True, slots=True)
class Workspace:
    """A start's workspace: where it is, whether it runs Restricted, what to build from."""

    root: Path
    decision: TrustDecision
    restricted: bool
    """The start runs Restricted (asked for, or the workspace is not trusted)."""
    config: Config
    """The profile's configuration, with the project's settings when trusted."""
    hook: Callable[[Path], bool]
    """The engine's ``restricted(cwd)``."""


def workspace_config(config: Config, profile: Profile, cwd: Path, *, restricted: bool) -> Workspace:
    """The workspace of ``cwd`` as a start that may run there sees it (no refusal here);
    ``ConfigError`` when a trusted workspace's settings are invalid."""
    from robota.core.config import apply_project, load_project_config  # noqa: PLC0415
    from robota.core.trust import decide  # noqa: PLC0415

    decision = decide(trust_store(profile), cwd)
    effective = restricted or decision.restricted
    applied = config
    if not effective:
        applied = apply_project(config, load_project_config(decision.workspace, config))
    return Workspace(
        decision.workspace,
        decision,
        effective,
        applied,
        restricted_hook(profile, forced=restricted),
    )


def headless_workspace(
    config: Config, profile: Profile, cwd: Path, *, restricted: bool, mode: str
) -> Workspace:
    """The gate of a headless start (see the module docstring); ``WorkspaceRefused`` when
    the workspace of ``cwd`` is not trusted and ``restricted`` was not asked for."""
    workspace = workspace_config(config, profile, cwd, restricted=restricted)
    if workspace.decision.restricted and not restricted:
        raise WorkspaceRefused(workspace.decision, mode)
    return workspace
