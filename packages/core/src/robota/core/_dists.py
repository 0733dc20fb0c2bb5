"""Installed distributions' entry points and versions, read without ``importlib.metadata``.

Importing ``importlib.metadata`` costs about 30 ms (it pulls in ``email``, ``zipfile`` and
``csv``); reading the two files robota needs costs about 2 ms. Every ``robota`` start needs the
runtime plugins' entry points and the version it tells agents, and a start that is ready
sooner is the point of the exercise, so the plain directories on ``sys.path`` are read here
the way ``importlib.metadata`` reads them: ``*.dist-info`` (and ``*.egg-info``) directories,
the first distribution of a name on the path wins, ``entry_points.txt`` is INI-like and
``METADATA`` starts with RFC 822 headers. Anything else (a zipped path entry, an unreadable
file) falls back to ``importlib.metadata``, so the answer is the same, only slower.
"""

from __future__ import annotations

import functools
import re
import sys
from dataclasses import dataclass
from pathlib import Path

__all__ = ["EntryPoint", "distribution_version", "entry_points", "robota_version"]

_SUFFIXES = (".dist-info", ".egg-info")


@dataclass(frozen=True, slots=True)
class EntryPoint:
    name: str
    value: str
    """``module`` or ``module:attribute``."""
    group: str

    def load(self) -> object:
        import importlib  # noqa: PLC0415 (only when a plugin is loaded)

        module, _, attribute = self.value.partition(":")
        target: object = importlib.import_module(module.strip())
        for part in filter(None, attribute.strip().split(".")):
            target = getattr(target, part)
        return target


def entry_points(group: str) -> list[EntryPoint]:
    """The entry points of ``group`` of every installed distribution.

    Read once per state of ``sys.path``: a start asks for the runtime and transport plugins
    several times (configuration checks, the prestart, the engine), and the answer changes only
    when the path or one of its directories does (``_path_key``: installing a distribution
    adds a directory, which changes its parent's modification time)."""
    path = _path_key()
    if _read.path != path:
        # Another path: every group is read again, from the files read again.
        _read.path, _read.groups, _read.texts = path, {}, None
    found = _read.groups.get(group)
    if found is None:
        found = _read.groups[group] = tuple(_scan_entry_points(group))
    return list(found)


class _Read:
    """The groups read so far on ``path``, and the distributions' ``entry_points.txt`` texts
    they were parsed from (read once for every group: ``None`` until read, or when a path
    entry needs ``importlib.metadata``)."""

    path: tuple[tuple[str, int], ...] | None = None
    groups: dict[str, tuple[EntryPoint, ...]]
    texts: list[str] | None = None

    def __init__(self) -> None:
        self.groups = {}


_read = _Read()


def _scan_entry_points(group: str) -> list[EntryPoint]:
    texts = _read.texts if _read.texts is not None else _entry_point_texts()
    if texts is None:
        return _slow_entry_points(group)
    _read.texts = texts
    return [entry for text in texts for entry in _parse_entry_points(text, group)]


def _entry_point_texts() -> list[str] | None:
    """Every distribution's ``entry_points.txt``; ``None`` when one cannot be read here."""
    texts: list[str] = []
    for info in _distributions():
        if info is None:
            return None
        try:
            texts.append((info / "entry_points.txt").read_text(encoding="utf-8"))
        except FileNotFoundError:
            continue
        except OSError:
            return None
    return texts


def distribution_version(name: str) -> str | None:
    """The installed version of distribution ``name``, or ``None`` when it is not installed."""
    wanted = _normalize(name)
    for info in _distributions():
        if info is None:
            return _slow_version(name)
        if _normalize(_dist_name(info.name)) != wanted:
            continue
        try:
            with (info / "METADATA").open(encoding="utf-8") as file:
                for line in file:
                    if not line.strip():
                        break  # the headers end at the first blank line
                    if line.startswith("Version:"):
                        return line.partition(":")[2].strip()
        except OSError:
            return _slow_version(name)
        return None
    return None


@functools.cache
def robota_version() -> str:
    """robota's installed version (``0+unknown`` when run from a tree that is not installed).
    Read once: every agent handshake says it."""
    return distribution_version("robota") or "0+unknown"


def _distributions() -> list[Path | None]:
    """Metadata directories, first of each name on ``sys.path`` only; ``None`` marks a path
    entry this reader cannot list (a zip file), where ``importlib.metadata`` must answer.
    Listed once per state of ``sys.path`` (see ``entry_points``)."""
    return list(_distributions_on(_path_key()))


def _path_key() -> tuple[tuple[str, int], ...]:
    """``sys.path`` with each entry's modification time (-1: none to read): one ``stat`` per
    entry, where listing them and reading their metadata costs a file per distribution."""
    key: list[tuple[str, int]] = []
    for entry in sys.path:
        try:
            key.append((entry, Path(entry or ".").stat().st_mtime_ns))
        except OSError:
            key.append((entry, -1))
    return tuple(key)


@functools.lru_cache(maxsize=4)
def _distributions_on(path: tuple[tuple[str, int], ...]) -> tuple[Path | None, ...]:
    seen: set[str] = set()
    found: list[Path | None] = []
    for entry, _mtime in path:
        directory = Path(entry or ".")
        if directory.is_file():
            found.append(None)
            continue
        try:
            infos = sorted(p for p in directory.iterdir() if p.name.endswith(_SUFFIXES))
        except OSError:
            continue
        for info in infos:
            key = _normalize(_dist_name(info.name))
            if key not in seen:
                seen.add(key)
                found.append(info)
    return tuple(found)


def _dist_name(base: str) -> str:
    for suffix in _SUFFIXES:
        base = base.removesuffix(suffix)
    return base.split("-", 1)[0]


def _normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _parse_entry_points(text: str, group: str) -> list[EntryPoint]:
    found: list[EntryPoint] = []
    section: str | None = None
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("[") and line.endswith("]"):
            section = line[1:-1].strip()
            continue
        if section == group and "=" in line:
            name, _, value = line.partition("=")
            found.append(EntryPoint(name.strip(), value.strip(), group))
    return found


def _slow_entry_points(group: str) -> list[EntryPoint]:
    from importlib import metadata  # noqa: PLC0415 (the slow path, see the docstring)

    return [EntryPoint(e.name, e.value, group) for e in metadata.entry_points(group=group)]


def _slow_version(name: str) -> str | None:
    from importlib import metadata  # noqa: PLC0415 (the slow path, see the docstring)

    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None
