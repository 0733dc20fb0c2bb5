"""The files of robota's start-up cache: where they live, read only when they are the user's
own, written whole or not at all.

What config.yaml parsed to (``_parsed_text``) makes a ``robota`` start cheaper on its second
run. It is derived data the next start trusts, so it is read by strict rules: a regular file
opened without following a link, owned by the user, writable by nobody else, within its size
bound; anything else reads as absent and is replaced. It is written to a temporary file beside
the real one (0600, in a 0700 directory) and renamed, so a concurrent start never reads half a
file. ``ROBOTA_CODE_CACHE=0`` turns it off (the name is older than this one cache). It serves
only the ``robota`` script (``script_started``, called by its ``main``), never a library use
or a test that loads configurations in-process. Standard library only: it loads on every start.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping
from pathlib import Path

__all__ = ["cache_dir", "read_owned", "script_started", "serves_the_script", "write_owned"]

_OFF = {"0", "false", "no", "off"}

SCRIPT = False
"""Whether the ``robota`` script's ``main`` started this process."""


def script_started() -> None:
    """Say that the ``robota`` script runs this process (its ``main``, once)."""
    global SCRIPT  # noqa: PLW0603 (one script per process)
    SCRIPT = True


def serves_the_script() -> bool:
    """Whether the start-up caches are in use: only when the ``robota`` script started."""
    return SCRIPT


def cache_dir(env: Mapping[str, str]) -> Path | None:
    """``$XDG_CACHE_HOME/robota``, else ``~/.cache/robota``; ``None`` when switched off
    (``ROBOTA_CODE_CACHE=0``) or there is no absolute home to put it in."""
    if env.get("ROBOTA_CODE_CACHE", "1").strip().lower() in _OFF:
        return None
    base = Path(env.get("XDG_CACHE_HOME", ""))
    if not base.is_absolute():
        home = Path(env.get("HOME", ""))
        if not home.is_absolute():
            return None
        base = home / ".cache"
    return base / "robota"


def read_owned(path: Path, max_bytes: int) -> bytes | None:
    """The bytes of ``path`` when it is a regular file of this user's that nobody else may
    write, of at most ``max_bytes``; ``None`` otherwise (missing included)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if (
            not stat.S_ISREG(info.st_mode)
            or info.st_uid != os.getuid()
            or info.st_mode & 0o022
            or info.st_size > max_bytes
        ):
            return None
        with os.fdopen(fd, "rb", closefd=False) as file:
            data = file.read(max_bytes + 1)
    except OSError:
        return None
    finally:
        os.close(fd)
    return data if len(data) <= max_bytes else None


def write_owned(path: Path, data: bytes) -> None:
    """Replace ``path`` with ``data`` at once (a temporary file beside it, renamed); raises
    ``OSError`` when it cannot."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    try:
        with os.fdopen(fd, "wb") as file:
            file.write(data)
        temporary.replace(path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
