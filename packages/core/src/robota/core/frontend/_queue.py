"""A queued prompt's note and its Cancel action, platform-neutral (issues 14 and 15).

Text sent while a turn runs on an agent that cannot steer waits in the route's queue
(``InputQueued``, its ``prompt_id``). A chat transport says so beside the person's message
with a Cancel action whose opaque token is bound in the store to the route and the prompt
(``QUEUE_CANCEL``; its ``decision`` is the prompt id). ``QueueNotes`` keeps each note's state,
pure: ``queued`` until its prompt's turn begins (``started``: the action goes) or a click
cancels it (``cancelled``: the engine's ``/queue cancel N``, the same path as typing it).

``click`` is the decision for a claimed token: ``cancel`` (tell the route), ``started`` (too
late: it runs) or ``cancelled`` / ``unknown`` (nothing to do).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from .._records import replace
from ..engine import prompt_answers

__all__ = [
    "QUEUE_CANCEL",
    "QueueClick",
    "QueueNote",
    "QueueNotes",
    "QueueState",
    "queue_texts",
]

QUEUE_CANCEL = "queue_cancel"
"""The ``approval_id`` of a queued note's Cancel action (its ``decision``: the prompt id)."""

KEPT = 1000
"""Notes kept per transport: settled ones beyond it are forgotten, oldest first."""
QueueState = Literal["queued", "started", "cancelled"]
QueueClick = Literal["cancel", "started", "cancelled", "unknown"]


@dataclass(frozen=True, slots=True)
class QueueNote:
    route_key: str
    prompt_id: int
    text: str
    anchor: str | None
    """The person's message the note answers."""
    message_id: str | None = None
    """The note's own message, once posted."""
    state: QueueState = "queued"
    ahead: int = 0
    """Prompts queued before it (``InputQueued.ahead``)."""


class QueueNotes:
    """See the module docstring: the notes by (route key, prompt id)."""

    def __init__(self) -> None:
        self._notes: dict[tuple[str, int], QueueNote] = {}

    def queued(
        self, route_key: str, prompt_id: int, text: str, anchor: str | None, ahead: int = 0
    ) -> QueueNote:
        note = QueueNote(route_key, prompt_id, text, anchor, ahead=ahead)
        self._notes[(route_key, prompt_id)] = note
        if len(self._notes) > KEPT:  # the oldest settled notes go (a click then: ``unknown``)
            for key in [k for k, n in self._notes.items() if n.state != "queued"][: -KEPT // 2]:
                del self._notes[key]
        return note

    def posted(self, route_key: str, prompt_id: int, message_id: str) -> QueueNote | None:
        """The note's message exists; the note as it stands now (it may have started)."""
        note = self._notes.get((route_key, prompt_id))
        if note is None:
            return None
        note = self._notes[(route_key, prompt_id)] = replace(note, message_id=message_id)
        return note

    def began(self, route_key: str, prompt: str) -> QueueNote | None:
        """A turn began on ``route_key`` with ``prompt``: the oldest queued note it answers,
        now ``started`` (its action goes), if any."""
        for key, note in self._notes.items():
            if (
                note.route_key == route_key
                and note.state == "queued"
                and prompt_answers(prompt, note.text)
            ):
                started = self._notes[key] = replace(note, state="started")
                return started
        return None

    def click(self, route_key: str, prompt_id: int) -> QueueClick:
        """A claimed Cancel of ``prompt_id``: what to do (a ``cancel`` marks it cancelled)."""
        note = self._notes.get((route_key, prompt_id))
        if note is None:
            return "unknown"
        if note.state != "queued":
            return note.state
        self._notes[(route_key, prompt_id)] = replace(note, state="cancelled")
        return "cancel"

    def waiting(self, route_key: str) -> bool:
        """Whether a note of ``route_key`` is still ``queued`` (its prompt has not begun)."""
        return any(n.route_key == route_key and n.state == "queued" for n in self._notes.values())

    def get(self, route_key: str, prompt_id: int) -> QueueNote | None:
        return self._notes.get((route_key, prompt_id))

    def forget(self, route_key: str) -> None:
        """Drop ``route_key``'s settled notes (its chat was let go): a click on one then finds
        it ``unknown``, as after a restart. A note still ``queued`` stays."""
        for key in [k for k, n in self._notes.items() if k[0] == route_key]:
            if self._notes[key].state != "queued":
                del self._notes[key]

    def __len__(self) -> int:
        return len(self._notes)


def queue_texts(locale: str) -> Mapping[str, str]:
    """The note's words on every platform: ``queued`` (``{ahead}``), the action, the after."""
    if locale.startswith("zh"):
        return {
            "queued": "已排队:当前这一轮结束后开始(前面还有 {ahead} 条)。",
            "cancel": "取消",
            "cancelled": "已取消:这条消息不会运行。",
            "started": "已开始运行。",
            "too_late": "已开始运行,无法取消",
            "cancelling": "正在取消",
        }
    return {
        "queued": "Queued: it starts when the running turn ends ({ahead} ahead).",
        "cancel": "Cancel",
        "cancelled": "Cancelled: this message will not run.",
        "started": "Started.",
        "too_late": "It already started: too late to cancel",
        "cancelling": "Cancelling",
    }
