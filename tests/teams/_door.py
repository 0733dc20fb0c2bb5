"""A team, its door's deliveries recorded, and a member's message, for the door's tests."""

from __future__ import annotations

from pathlib import Path

from robota.core.config import IntentConfig, TeamConfig
from robota.core.teams import (
    DoorEffect,
    TeamMessage,
)

from ._deliveries import Deliveries

ADMIN, MEMBER, OTHER = "ou_admin", "ou_member", "ou_other"

TEAM = TeamConfig(
    name="web",
    transport="slack",
    chat="C1",
    project=Path("/p"),
    admins=frozenset({ADMIN}),
    slots=3,
    intents={
        "release": IntentConfig(
            key="release", description="release", prompt="release {args}", tags=()
        ),
    },
    intent_permissions={"release": "admin-confirm"},
)


class Recorded(Deliveries):
    """The door's effects, kept in order (``Deliveries`` as the transport's ``TeamReplies``)."""

    def perform(self, effect: DoorEffect) -> None:
        self(effect)  # type: ignore[arg-type]  (Deliveries is typed for the actor's effects)


def message(n: int, text: str, sender: str, *, thread: int | None = None) -> TeamMessage:
    route = f"slack:C1:{thread if thread is not None else n}"
    return TeamMessage("C1", sender, text, f"m{n}", route, in_thread=thread is not None)
