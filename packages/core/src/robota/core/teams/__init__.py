"""robota.core.teams: the team actor, one per configured team (``teams.<name>``).

``TeamActor`` keeps a team's dispatch scheduler and pending confirmations (the pure state
machines of ``robota.core.policy``) and persists them in the store (``teams`` row) before it
delivers any effect, so the registry survives a host restart: queued requests run after it, in
order. ``TeamDoor`` is a team's message pipeline as the chat transports see it: a parsed
``TeamMessage`` in, ``DoorEffect``s out through the transport's ``TeamReplies`` (replies in the
request's thread, a task started or continued on the thread's route, notes to the group); the
host builds one door and one actor per configured team and hands the doors to their transport.
"""

from ._actor import (
    AnswerConfirmation,
    AskConfirmation,
    SweepConfirmations,
    TeamActor,
    TeamEffect,
    TeamSnapshot,
    TeamState,
)
from ._door import (
    DoorEffect,
    FollowUpInput,
    GroupNote,
    LoopReplies,
    StartRequest,
    TeamDoor,
    TeamMessage,
    TeamReplies,
    ThreadReply,
    say_offline,
)

__all__ = [
    "AnswerConfirmation",
    "DoorEffect",
    "FollowUpInput",
    "GroupNote",
    "LoopReplies",
    "StartRequest",
    "TeamDoor",
    "TeamMessage",
    "TeamReplies",
    "ThreadReply",
    "AskConfirmation",
    "SweepConfirmations",
    "TeamActor",
    "TeamEffect",
    "TeamSnapshot",
    "TeamState",
    "say_offline",
]
