"""Where the destination stages a handoff's payload: ``<profile>/data/handoffs/`` (issue 30 §3).

The chunks go to a partial file first (``PARTIAL`` + the handoff's id: created exclusively,
owner-only, never through a link) in a folder of its own (0700, opened without following
links). Once every byte arrived and ``Staging`` found the length and then the SHA-256 the
manifest states, the file is synced and renamed to its staged name (``<id>.staged``); the host
then records the phase ``staged`` with that path in one transaction (``StageHandoff``). So a
partial file is never under a staged name, and a staged name no ``staged`` row names is an
orphan (the host stopped between the rename and the transaction).

The commit reads the staged file back (``read``) and checks its length, then its SHA-256,
against the manifest again: what is on disk is what was checked, and after a restart a staged
handoff commits from it without asking the source. A failure, an abandon, a transfer started
again or a commit removes the handoff's files (``discard``); at start ``sweep`` removes every
partial file and every staged file no ``staged`` row names. Blocking: the host calls these on
a worker thread.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
from collections.abc import Callable, Collection
from pathlib import Path

from robota.core import RobotaError

__all__ = ["PARTIAL", "STAGED", "STAGING", "HandoffStaging", "StagedFile", "StagingFailed"]

STAGING = "handoffs"
"""The folder under the profile's ``data`` that holds staged payloads."""
PARTIAL = ".partial-"
STAGED = ".staged"
_ID = re.compile(r"[0-9a-f]{8,64}\Z")
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_READ = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC
_NEW_FILE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


class StagingFailed(RobotaError):
    """The payload could not be staged or read back as the manifest states (why)."""


def _checked_id(handoff: str) -> str:
    if not _ID.match(handoff):
        raise StagingFailed(f"not a handoff id to stage: {handoff!r}")
    return handoff


class StagedFile:
    """One transfer's partial file, written in order, then renamed to its staged name."""

    def __init__(self, folder: Path, dir_fd: int, handoff: str) -> None:
        self.folder, self._dir, self.handoff = folder, dir_fd, handoff
        self.partial = PARTIAL + handoff
        self.written = 0
        try:
            self._fd = os.open(self.partial, _NEW_FILE, 0o600, dir_fd=dir_fd)
        except OSError as error:
            os.close(dir_fd)
            raise StagingFailed(f"cannot start staging: {error.strerror}") from None

    def write(self, data: bytes) -> None:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(self._fd, view) :]
        except OSError as error:
            self.abandon()
            raise StagingFailed(f"cannot write the staged payload: {error.strerror}") from None
        self.written += len(data)

    def finish(self) -> Path:
        """Synced, then given its staged name (replacing an orphan of the same handoff); the
        path. The caller checked the bytes (``Staging``) before."""
        staged = self.handoff + STAGED
        try:
            os.fsync(self._fd)
            os.rename(self.partial, staged, src_dir_fd=self._dir, dst_dir_fd=self._dir)
            os.fsync(self._dir)
        except OSError as error:
            self.abandon()
            raise StagingFailed(f"cannot keep the staged payload: {error.strerror}") from None
        os.close(self._fd)
        os.close(self._dir)
        self._fd = -1
        return self.folder / staged

    def abandon(self) -> None:
        """The partial file removed (a failure, or the transfer given up)."""
        if self._fd < 0:
            return
        fd, self._fd = self._fd, -1
        undos: tuple[Callable[[], None], ...] = (
            lambda: os.close(fd),
            lambda: os.unlink(self.partial, dir_fd=self._dir),
            lambda: os.close(self._dir),
        )
        for undo in undos:
            with contextlib.suppress(OSError):
                undo()


class HandoffStaging:
    """The profile's staging folder (module docstring)."""

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir
        self.folder = data_dir / STAGING

    def _open(self) -> int:
        self.folder.mkdir(0o700, parents=True, exist_ok=True)
        try:
            return os.open(self.folder, _DIR_FLAGS)
        except OSError as error:
            why = f"{self.folder}: not a folder of its own ({error.strerror})"
            raise StagingFailed(why) from None

    def begin(self, handoff: str) -> StagedFile:
        """A new partial file for ``handoff``, whatever an earlier try left removed first."""
        self.discard(handoff)
        return StagedFile(self.folder, self._open(), _checked_id(handoff))

    def path_of(self, handoff: str) -> Path:
        return self.folder / (_checked_id(handoff) + STAGED)

    def read(self, handoff: str, path: str, *, length: int, sha256: bytes) -> bytes:
        """The staged payload of ``handoff`` recorded at ``path``: its length, then its
        SHA-256 checked against the manifest's; ``StagingFailed`` says which does not hold."""
        if Path(path) != self.path_of(handoff):
            raise StagingFailed(f"the staged payload is recorded at {path}, not in {self.folder}")
        folder = self._open()
        try:
            fd = os.open(
                handoff + STAGED, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=folder
            )
        except OSError as error:
            raise StagingFailed(f"the staged payload is gone: {error.strerror}") from None
        finally:
            os.close(folder)
        with os.fdopen(fd, "rb") as staged:
            data = staged.read(length + 1)
        if len(data) != length:
            raise StagingFailed(f"length: {len(data)} staged bytes, the manifest says {length}")
        if hashlib.sha256(data).digest() != sha256:
            raise StagingFailed("digest: the staged payload's SHA-256 is not the manifest's")
        return data

    def discard(self, handoff: str) -> None:
        """Remove whatever of ``handoff``'s payload is staged (partial or whole)."""
        if not _ID.match(handoff) or not self.folder.is_dir():
            return
        for name in (PARTIAL + handoff, handoff + STAGED):
            with contextlib.suppress(FileNotFoundError):
                (self.folder / name).unlink()

    def sweep(self, keep: Collection[str]) -> int:
        """At start: remove every partial file and every staged file whose handoff is not in
        ``keep`` (those a ``staged`` row names); how many."""
        if self.folder.is_symlink() or not self.folder.is_dir():
            return 0
        removed = 0
        for item in self.folder.iterdir():
            name = item.name
            orphan = name.endswith(STAGED) and name.removesuffix(STAGED) not in keep
            if (name.startswith(PARTIAL) or orphan) and not item.is_dir():
                with contextlib.suppress(OSError):
                    item.unlink()
                    removed += 1
        return removed
