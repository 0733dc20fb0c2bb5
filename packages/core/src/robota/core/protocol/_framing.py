"""The protocol's framing, sans-IO: one JSON message per ``\\n``-terminated line, bounded.

Framing is apart from the vocabulary (``_envelope``, ``_notices``): a Unix socket (the control
and attach carriers) and, later, a mesh link's TLS stream frame messages this way; the
WebSocket frames them itself (one text frame each). ``encode_line`` writes one message;
``LineSplitter`` reads them back.

A peer controls how much one line asks the reader to hold. The splitter keeps at most
``max_line`` bytes of the current line: the moment a line grows past that, it reports an
``Overlong`` (carrying the line's first bytes, for the error message) and drops everything up
to the next newline as it streams past. A line of
any length therefore costs ``max_line`` bytes of memory, and the line after it is read as if
nothing had happened.

Splitting is independent of how the bytes arrive: feeding ``b"ab\\ncd\\n"`` whole or one byte
at a time yields the same items (the property the tests check with hypothesis).

The attach carrier's frames (``_notices``) are such lines, each an object with a string
``type``: ``encode_frame`` and ``decode_frame`` live here, apart from the notices' encoding,
so that a client that only relays frames (print mode on a warm host) loads no engine.
"""

from __future__ import annotations

from typing import Any

from ._json import ProtocolError, dumps, loads_strict
from ._record import Record

__all__ = [
    "MAX_FRAME",
    "MAX_LINE",
    "LineSplitter",
    "Overlong",
    "WireError",
    "decode_frame",
    "encode_frame",
    "encode_line",
]

MAX_LINE = 1024 * 1024
"""The longest line a carrier reads by default (1 MiB)."""

_HEAD = 80
"""At most this many bytes of an overlong line are kept to say what it was."""


class Overlong(Record):
    """A line longer than ``limit`` bytes was skipped; ``head`` is how it began."""

    __slots__ = ("head", "limit")
    __match_args__ = ("head", "limit")

    head: bytes
    limit: int

    def __init__(self, head: bytes, limit: int) -> None:
        object.__setattr__(self, "head", head)
        object.__setattr__(self, "limit", limit)


class LineSplitter:
    """Splits a byte stream at ``\\n``; a line keeps its other bytes (``\\r`` included)."""

    def __init__(self, max_line: int) -> None:
        if max_line < 1:
            raise ValueError(f"max_line must be at least 1, not {max_line}")
        self.max_line = max_line
        self._line = bytearray()
        self._skipping = False

    def feed(self, data: bytes | bytearray) -> list[bytes | Overlong]:
        """The lines ``data`` completes, in order, and an ``Overlong`` for each line that
        outgrew the bound (reported once, when it does, not when its newline finally comes)."""
        out: list[bytes | Overlong] = []
        start = 0
        while start <= len(data):
            newline = data.find(b"\n", start)
            end = len(data) if newline < 0 else newline
            self._extend(data[start:end], out)
            if newline < 0:
                break
            if self._skipping:
                self._skipping = False
            else:
                out.append(bytes(self._line))
            self._line.clear()
            start = newline + 1
        return out

    def close(self) -> list[bytes | Overlong]:
        """End of stream: the unterminated last line, if there is one and it fit."""
        rest = b"" if self._skipping else bytes(self._line)
        self._line.clear()
        self._skipping = False
        return [rest] if rest else []

    @property
    def pending(self) -> int:
        """Bytes of the current, unterminated line held in memory (never over ``max_line``)."""
        return len(self._line)

    def _extend(self, chunk: bytes | bytearray, out: list[bytes | Overlong]) -> None:
        if self._skipping or not chunk:
            return
        room = self.max_line - len(self._line)
        if len(chunk) <= room:
            self._line += chunk
            return
        # At most max_line + 1 bytes, always available here: the head does not depend on how
        # the line was chunked.
        size = min(_HEAD, self.max_line + 1)
        head = bytes(self._line[:size]) + bytes(chunk[: max(0, size - len(self._line))])
        self._line.clear()
        self._skipping = True
        out.append(Overlong(head, self.max_line))


def encode_line(message: object) -> bytes:
    """One message, one line (compact UTF-8 JSON and its ``\\n``)."""
    return dumps(message) + b"\n"


MAX_FRAME = 1024 * 1024
"""The longest attach frame either side reads (1 MiB); a longer one ends that connection."""


class WireError(ProtocolError):
    """A frame that is not one of the attach carrier's; the message says what was wrong."""


def encode_frame(frame: dict[str, Any]) -> bytes:
    return dumps(frame) + b"\n"


def decode_frame(line: bytes) -> dict[str, Any]:
    """One line to its frame (an object with a string ``type``), or ``WireError``."""
    try:
        frame = loads_strict(line)
    except ValueError:
        raise WireError("the frame is not JSON") from None
    if not isinstance(frame, dict) or not isinstance(frame.get("type"), str):
        raise WireError("a frame is a JSON object with a string 'type'", "type")
    return frame
