"""The owner-only file that holds the mesh's secrets when no real keychain is there.

One file, ``<profile data>/mesh/credentials``: JSON of name -> base64, mode 0600, in the
profile's 0700 ``mesh`` directory. It is written whole (a temporary file created exclusively,
then renamed over: never through a link) and read without following links, after checking
that the directory and the file are this user's own and reachable by nobody else. Anything
off (a link, another owner, a group or other bit, damaged content) raises
``CredentialStoreError`` naming the file's role, never a value: the mesh fails closed and the
file is never silently replaced.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import stat
from pathlib import Path
from typing import Literal

from ._errors import CredentialStoreError

__all__ = ["KeyFile", "ensure_mesh_dir"]

_DIR_MODE = 0o700
_FILE_MODE = 0o600
_MAX_BYTES = 64 * 1024


def _owner_only(info: os.stat_result, what: str, mode: int) -> None:
    if info.st_uid != os.getuid():
        raise CredentialStoreError(what, "it belongs to another user")
    if stat.S_IMODE(info.st_mode) & ~mode:
        raise CredentialStoreError(
            what, f"others may reach it (mode {stat.S_IMODE(info.st_mode):o})"
        )


def ensure_mesh_dir(path: Path) -> Path:
    """``path`` as an owner-only (0700) directory of this user's, created if missing."""
    with contextlib.suppress(FileExistsError):
        path.parent.mkdir(mode=_DIR_MODE, parents=True, exist_ok=True)
        path.mkdir(mode=_DIR_MODE)
        path.chmod(_DIR_MODE)
    info = os.lstat(path)
    if not stat.S_ISDIR(info.st_mode):
        raise CredentialStoreError("mesh directory", "it is not a directory (a link?)")
    _owner_only(info, "mesh directory", _DIR_MODE)
    return path


class KeyFile:
    """The secrets in ``path`` (see the module docstring)."""

    kind: Literal["file"] = "file"

    def __init__(self, path: Path) -> None:
        self.path = path

    def _read(self) -> dict[str, str]:
        ensure_mesh_dir(self.path.parent)
        try:
            fd = os.open(self.path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except FileNotFoundError:
            return {}
        except OSError:
            raise CredentialStoreError(
                "credentials file", "it cannot be opened (a link?)"
            ) from None
        with os.fdopen(fd, "rb") as file:
            info = os.fstat(file.fileno())
            if not stat.S_ISREG(info.st_mode):
                raise CredentialStoreError("credentials file", "it is not a regular file")
            _owner_only(info, "credentials file", _FILE_MODE)
            data = file.read(_MAX_BYTES + 1)
        try:
            parsed = json.loads(data)
        except ValueError:
            raise CredentialStoreError("credentials file", "it is damaged") from None
        if not isinstance(parsed, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in parsed.items()
        ):
            raise CredentialStoreError("credentials file", "it is damaged")
        return parsed

    def _write(self, secrets: dict[str, str]) -> None:
        from robota.core.config import atomic_write  # noqa: PLC0415

        ensure_mesh_dir(self.path.parent)
        atomic_write(self.path, json.dumps(secrets).encode("ascii"), mode=_FILE_MODE)

    def get(self, name: str) -> bytes | None:
        value = self._read().get(name)
        if value is None:
            return None
        try:
            return base64.b64decode(value, validate=True)
        except ValueError:
            raise CredentialStoreError(name, "the stored value is damaged") from None

    def put(self, name: str, value: bytes) -> None:
        secrets = self._read()
        secrets[name] = base64.b64encode(value).decode("ascii")
        self._write(secrets)

    def delete(self, name: str) -> None:
        secrets = self._read()
        if secrets.pop(name, None) is not None:
            self._write(secrets)

    def holds_keys(self) -> bool:
        """Whether the file exists and holds any secret (read with every check above)."""
        return bool(self._read())

    def remove(self) -> None:
        """Remove the file (its keys are being replaced)."""
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()
