"""``seq`` and resume, sans-IO: one stream's messages numbered, a bounded tail kept to replay.

Every carrier whose peer may drop and come back numbers what it publishes the same way: the
stream's ``SeqLog`` gives each message the next ``seq`` (strictly increasing from 1) and keeps
the newest in a buffer bounded in messages and in bytes (the oldest going first). A peer that
comes back names the last seq it holds and gets ``replay(last_seq)``: exactly the kept messages
after it, none twice and none missing, or ``None`` when the buffer no longer reaches back that
far or ``last_seq`` is beyond anything published (a peer that holds seqs this stream never
published lost track of it). For ``None`` the carrier sends ``resume_gap(log, last_seq)`` and
the peer refreshes another way (the WebSocket's ``get-messages``, the terminal's fresh view).

The WebSocket host (``robota.core.surfaces``) and the attach carrier (a background session's
terminals) number their streams with it; the mesh links will.
"""

from __future__ import annotations

from collections import deque
from typing import Any, Generic, TypeVar

__all__ = ["SeqLog", "resume_gap"]

T = TypeVar("T")


class SeqLog(Generic[T]):
    """See the module docstring. Not thread-safe: one loop owns a stream."""

    def __init__(self, *, max_items: int, max_bytes: int) -> None:
        if max_items < 1 or max_bytes < 1:
            raise ValueError(f"the buffer needs room: {max_items} messages, {max_bytes} bytes")
        self.max_items = max_items
        self.max_bytes = max_bytes
        self.seq = 0
        """The seq of the last message published (0: none yet)."""
        self._kept: deque[tuple[T, int]] = deque()
        self._bytes = 0

    def publish(self, item: T, size: int) -> int:
        """Keep ``item`` (``size`` bytes, as it goes out) under the next seq; that seq. The
        newest message is always kept, whatever its size."""
        self.seq += 1
        self._kept.append((item, size))
        self._bytes += size
        while len(self._kept) > self.max_items or (
            self._bytes > self.max_bytes and len(self._kept) > 1
        ):
            _, old = self._kept.popleft()
            self._bytes -= old
        return self.seq

    @property
    def first_seq(self) -> int:
        """The oldest seq still kept (``seq + 1`` when nothing is)."""
        return self.seq - len(self._kept) + 1

    def replay(self, last_seq: int) -> list[T] | None:
        """Every kept message after ``last_seq``, oldest first; ``None`` for a gap."""
        if last_seq > self.seq or last_seq + 1 < self.first_seq:
            return None
        skip = last_seq + 1 - self.first_seq
        return [item for index, (item, _) in enumerate(self._kept) if index >= skip]


def resume_gap(log: SeqLog[Any], last_seq: int) -> dict[str, Any]:
    """The ``resume_gap`` message for a resume from ``last_seq`` that ``replay`` cannot serve:
    what the peer asked for and what the stream still has."""
    return {
        "type": "resume_gap",
        "lastSeq": last_seq,
        "firstSeq": log.first_seq,
        "latestSeq": log.seq,
    }
