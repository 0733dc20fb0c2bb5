"""What crosses between a team's transport, its door and its actor, as plain values.

The parsed message a transport hands in (``TeamMessage``), the effects it performs through
its ``TeamReplies`` (``DoorEffect``: ``ThreadReply``, ``StartRequest``, ``FollowUpInput``,
``GroupNote``; the door's module docstring says what each means), and the confirmation
messages and effects of the team's registry (``AskConfirmation``, ``AnswerConfirmation``,
``SweepConfirmations``, ``TeamEffect``). Shared by the door's pure core (``_core``), the
team actor that owns the door's state (``_actor``) and the door's shell (``_door``), so none
of them imports another for a type.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from ..engine import FrontEndRequest, NewTask, TaskSettings, UserInput
from ..policy import Cancelled, Confirmed, Expired, Pending, SchedulerEffect

__all__ = [
    "AnswerConfirmation",
    "AskConfirmation",
    "DoorEffect",
    "FollowUpInput",
    "GroupNote",
    "StartRequest",
    "SweepConfirmations",
    "TeamEffect",
    "TeamMessage",
    "TeamReplies",
    "ThreadReply",
]


@dataclass(frozen=True, slots=True)
class TeamMessage:
    chat: str
    sender: str
    text: str
    """The bot's mention removed."""
    message_id: str
    route: str
    """The route of the request thread: the message's own (a new request) or its thread's."""
    in_thread: bool
    """The message is inside a request's thread (a follow-up), not a new request."""


@dataclass(frozen=True, slots=True)
class ThreadReply:
    route: str
    anchor: str
    """The message replied to (in its thread)."""
    text: str


@dataclass(frozen=True, slots=True)
class StartRequest:
    route: str
    anchor: str
    text: str
    """The request's prompt."""
    settings: TaskSettings
    new_task: bool
    """Start the route on a new task first (its first request); else the thread's task."""

    def requests(self) -> list[FrontEndRequest]:
        """What the transport tells the route, in order."""
        opening = [NewTask(self.settings, announce=False)] if self.new_task else []
        return [*opening, UserInput(self.text, message_id=self.anchor)]


@dataclass(frozen=True, slots=True)
class FollowUpInput:
    route: str
    anchor: str
    text: str

    def requests(self) -> list[FrontEndRequest]:
        return [UserInput(self.text, message_id=self.anchor)]


@dataclass(frozen=True, slots=True)
class GroupNote:
    text: str


DoorEffect = ThreadReply | StartRequest | FollowUpInput | GroupNote


@runtime_checkable
class TeamReplies(Protocol):
    """What a transport gives its team door: ``perform`` one effect (any thread, quick)."""

    def perform(self, effect: DoorEffect) -> None: ...


TeamEffect = SchedulerEffect | Confirmed | Cancelled | Expired
"""What the team's registry decided, delivered once the registry that holds it is committed."""


@dataclass(frozen=True, slots=True)
class AskConfirmation:
    pending: Pending


@dataclass(frozen=True, slots=True)
class AnswerConfirmation:
    thread: str
    sender: str
    text: str
    now: float


@dataclass(frozen=True, slots=True)
class SweepConfirmations:
    now: float
