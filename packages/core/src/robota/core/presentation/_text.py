"""Text shaping shared by every renderer: launchers, truncation, ids, icons, durations.

Pure functions of their arguments; no renderer state lives here.
"""

from __future__ import annotations

import functools
import hashlib
import re
import shlex

from ..events import ToolStatus

__all__ = [
    "RESTRICTED",
    "STATUS_ICONS",
    "element_id",
    "format_elapsed",
    "head",
    "strip_launcher",
    "tail_bytes",
    "tail_lines",
    "utf8_len",
]

RESTRICTED = "Restricted"
"""What every renderer shows on the turn of an untrusted workspace (``TurnView.restricted``)."""

STATUS_ICONS: dict[ToolStatus, str] = {
    "pending": "⏸️",
    "in_progress": "⏳",
    "completed": "✅",
    "failed": "❌",
    "declined": "🚫",
}

# A POSIX shell (optionally through /usr/bin/env, optionally with a path) given a command string:
# `/bin/bash -lc '...'`, `/bin/zsh -c "..."`, `/usr/bin/env sh -c ...`, `sh -c ...`.
_POSIX_LAUNCHER = re.compile(
    r"^\s*(?:(?:/usr)?/bin/env\s+)?(?:\S*/)?(?:ba|z|da|k|fi)?sh\s+-(?:l?c|cl)\s+(?P<rest>.+)$",
    re.DOTALL,
)
# PowerShell: `powershell.exe -NoProfile -Command "..."`, `pwsh -Command ...`.
_POWERSHELL_LAUNCHER = re.compile(
    r"^\s*(?:\S*[/\\])?(?:powershell|pwsh)(?:\.exe)?\s+(?:-\w+\s+)*?-(?:Command|c)\s+(?P<rest>.+)$",
    re.DOTALL | re.IGNORECASE,
)


# Memoised: renderers strip a tool's command at each redraw of its panel (a running tool is
# redrawn at every output update), and shlex takes some 13 us for a one-line command.
@functools.lru_cache(maxsize=256)
def strip_launcher(command: str) -> str:
    """The command a shell launcher runs, for display only (never for execution).

    ``/bin/bash -lc 'echo hi'`` shows as ``echo hi``; anything that is not a launcher, or whose
    argument does not parse as exactly one shell word, comes back unchanged (a half-stripped
    command would misstate what runs).
    """
    for pattern in (_POSIX_LAUNCHER, _POWERSHELL_LAUNCHER):
        match = pattern.match(command)
        if match is None:
            continue
        rest = match.group("rest").strip()
        if pattern is _POWERSHELL_LAUNCHER:
            if len(rest) >= 2 and rest[0] == rest[-1] and rest[0] in "\"'":
                return rest[1:-1].strip() or command
            return rest
        try:
            words = shlex.split(rest)
        except ValueError:
            return command
        if len(words) == 1 and words[0].strip():
            return words[0].strip()
        return command
    return command


def utf8_len(text: str) -> int:
    return len(text.encode("utf-8"))


def head(text: str, limit: int, ellipsis: str = "…") -> str:
    """At most ``limit`` characters of ``text``, ending in ``ellipsis`` when cut."""
    if len(text) <= limit:
        return text
    return text[: max(0, limit - len(ellipsis))] + ellipsis


def tail_bytes(text: str, limit: int) -> tuple[str, int]:
    """The last ``limit`` UTF-8 bytes of ``text`` (never half a character) and how many bytes
    were dropped before them."""
    data = text.encode("utf-8")
    if len(data) <= limit:
        return text, 0
    kept = data[len(data) - limit :].decode("utf-8", errors="ignore")
    return kept, len(data) - utf8_len(kept)


def tail_lines(text: str, count: int) -> tuple[list[str], int]:
    """The last ``count`` non-empty-tailed lines of ``text`` and how many lines came before."""
    lines = text.rstrip("\n").split("\n") if text.strip() else []
    if len(lines) <= count:
        return lines, 0
    return lines[len(lines) - count :], len(lines) - count


def element_id(prefix: str, key: str) -> str:
    """A Feishu ``element_id``: a letter, then ``_`` and 16 hex digits of a hash of ``key``.

    18 characters, within the 20 allowed; the same key gives the same id in every update, so the
    client keeps a user's expansion of a panel across full-card replacements.
    """
    digest = hashlib.blake2b(key.encode("utf-8"), digest_size=8).hexdigest()
    return f"{prefix[:1]}_{digest}"


def format_elapsed(seconds: float | None) -> str:
    if seconds is None:
        return ""
    whole = max(0, int(seconds))
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}h {minutes:02d}m"
    if minutes:
        return f"{minutes}m {secs:02d}s"
    return f"{secs}s"
