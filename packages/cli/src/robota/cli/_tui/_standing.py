"""Where the terminal's task stands when a handoff moves it to another device, as pure
functions (a table tests them): what the TUI says when it notices, what its status line shows,
and what it answers a prompt to a task that moved away.

The TUI reads the task's mobility every few seconds (``robota task push`` runs in the host,
another process: nothing tells the terminal's engine). While a task is moving its input is
refused by the route (``store.mobility_refusal``) and the TUI says why once; once it moved,
this terminal no longer drives it: the TUI says where it went, lets the task go (another
process may take it up when it comes back) and keeps its view read-only for the rest of the
run, even if the task comes back, since this terminal's agent session of it missed what was
said on the other device (``/switch`` to it opens it afresh only in a new run). Commands still
work: ``/new`` starts a task here, ``/switch`` opens another, ``/exit`` leaves.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from robota.core.store import TaskMobility

__all__ = ["POLL_SECONDS", "READ_ONLY_HINT", "moved_note", "read_only_refusal", "standing_label"]

POLL_SECONDS = 2.0
"""How often the TUI reads its task's mobility: a push is noticed within this long."""
READ_ONLY_HINT = "/new starts a task here, /switch opens another, /exit leaves"
SHORT_ID = 9
"""How much of a device id the status line shows when the roster names no device: its first
two groups."""


def _device(mobility: TaskMobility, name: str | None) -> str:
    """The other device as a person reads it: its roster name and id, or its id alone."""
    return f"device {name} ({mobility.peer})" if name else f"device {mobility.peer}"


def _where(mobility: TaskMobility, name: str | None) -> str:
    return f"{_device(mobility, name)} (handoff {mobility.handoff})"


def moved_note(
    task_id: str, before: TaskMobility | None, now: TaskMobility | None, name: str | None = None
) -> str | None:
    """What the terminal says when its task's mobility went from ``before`` to ``now`` (its
    last two reads; ``name``: the other device's name in the roster, when known); ``None``:
    nothing changed worth saying."""
    if now == before:
        return None
    if now is None:
        if before is None or before.state == "moved":
            return None  # a moved task stays moved for this terminal (module docstring)
        if before.state == "moving":
            return (
                f"the handoff of task {task_id} to {_where(before, name)} ended without moving it: "
                "it takes input here again"
            )
        return f"task {task_id} was released by {_where(before, name)}: it takes input here now"
    if now.state == "moving":
        return f"task {task_id} is moving to {_where(now, name)}: it takes no input until that ends"
    if now.state == "moved":
        return (
            f"task {task_id} has moved to {_where(now, name)}: continue it there. This terminal no "
            f"longer drives it and its view is read-only ({READ_ONLY_HINT})"
        )
    return f"task {task_id} is held here until {_where(now, name)} releases it"


def standing_label(mobility: TaskMobility | None, name: str | None = None) -> str | None:
    """The status line's word for the task's standing (the device by its name, else the
    start of its id: a whole id does not fit); ``None``: a task like any other."""
    if mobility is None:
        return None
    device = name or (
        mobility.peer[:SHORT_ID] + "…" if len(mobility.peer) > SHORT_ID else mobility.peer
    )
    if mobility.state == "moving":
        return f"moving to {device}"
    if mobility.state == "moved":
        return f"read-only · moved to {device}"
    return f"held for {device}"


def read_only_refusal(task_id: str, moved: TaskMobility, name: str | None = None) -> str:
    """What the terminal answers a prompt to ``task_id``, which moved away during this run."""
    return (
        f"task {task_id} has moved to {_device(moved, name)}; continue it there "
        f"(this view is read-only: {READ_ONLY_HINT})"
    )
