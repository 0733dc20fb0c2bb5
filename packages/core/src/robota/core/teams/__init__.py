"""robota.core.teams: the team actor, one per configured team (``teams.<name>``).

``TeamActor`` keeps a team's dispatch scheduler and pending confirmations (the pure state
machines of ``robota.core.policy``) and persists them in the store (``teams`` row) before it
delivers any effect, so the registry survives a host restart: queued requests run after it, in
order. The team's message pipeline (parsing, permission checks, replies in threads) and its
wiring to the chat transports and the host come with the transports.
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

__all__ = [
    "AnswerConfirmation",
    "AskConfirmation",
    "SweepConfirmations",
    "TeamActor",
    "TeamEffect",
    "TeamSnapshot",
    "TeamState",
]
