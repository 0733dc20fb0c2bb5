"""One session's host messages in order, sans-IO: the ``seq`` stamp and the resume buffer.

Every message the session broadcasts (``publish``) gets the next ``seq`` of that session,
strictly increasing from 1, and stays in a bounded buffer (``RESUME_MESSAGES`` messages and
``RESUME_BYTES`` bytes of JSON, the oldest going first): the protocol's ``SeqLog``, the
numbering every carrier shares (``robota.core.protocol``). A client that reconnects and sends
``resume{lastSeq}`` gets ``replay(lastSeq)``: exactly the buffered messages after ``lastSeq``,
none twice and none missing, or ``None`` when the buffer no longer reaches back that far (the
adapter sends ``resume_gap`` and the client refreshes with ``get-messages``/``get-pending``).

A reply meant for one client only (``protocol_error``, ``resume_gap``, ``messages``,
``pending``, a ``hello``) is not part of the session's sequence: ``reply`` stamps it with the
seq of the last message published (the client's resume point stays right; another client never
sees a hole in its sequence). So a client sees seqs that never go down, and the published ones
strictly up.

The stream also keeps what ``get-messages`` and ``get-pending`` answer from: the conversation
(each prompt and each turn's end, ``TRANSCRIPT_MESSAGES`` at most) and the approvals not yet
resolved.
"""

from __future__ import annotations

from collections import deque
from typing import Any

from ..protocol import SeqLog, dumps, resume_gap

__all__ = ["RESUME_BYTES", "RESUME_MESSAGES", "TRANSCRIPT_MESSAGES", "SessionStream"]

RESUME_MESSAGES = 4096
RESUME_BYTES = 4 * 1024 * 1024
TRANSCRIPT_MESSAGES = 1000

_ENDS = {"complete": "assistant", "interrupted": "assistant", "error": "error"}


class SessionStream:
    """See the module docstring. One per session; not thread-safe (one loop owns it)."""

    def __init__(
        self, *, max_messages: int = RESUME_MESSAGES, max_bytes: int = RESUME_BYTES
    ) -> None:
        if max_messages < 1 or max_bytes < 1:
            raise ValueError(f"the buffer needs room: {max_messages} messages, {max_bytes} bytes")
        self.max_messages = max_messages
        self.max_bytes = max_bytes
        self._log: SeqLog[tuple[dict[str, Any], str]] = SeqLog(
            max_items=max_messages, max_bytes=max_bytes
        )
        self._transcript: deque[dict[str, Any]] = deque(maxlen=TRANSCRIPT_MESSAGES)
        self._pending: dict[str, dict[str, Any]] = {}

    @property
    def seq(self) -> int:
        """The seq of the last message published (0: none yet)."""
        return self._log.seq

    def publish(self, message: dict[str, Any]) -> tuple[dict[str, Any], str]:
        """Stamp ``message`` with the session's next seq and keep it; the stamped message and
        its JSON text (what every client is sent)."""
        stamped = {**message, "seq": self.seq + 1}
        text = _text(stamped)
        self._log.publish((stamped, text), len(text.encode()))
        self._remember(stamped)
        return stamped, text

    def reply(self, message: dict[str, Any]) -> tuple[dict[str, Any], str]:
        """A message for one client: stamped with the last published seq, not kept."""
        stamped = {**message, "seq": self.seq}
        return stamped, _text(stamped)

    @property
    def first_seq(self) -> int:
        """The oldest seq the buffer still holds (``seq + 1`` when it is empty)."""
        return self._log.first_seq

    def replay(self, last_seq: int) -> list[str] | None:
        """The JSON texts of every message after ``last_seq``, oldest first; ``None`` when
        the buffer lost some of them, or ``last_seq`` is beyond the last message (a client
        that holds seqs this stream never published lost track of the session)."""
        kept = self._log.replay(last_seq)
        return None if kept is None else [text for _, text in kept]

    def gap(self, last_seq: int) -> dict[str, Any]:
        """The ``resume_gap`` reply for a ``resume{last_seq}`` that ``replay`` cannot serve."""
        return resume_gap(self._log, last_seq)

    def messages(self) -> dict[str, Any]:
        """The ``messages`` reply: the conversation as this host saw it, oldest first."""
        return {"type": "messages", "messages": list(self._transcript)}

    def pending(self) -> dict[str, Any]:
        """The ``pending`` reply: the approvals waiting for an answer."""
        return {"type": "pending", "approvals": list(self._pending.values())}

    def pending_ids(self) -> list[str]:
        return list(self._pending)

    def _remember(self, message: dict[str, Any]) -> None:
        kind = message["type"]
        if kind == "user_message":
            self._transcript.append(
                {"role": "user", "text": message.get("prompt"), "seq": message["seq"]}
            )
        elif kind in _ENDS:
            text = message.get("result") if kind != "error" else message.get("message")
            self._transcript.append({"role": _ENDS[kind], "text": text, "seq": message["seq"]})
            self._pending.clear()  # a turn's end ends its questions
        elif kind == "permission_request":
            self._pending[message["id"]] = message
        elif kind == "prompt_resolved":
            self._pending.pop(message["id"], None)


def _text(message: dict[str, Any]) -> str:
    return dumps(message).decode()
