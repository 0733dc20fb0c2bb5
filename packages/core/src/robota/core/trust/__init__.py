"""robota.core.trust: which workspaces this user trusts, and what that decides.

An untrusted workspace is **Restricted**: the project's own settings
(``.robota/config.yaml``) are ignored and its agents run with permission mode ``plan``
whatever the profile says. A trusted one gets both. The store (``TrustStore``, owner-only
in the profile's data directory) is keyed by the workspace root (``workspace_root``: the git
repository's root, else the directory); ``decide`` turns a path into a ``TrustDecision``
(fail closed: an unreadable store is "cannot establish trust"); ``preview`` says what
trusting would enable from file-system metadata alone.

Stdlib only; nothing here imports the rest of robota but its error base.
"""

from ._status import PROJECT_CONFIG, TrustDecision, decide, preview
from ._store import (
    STORE_VERSION,
    TrustEntry,
    TrustError,
    TrustState,
    TrustStore,
    TrustStoreUnreadable,
    trust_store_path,
    workspace_root,
)

__all__ = [
    "PROJECT_CONFIG",
    "STORE_VERSION",
    "TrustDecision",
    "TrustEntry",
    "TrustError",
    "TrustState",
    "TrustStore",
    "TrustStoreUnreadable",
    "decide",
    "preview",
    "trust_store_path",
    "workspace_root",
]
