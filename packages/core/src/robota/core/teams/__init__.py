"""robota.core.teams: the team actor, one per configured team (``teams.<name>``).

``TeamActor`` keeps a team's dispatch scheduler and pending confirmations (the pure state
machines of ``robota.core.policy``) and persists them in the store (``teams`` row) before it
delivers any effect, so the registry survives a host restart: queued requests run after it, in
order. ``TeamDoor`` is a team's message pipeline as the chat transports see it: a parsed
``TeamMessage`` in, ``DoorEffect``s out through the transport's ``TeamReplies`` (replies in the
request's thread, a task started or continued on the thread's route, notes to the group); the
host builds one door and one actor per configured team and hands the doors to their transport.

Modules: ``_values`` (what crosses between them), ``_core`` (the door's decisions, pure:
state and event in, state and effects out), ``_actor`` (the team actor, which owns the
registry and the door's state and carries the core's effects out), ``_door`` (the door's thin
shell: each call a message to the actor; ``LoopReplies``).
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
from ._door import LoopReplies, TeamDoor, say_offline
from ._values import (
    DoorEffect,
    FollowUpInput,
    GroupNote,
    StartRequest,
    TeamMessage,
    TeamReplies,
    ThreadReply,
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
