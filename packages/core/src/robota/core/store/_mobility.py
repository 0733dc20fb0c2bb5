"""What a task's session handoffs mean for it, read from ``mesh_handoffs`` (``_handoffs``
writes it).

What a task's handoffs mean for it is read, not stored twice (``task_mobility``): a task with
a source handoff not yet ended is ``moving`` (it takes no input), one whose source handoff
committed has ``moved`` to the peer, and a destination copy not yet released by its source is
``held`` (listed, not startable). The writes that give a task input refuse such a task in
their own transaction (``refuse_immobile``, raising ``TaskImmobile``): recording the offer and
a turn's attempt both run on the one store writer, so one of them always sees the other.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from .._errors import StoreError
from ._database import Database

__all__ = [
    "LIVE_PHASES",
    "TaskImmobile",
    "TaskMobility",
    "mobility_refusal",
    "refuse_immobile",
    "task_mobility",
]

LIVE_PHASES = ("offered", "transferring", "staged")
"""A handoff in one of these phases has not ended (``_handoffs``' phases)."""


@dataclass(frozen=True, slots=True)
class TaskMobility:
    """What a task's handoffs mean for it (module docstring)."""

    state: Literal["moving", "moved", "held"]
    peer: str
    handoff: str


def task_mobility(db: Database, task_id: str) -> TaskMobility | None:
    """Whether ``task_id`` is moving, has moved (and where) or is held; ``None`` when it is a
    task like any other."""
    rows = db.execute(
        "SELECT id, side, peer, phase, released FROM mesh_handoffs WHERE task_id = ? "
        "AND phase != 'abandoned' ORDER BY created_at DESC",
        (task_id,),
    ).fetchall()
    for handoff, side, peer, phase, released in rows:
        if side == "source":
            if phase in LIVE_PHASES:
                return TaskMobility("moving", str(peer), str(handoff))
            return TaskMobility("moved", str(peer), str(handoff))
        if phase == "committed" and not released:
            return TaskMobility("held", str(peer), str(handoff))
        if phase == "committed":
            return None  # it arrived and is this device's now
    return None


def mobility_refusal(task_id: str, mobility: TaskMobility | None) -> str | None:
    """Why ``task_id`` takes no input on this device (a prompt, a queued prompt, a steer, a
    binding): it is moving or has moved to another device, or its copy here is held until its
    source releases it; ``None`` when it takes input like any task."""
    if mobility is None:
        return None
    if mobility.state == "moving":
        return (
            f"task {task_id} is moving to device {mobility.peer} (handoff {mobility.handoff}); "
            "it takes no input until the handoff ends"
        )
    if mobility.state == "moved":
        return f"task {task_id} has moved to device {mobility.peer}; continue it there"
    return (
        f"task {task_id} is held: device {mobility.peer} has not released it yet "
        f"(handoff {mobility.handoff}); it cannot start until then"
    )


class TaskImmobile(StoreError):
    """A write that would give ``task_id`` input found it moving, moved or held; its text is
    ``mobility_refusal``'s, what the route's admission says."""

    def __init__(self, task_id: str, refusal: str) -> None:
        super().__init__(refusal)
        self.task_id = task_id
        self.refusal = refusal


def refuse_immobile(db: Database, task_id: str) -> None:
    """Raise ``TaskImmobile`` when ``task_id`` takes no input (``mobility_refusal``). Called
    inside a write's transaction, it closes the window between the route's admission read and
    its turn's first write: an offer recorded in between is seen here."""
    refusal = mobility_refusal(task_id, task_mobility(db, task_id))
    if refusal is not None:
        raise TaskImmobile(task_id, refusal)
