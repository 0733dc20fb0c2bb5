"""Tab completion of slash commands and the prompt history: pure functions of the input line.

Completion looks only at the line's first word, the command name; the names are the engine's
``COMMANDS`` plus the TUI's own ``/exit``. A unique match is completed with a trailing space; a
shared prefix is extended as far as the candidates agree, and the candidates are returned for
the hint line.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

__all__ = ["LOCAL_COMMANDS", "Completion", "History", "command_names", "complete"]

LOCAL_COMMANDS = ("exit",)
"""Handled by the TUI itself, never sent to the engine."""


@dataclass(frozen=True, slots=True)
class Completion:
    text: str
    cursor: int
    candidates: tuple[str, ...] = ()
    """The names that still match (empty when completed or when nothing matches)."""


def command_names() -> tuple[str, ...]:
    from robota.core.engine import COMMANDS  # noqa: PLC0415 (engine imports are heavy)

    return tuple(sorted({spec.name for spec in COMMANDS} | set(LOCAL_COMMANDS)))


def complete(text: str, cursor: int, names: Iterable[str]) -> Completion | None:
    """The completed line, or ``None`` when the cursor is not on a command name."""
    if not text.startswith("/") or text.startswith("//"):
        return None
    end = len(text.split(" ", 1)[0])
    if cursor > end:
        return None
    word = text[1:end].lower()
    rest = text[end:]
    matches = sorted(name for name in names if name.startswith(word))
    if not matches:
        return Completion(text, cursor)
    if len(matches) == 1:
        suffix = rest if rest else " "
        line = f"/{matches[0]}{suffix}"
        return Completion(line, len(matches[0]) + 2)
    shared = os.path.commonprefix(matches)  # noqa: RUF071 (names: a character prefix)
    line = f"/{shared}{rest}"
    return Completion(line, len(shared) + 1, tuple(matches))


class History:
    """Lines sent, oldest first; ``older``/``newer`` walk it like a shell (Up, Down)."""

    def __init__(self, lines: Sequence[str] = (), limit: int = 500) -> None:
        self._lines = list(lines)[-limit:]
        self._limit = limit
        self._at = len(self._lines)
        self._draft = ""

    def add(self, line: str) -> None:
        if line.strip() and (not self._lines or self._lines[-1] != line):
            self._lines.append(line)
            del self._lines[: -self._limit]
        self._at = len(self._lines)
        self._draft = ""

    def older(self, current: str) -> str | None:
        if self._at == 0:
            return None
        if self._at == len(self._lines):
            self._draft = current  # what was being typed comes back at the bottom
        self._at -= 1
        return self._lines[self._at]

    def newer(self) -> str | None:
        if self._at >= len(self._lines):
            return None
        self._at += 1
        return self._draft if self._at == len(self._lines) else self._lines[self._at]
