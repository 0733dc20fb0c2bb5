"""Trusting a workspace in a test's profile, the way ``robota trust --yes`` would.

Headless starts (print mode, background sessions, the daemon) refuse an untrusted workspace,
so the shared profile writers trust the directory their tests run in.
"""

from __future__ import annotations

from pathlib import Path

from robota.core.config import resolve_profile
from robota.core.trust import TrustStore, trust_store_path, workspace_root

__all__ = ["trust_store_of", "trust_workspace"]


def trust_store_of(robota_home: Path) -> TrustStore:
    """The trust store of the profile pinned at ``robota_home``."""
    profile = resolve_profile({"ROBOTA_HOME": str(robota_home)})
    return TrustStore(trust_store_path(profile.data_dir))


def trust_workspace(robota_home: Path, path: Path) -> Path:
    """Trust the workspace ``path`` is in; its root."""
    root = workspace_root(path)
    trust_store_of(robota_home).grant(root)
    return root
