"""Writing profile files so that a crash or a concurrent reader never sees half a file.

Every write goes to a temporary file in the same directory, is flushed to disk, and then
replaces the target in one ``os.replace``: readers see the old file or the new one, never a mix,
and a crash leaves at worst a stray temporary file. Files and directories are created
owner-only because a profile holds chat and API credentials.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

__all__ = ["PRIVATE_DIR_MODE", "PRIVATE_FILE_MODE", "atomic_write", "ensure_private_dir"]

PRIVATE_FILE_MODE = 0o600
PRIVATE_DIR_MODE = 0o700


def _fsync_dir(directory: Path) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:  # some platforms cannot open directories; the data itself is synced
        return
    try:
        os.fsync(fd)
    except OSError:
        pass  # not supported on this file system; the rename is still atomic
    finally:
        os.close(fd)


def atomic_write(path: Path, data: bytes, *, mode: int = PRIVATE_FILE_MODE) -> None:
    """Replace ``path`` with ``data`` atomically, leaving it with permission bits ``mode``."""
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        os.fchmod(fd, mode)
        with os.fdopen(fd, "wb") as stream:
            stream.write(data)
            stream.flush()
            os.fsync(stream.fileno())
        Path(temporary).replace(path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            Path(temporary).unlink()
        raise
    _fsync_dir(path.parent)


def ensure_private_dir(path: Path) -> bool:
    """Create ``path`` (and missing parents) owner-only; return whether it had to be created.

    An existing directory keeps its permissions: ``ROBOTA_HOME`` may point at a directory the
    user manages, and tightening it behind their back would be a surprise. Parents created on
    the way (``~/.local/state``) get the usual permissions: they are shared with other tools.
    """
    if path.is_dir():
        return False
    path.mkdir(mode=PRIVATE_DIR_MODE, parents=True, exist_ok=True)
    # mkdir's mode is filtered through the umask; the parents it creates keep the usual mode.
    path.chmod(PRIVATE_DIR_MODE)
    return True
