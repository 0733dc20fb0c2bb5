"""Where an accepted file lands: ``<profile>/data/peers/<device id>/`` (issue 30 §2).

The bytes go to a partial copy first (``PARTIAL_PREFIX`` + the offer's id: created exclusively,
owner-only, never through a link), opened inside the device's folder, which is itself opened
folder by folder without following links, so nothing planted on the way leads elsewhere. Once
the length and then the SHA-256 match the offer, the copy gets its kept name by a hard link,
which never replaces anything (a planted file or link included): a clash takes the next name
(``clash_name``); only then is the partial name removed, so a partial copy is never visible under
a kept name. A failure removes the partial copy, and so does ``remove_partials`` at start.
The file is only ever written, never opened by anything else: inert.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
from pathlib import Path

from ._errors import MeshError
from ._offers import PARTIAL_PREFIX, clash_name, kept_name

__all__ = ["PEERS", "Receiving", "ReceiveFailed", "remove_partials"]

PEERS = "peers"
"""The folder under the profile's ``data`` that holds each device's received files."""
_CLASHES = 1000
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
_OFFER_ID = re.compile(r"[0-9a-f]{8,64}\Z")


class ReceiveFailed(MeshError):
    """The copy did not match the offer or could not be written (the partial copy is gone)."""


def _open_folder(parent: int, name: str) -> int:
    """The folder ``name`` in ``parent`` (made 0700 when missing), never through a link."""
    with contextlib.suppress(FileExistsError):
        os.mkdir(name, 0o700, dir_fd=parent)
    try:
        return os.open(name, _DIR_FLAGS, dir_fd=parent)
    except OSError as error:
        raise ReceiveFailed(f"{name}: not a folder of its own ({error.strerror})") from None


def _device_folder(data_dir: Path, device: str) -> int:
    data = os.open(data_dir, _DIR_FLAGS)
    try:
        peers = _open_folder(data, PEERS)
    finally:
        os.close(data)
    try:
        return _open_folder(peers, device)
    finally:
        os.close(peers)


class Receiving:
    """One accepted offer's copy into ``data_dir/peers/device/`` (see the module docstring)."""

    def __init__(self, data_dir: Path, device: str, offer: str, *, size: int, sha256: str) -> None:
        if not _OFFER_ID.match(offer) or "/" in device or device in ("", ".", ".."):
            raise ReceiveFailed(f"not an offer to receive: {offer!r} from {device!r}")
        self.folder = data_dir / PEERS / device
        self.size, self.sha256 = size, sha256.lower()
        self.partial = PARTIAL_PREFIX + offer
        self._dir = _device_folder(data_dir, device)
        self._hash = hashlib.sha256()
        self.written = 0
        try:
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
            self._fd = os.open(self.partial, flags, 0o600, dir_fd=self._dir)
        except OSError as error:
            os.close(self._dir)
            raise ReceiveFailed(f"cannot start the copy: {error.strerror}") from None

    def write(self, chunk: bytes, offset: int | None = None) -> None:
        """More of the file (at ``offset``, when given: it must follow what came); more than
        the offer's size fails at once."""
        if offset is not None and offset != self.written:
            self.abandon()
            raise ReceiveFailed(f"bytes at {offset}, where {self.written} were expected")
        if self.written + len(chunk) > self.size:
            self.abandon()
            raise ReceiveFailed(f"more than the {self.size} bytes offered")
        try:
            view = memoryview(chunk)
            while view:
                view = view[os.write(self._fd, view) :]
        except OSError as error:
            self.abandon()
            raise ReceiveFailed(f"cannot write the copy: {error.strerror}") from None
        self._hash.update(chunk)
        self.written += len(chunk)

    def finish(self, offered_name: str) -> Path:
        """Check the length, then the SHA-256, and give the copy its kept name: the path."""
        try:
            self._check()
            os.fsync(self._fd)
            name = self._place(kept_name(offered_name))
        except BaseException:
            self.abandon()
            raise
        os.close(self._fd)
        os.unlink(self.partial, dir_fd=self._dir)
        os.fsync(self._dir)
        os.close(self._dir)
        return self.folder / name

    def _check(self) -> None:
        if self.written != self.size:
            raise ReceiveFailed(f"{self.written} bytes arrived, {self.size} were offered")
        if self._hash.hexdigest() != self.sha256:
            raise ReceiveFailed("the bytes that arrived do not have the offer's SHA-256")

    def _place(self, kept: str) -> str:
        for attempt in range(_CLASHES):
            name = clash_name(kept, attempt)
            try:
                os.link(
                    self.partial,
                    name,
                    src_dir_fd=self._dir,
                    dst_dir_fd=self._dir,
                    follow_symlinks=False,
                )
            except FileExistsError:
                continue
            except OSError as error:
                raise ReceiveFailed(f"cannot keep the copy: {error.strerror}") from None
            return name
        raise ReceiveFailed(f"{_CLASHES} files of that name are there already")

    def abandon(self) -> None:
        """Remove the partial copy (a failure, or the transfer given up)."""
        if self._fd < 0:
            return
        with contextlib.suppress(OSError):
            os.close(self._fd)
        with contextlib.suppress(OSError):
            os.unlink(self.partial, dir_fd=self._dir)
        with contextlib.suppress(OSError):
            os.close(self._dir)
        self._fd = -1


def remove_partials(data_dir: Path) -> int:
    """Remove every partial copy a stopped host left under ``data_dir/peers``; how many."""
    removed = 0
    peers = data_dir / PEERS
    if peers.is_symlink() or not peers.is_dir():
        return 0
    for folder in peers.iterdir():
        if folder.is_symlink() or not folder.is_dir():
            continue
        for item in folder.iterdir():
            if item.name.startswith(PARTIAL_PREFIX) and not item.is_dir():
                with contextlib.suppress(OSError):
                    item.unlink()
                    removed += 1
    return removed
