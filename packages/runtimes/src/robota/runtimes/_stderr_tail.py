"""An agent's last words: a bounded, cleaned and redacted tail of what it wrote on stderr.

When an agent dies at start or mid-turn, its exit code says nothing; what it printed on stderr
usually says everything (Codex: ``Error: approval_policy = "untrusted" is no longer supported``).
So each agent process keeps the end of its stderr, and the reason a turn, a probe or a check
fails with ends with it (``with_last_words``).

Bounded three ways, so a chatty agent costs a fixed amount of memory and a failure stays
readable: the last ``TAIL_LINES`` lines, at most ``TAIL_BYTES`` bytes of text in all, each line
cut to ``LINE_WIDTH`` characters. Cleaned: terminal escapes (colours, cursor moves, titles) and
other control characters are removed, blank lines skipped.

Redacted, because the text goes to a user's terminal, a chat message and the log: the exact
values robota knows are secret (``AgentLaunch.secrets``: the profile's .env, secret-named config
fields and environment variables; and the variables robota scrubbed from the agent's
environment) and every
well-known token shape (``sk-...``, ``xoxb-``/``xapp-``, ``Bearer ...``, ...), both through
``robota.core.logs.Redactor``. A line is redacted whole before it is cut, so a cut never leaves
half a secret behind that the patterns no longer recognise.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Iterable, Mapping, Sequence

from robota.core.logs import Redactor

__all__ = [
    "LINE_WIDTH",
    "SCRUBBED_MIN_LENGTH",
    "TAIL_BYTES",
    "TAIL_LINES",
    "StderrTail",
    "agent_secrets",
    "clean_line",
    "with_last_words",
]

TAIL_LINES = 20
TAIL_BYTES = 4096
LINE_WIDTH = 240
SCRUBBED_MIN_LENGTH = 8
"""Shortest scrubbed value masked: no credential is shorter, and masking ``debug`` or ``1``
everywhere would hide what the agent said."""
_RAW_LIMIT = 16 * 1024
"""Bytes of one raw line looked at; well over ``LINE_WIDTH``, so the cut happens after redaction
and a secret that straddles this limit is cut off with the rest of the line anyway."""

_ESCAPES = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"  # CSI: colours, cursor moves, erase
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"  # OSC: window titles, hyperlinks
    r"|\x1b[PX^_][^\x1b]*(?:\x1b\\)?"  # DCS, SOS, PM, APC strings
    r"|\x1b[@-Z\\-_]"  # other two-byte escapes
    r"|\x9b[0-?]*[ -/]*[@-~]"  # 8-bit CSI
)
_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def clean_line(raw: bytes, redactor: Redactor, *, width: int = LINE_WIDTH) -> str | None:
    """One stderr line as a user may see it, or ``None`` when nothing readable is left.

    Decoded (bad bytes replaced), escapes and control characters removed, tabs made spaces,
    secrets masked, then cut to ``width`` characters with an ellipsis.
    """
    text = raw[:_RAW_LIMIT].decode(errors="replace")
    text = _CONTROLS.sub("", _ESCAPES.sub("", text)).replace("\t", "    ").rstrip()
    if not text.strip():
        return None
    text = redactor.redact(text)
    return text if len(text) <= width else text[: width - 1] + "…"


def agent_secrets(
    inherited: Mapping[str, str], scrubbed: Iterable[str], known: Iterable[str] = ()
) -> frozenset[str]:
    """What to mask in an agent's stderr besides the token shapes: the secrets robota was told
    of (``known``: ``AgentLaunch.secrets``) and the values of the variables it ``scrubbed`` from
    the agent's environment (robota's chat credentials and settings), those of at least
    ``SCRUBBED_MIN_LENGTH`` characters."""
    removed = (inherited[name] for name in scrubbed if name in inherited)
    return frozenset(known) | {value for value in removed if len(value) >= SCRUBBED_MIN_LENGTH}


def with_last_words(reason: str, lines: Sequence[str]) -> str:
    """``reason``, followed by the agent's last stderr lines when it left any."""
    if not lines:
        return reason
    shown = "\n".join(f"  {line}" for line in lines)
    return f"{reason}; its stderr ended with:\n{shown}"


class StderrTail:
    """The last lines of one agent's stderr, cleaned and redacted as they arrive.

    Only redacted text is ever stored, so nothing that reads the tail (a report, a log line)
    can see a secret the redactor knows.
    """

    __slots__ = ("_bytes", "_lines", "_max_bytes", "_redactor", "_width")

    def __init__(
        self,
        secrets: Iterable[str] = (),
        *,
        lines: int = TAIL_LINES,
        max_bytes: int = TAIL_BYTES,
        width: int = LINE_WIDTH,
    ) -> None:
        self._redactor = Redactor(secrets)
        self._lines: deque[str] = deque(maxlen=lines)
        self._bytes = 0
        self._max_bytes = max_bytes
        self._width = width

    def add(self, raw: bytes) -> str | None:
        """Keep one raw line (without its newline); the cleaned text kept, if any."""
        line = clean_line(raw, self._redactor, width=self._width)
        if line is None:
            return None
        if len(self._lines) == self._lines.maxlen:
            self._bytes -= _size(self._lines[0])
        self._lines.append(line)
        self._bytes += _size(line)
        while self._bytes > self._max_bytes and len(self._lines) > 1:
            self._bytes -= _size(self._lines.popleft())
        return line

    def lines(self) -> tuple[str, ...]:
        return tuple(self._lines)


def _size(line: str) -> int:
    return len(line.encode()) + 1
