"""The trust store: the workspaces this user trusted, owner-only in the profile.

``DATA/trust/workspaces.json`` (directory 0700, file 0600, written atomically)::

    {"version": 1, "workspaces": {"/abs/root": {"trusted_at": "...", "revoked_at": null}}}

A workspace's key is its root (``workspace_root``): the git repository's root, found by
walking up for a ``.git`` entry (a directory, or the file a worktree or submodule has)
without running git, else the directory itself. Revoking keeps the entry, marked
``revoked_at``: ``status`` then says "revoked" rather than "untrusted".

Fail closed: a store that cannot be read, is not owned by this user, is open to others or
is not the store's JSON raises ``TrustStoreUnreadable``; callers decide "cannot establish
trust", never "trusted".

Stdlib only.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import stat
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from .._errors import RobotaError

__all__ = [
    "STORE_VERSION",
    "TrustEntry",
    "TrustError",
    "TrustState",
    "TrustStore",
    "TrustStoreUnreadable",
    "trust_store_path",
    "workspace_root",
]

STORE_VERSION = 1
TrustState = Literal["trusted", "revoked", "untrusted", "unreadable"]


class TrustError(RobotaError):
    """Workspace trust (``robota.core.trust``)."""


class TrustStoreUnreadable(TrustError):
    """The trust store cannot be read, is not this user's own, or is damaged: no workspace
    can be established as trusted until it is fixed (or removed)."""

    def __init__(self, path: Path, problem: str) -> None:
        self.path = path
        self.problem = problem
        super().__init__(f"the trust store {path} {problem}; no workspace counts as trusted")


def trust_store_path(data_dir: Path) -> Path:
    """The store of the profile whose data directory is ``data_dir``."""
    return data_dir / "trust" / "workspaces.json"


def workspace_root(path: Path) -> Path:
    """The workspace ``path`` is in: the nearest directory up from it holding a ``.git``
    entry (directory or file, never followed), else ``path`` itself. Never runs git."""
    start = Path(os.path.abspath(path))  # noqa: PTH100 (no link resolved yet)
    with contextlib.suppress(OSError):
        start = start.resolve()
    for candidate in (start, *start.parents):
        try:
            mode = os.lstat(candidate / ".git").st_mode
        except OSError:
            continue
        if stat.S_ISDIR(mode) or stat.S_ISREG(mode):
            return candidate
    return start


@dataclass(frozen=True, slots=True)
class TrustEntry:
    workspace: str
    trusted_at: str
    revoked_at: str | None = None

    @property
    def state(self) -> TrustState:
        return "revoked" if self.revoked_at is not None else "trusted"


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


class TrustStore:
    """The store at ``path``; every call reads the file afresh (it is small, and another
    process may have changed it)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    # -- reading -------------------------------------------------------------------------------

    def entries(self) -> dict[str, TrustEntry]:
        """Every entry by workspace; ``{}`` when no store exists yet."""
        try:
            fd = os.open(self.path, os.O_RDONLY | os.O_NOFOLLOW)
        except FileNotFoundError:
            return {}
        except OSError as error:
            raise TrustStoreUnreadable(
                self.path, f"cannot be opened ({error.strerror or error})"
            ) from None
        with os.fdopen(fd, "rb") as file:
            info = os.fstat(file.fileno())
            self._check_owner(info)
            try:
                data = file.read(4 * 1024 * 1024 + 1)
            except OSError as error:
                raise TrustStoreUnreadable(
                    self.path, f"cannot be read ({error.strerror})"
                ) from None
        return self._parse(data)

    def _check_owner(self, info: os.stat_result) -> None:
        if not stat.S_ISREG(info.st_mode):
            raise TrustStoreUnreadable(self.path, "is not a regular file")
        if info.st_uid != os.getuid():
            raise TrustStoreUnreadable(self.path, f"is owned by uid {info.st_uid}, not this user")
        if info.st_mode & 0o077:
            raise TrustStoreUnreadable(
                self.path, f"is open to others (mode {stat.S_IMODE(info.st_mode):o}, not 600)"
            )

    def _parse(self, data: bytes) -> dict[str, TrustEntry]:
        if len(data) > 4 * 1024 * 1024:
            raise TrustStoreUnreadable(self.path, "is larger than 4 MiB")
        try:
            document = json.loads(data.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            raise TrustStoreUnreadable(self.path, "is not valid JSON") from None
        if not isinstance(document, dict) or document.get("version") != STORE_VERSION:
            raise TrustStoreUnreadable(self.path, f"is not a version {STORE_VERSION} trust store")
        raw = document.get("workspaces")
        if not isinstance(raw, dict):
            raise TrustStoreUnreadable(self.path, "has no 'workspaces' mapping")
        entries: dict[str, TrustEntry] = {}
        for workspace, fields in raw.items():
            if (
                not isinstance(fields, dict)
                or not Path(workspace).is_absolute()
                or not isinstance(fields.get("trusted_at"), str)
                or not isinstance(fields.get("revoked_at"), str | None)
            ):
                raise TrustStoreUnreadable(self.path, "has an entry that is not a workspace's")
            entries[workspace] = TrustEntry(workspace, fields["trusted_at"], fields["revoked_at"])
        return entries

    def entry(self, workspace: Path) -> TrustEntry | None:
        return self.entries().get(str(workspace))

    def state(self, workspace: Path) -> TrustState:
        """trusted, revoked or untrusted; unreadable when the store cannot say (fail closed)."""
        try:
            entry = self.entry(workspace)
        except TrustStoreUnreadable:
            return "unreadable"
        return entry.state if entry is not None else "untrusted"

    def trusted(self, workspace: Path) -> bool:
        return self.state(workspace) == "trusted"

    # -- writing -------------------------------------------------------------------------------

    def grant(self, workspace: Path) -> TrustEntry:
        """Trust ``workspace`` (a revoked one again); a damaged store is refused, not replaced."""
        with self._locked():
            entries = self.entries()
            entry = TrustEntry(str(workspace), _now())
            entries[entry.workspace] = entry
            self._write(entries)
        return entry

    def revoke(self, workspace: Path) -> TrustEntry | None:
        """Mark ``workspace`` revoked; ``None`` when it was never trusted."""
        with self._locked():
            entries = self.entries()
            old = entries.get(str(workspace))
            if old is None:
                return None
            entry = TrustEntry(old.workspace, old.trusted_at, old.revoked_at or _now())
            entries[entry.workspace] = entry
            self._write(entries)
        return entry

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        """The store's directory (owner-only, checked) with its write lock held: two changes
        at once never lose one (each reads the store under the lock)."""
        directory = self.path.parent
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        info = os.lstat(directory)
        if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid():
            raise TrustStoreUnreadable(self.path, "is in a directory that is not this user's own")
        directory.chmod(0o700)
        fd = os.open(directory / ".lock", os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)

    def _write(self, entries: dict[str, TrustEntry]) -> None:
        directory = self.path.parent
        document = {
            "version": STORE_VERSION,
            "workspaces": {
                e.workspace: {"trusted_at": e.trusted_at, "revoked_at": e.revoked_at}
                for e in sorted(entries.values(), key=lambda e: e.workspace)
            },
        }
        data = (json.dumps(document, indent=2) + "\n").encode()
        fd, temporary = tempfile.mkstemp(dir=directory, prefix=".workspaces.", suffix=".tmp")
        try:
            os.fchmod(fd, 0o600)
            with os.fdopen(fd, "wb") as stream:
                stream.write(data)
                stream.flush()
                os.fsync(stream.fileno())
            Path(temporary).replace(self.path)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                Path(temporary).unlink()
            raise
