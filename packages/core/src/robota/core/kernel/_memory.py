"""Giving freed heap back to the system after many actors stopped at once.

glibc's allocator keeps what a burst freed (route actors' SQLite pages, their threads' Python
frames) in its arenas, so a long-lived host's resident size stays at the burst's high-water mark
long after. ``malloc_trim(0)`` returns the free pages at the top of each arena and every whole
free page inside it; the route directory's sweeper calls it, off the trio loop, once a wave of
passivations is over, and a chat transport once it let a batch of quiet chats go. Elsewhere
(musl, macOS) there is no such call and only the garbage is collected.

The cyclic garbage is collected first: a burst leaves thousands of objects in reference
cycles (an actor and its thread, trio's tasks and cancel scopes) that only a full collection
frees, and an idle process allocates too little for the collector's thresholds to ever run
one; until it does they pin the allocator arenas they sit in.
"""

from __future__ import annotations

import gc
import os
import sys
from collections.abc import Callable

__all__ = ["release_free_memory"]

_trim: Callable[[int], int] | None = None
_looked = False


def release_free_memory() -> bool:
    """Collect cyclic garbage, then ask the C allocator to return free heap pages to the
    system; whether it could."""
    gc.collect()
    trim = _malloc_trim()
    if trim is None:
        return False
    trim(0)
    return True


def _malloc_trim() -> Callable[[int], int] | None:
    global _trim, _looked  # noqa: PLW0603 (looked up once per process)
    if not _looked:
        _looked = True
        _trim = _find_malloc_trim()
    return _trim


def _find_malloc_trim() -> Callable[[int], int] | None:
    if not sys.platform.startswith("linux") or not _glibc():
        return None
    import ctypes  # noqa: PLC0415 (only where it is used: a few ms of every start otherwise)

    try:
        libc = ctypes.CDLL(None)
        trim = libc.malloc_trim
    except (OSError, AttributeError):
        return None
    trim.argtypes = [ctypes.c_size_t]
    trim.restype = ctypes.c_int
    return trim


def _glibc() -> bool:
    try:
        version = os.confstr("CS_GNU_LIBC_VERSION")
    except (ValueError, OSError):
        return False
    return bool(version) and str(version).startswith("glibc")
