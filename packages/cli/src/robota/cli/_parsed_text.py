"""What a YAML text parsed to, kept from one ``robota`` start to the next.

Why: a one-shot ``robota -p`` reads config.yaml before it can spawn its agent, and everything it
does before the agent's answer is on the critical path (``tools/bench/print_vs_raw.py``). The
YAML parser is most of that read: importing ruamel.yaml costs about 20 ms here and parsing the
profile's config (pure Python) about 5 ms, against 0.1 ms for reading the same data as JSON. The
text changes rarely, so the second start on the same text need not parse it at all.

What: ``ParsedCache`` maps the SHA-256 of a text to the plain data it parsed to, in one small JSON
file. ``robota.core.config``'s ``parse_yaml`` asks it first (the core's ``use_parse_cache``
hook) and tells it what a miss parsed to; validation runs on the data every time, as it does on
a fresh parse. It is used only once the ``robota`` script started (``parsed_cache_on``), never
by a library import, so tests that load configurations in-process parse every time.

Why it is exact: the key is the whole text, and only data JSON gives back unchanged is kept
(dicts with string keys, lists, strings, booleans, integers, finite floats, ``None``: what a
YAML config of robota holds; a timestamp, binary or a non-string key is never kept, so that
text is parsed each time). A parse that failed is never kept, so every error still comes from
the parser, with its line and column.

Why it is safe: the file is read and written by ``_cache_files``' rules (the user's own regular
file, nobody else's to write, at most 1 MiB; 0600, replaced whole), holds at most
``MAX_ENTRIES`` texts, and anything else (damaged JSON, another format, a forged key) is
ignored and replaced. It holds what config.yaml holds (a credential is a ``${NAME}``
reference there, expanded only after this) and is never logged.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from collections.abc import Callable, Mapping
from pathlib import Path

from ._cache_files import cache_dir, read_owned, serves_the_script, write_owned

__all__ = ["MAX_ENTRIES", "ParsedCache", "parsed_cache_on", "plain"]

MAX_BYTES = 1024 * 1024
MAX_ENTRIES = 8
"""The profile's config and a few projects' ``.robota/config.yaml``; the oldest goes first."""

_FORMAT = "robota parsed yaml 1"
_HEX = frozenset("0123456789abcdef")


def plain(data: object) -> bool:
    """Whether JSON gives ``data`` back exactly as it is."""
    if data is None or type(data) in (str, bool, int):
        return True
    if type(data) is float:
        return math.isfinite(data)
    if type(data) is list:
        return all(plain(item) for item in data)
    if type(data) is dict:
        return all(type(key) is str and plain(value) for key, value in data.items())
    return False


class ParsedCache:
    """The file at ``path`` (see the module docstring); a ``robota.core.config.ParseCache``."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._entries: dict[str, object] | None = None

    def parse(self, text: str, parse: Callable[[str], object]) -> object:
        """What ``text`` parses to: from the file when it holds it, else ``parse(text)``
        (remembered when it is plain data)."""
        key = hashlib.sha256(text.encode()).hexdigest()
        entries = self._read()
        if key in entries:
            return _copy(entries[key])  # the caller's to change, as a fresh parse would be
        data = parse(text)
        if plain(data):
            entries[key] = _copy(data)
            while len(entries) > MAX_ENTRIES:
                del entries[next(iter(entries))]
            self._write(entries)
        return data

    def _read(self) -> dict[str, object]:
        if self._entries is None:
            self._entries = _load(self.path)
        return self._entries

    def _write(self, entries: Mapping[str, object]) -> None:
        body = json.dumps({"format": _FORMAT, "entries": entries}, ensure_ascii=False).encode()
        if len(body) <= MAX_BYTES:
            try:
                write_owned(self.path, body)
            except OSError:
                pass  # a cache that cannot be written is only a slower start


def _copy(data: object) -> object:
    return json.loads(json.dumps(data))


def _load(path: Path) -> dict[str, object]:
    data = read_owned(path, MAX_BYTES)
    if data is None:
        return {}
    try:
        document = json.loads(data)
    except ValueError:
        return {}
    if not isinstance(document, dict) or document.get("format") != _FORMAT:
        return {}
    entries = document.get("entries")
    if not isinstance(entries, dict) or len(entries) > MAX_ENTRIES:
        return {}
    return {
        key: data
        for key, data in entries.items()
        if len(key) == 64 and _HEX.issuperset(key) and plain(data)
    }


def parsed_cache_on(env: Mapping[str, str] | None = None) -> ParsedCache | None:
    """Serve config.yaml's parse from the cache for the rest of this process, when the
    ``robota`` script started (``_cache_files.serves_the_script``) and the cache is not
    switched off; the cache, or ``None``."""
    from robota.core.config import parse_cache, use_parse_cache  # noqa: PLC0415 (--help)

    where = cache_dir(os.environ if env is None else env)
    if not serves_the_script() or where is None:
        return None
    path = where / "parsed-yaml.json"
    current = parse_cache()
    if isinstance(current, ParsedCache) and current.path == path:
        return current  # print mode loads its configuration twice: one read of the file
    cache = ParsedCache(path)
    use_parse_cache(cache)
    return cache
