"""A route lets go of its task's agent session (``LetTaskGo``), for another process to resume.

An agent lets one process write a conversation (Codex refuses to resume a thread another
server process holds loaded), so before a background session takes a task over from the live
host, the host's routes that hold the task close its session at the agent, and say when the
agent has closed it. A route refuses while something of the task is under way on it
(``let_go_refusal``, pure: a table tests it): that would be cut off or run twice. Decided in
the route's own actor, one message at a time, so no prompt slips in between the check and the
close; the task stays current, and a later prompt here opens its session again (resumed).
"""

from __future__ import annotations

from functools import partial

from ..agents import CloseSession
from ._requests import LetTaskGo
from ._route_effects import Answer, Tell
from ._route_state import RouteData

__all__ = ["let_go", "let_go_refusal"]


def let_go_refusal(
    task_id: str, *, turn: bool, queued: int, approvals: int, busy: bool = False
) -> str | None:
    """Why a route may not let go of ``task_id`` now, naming what is under way on it (a turn
    running, ``queued`` prompts, ``approvals`` waiting, or ``busy``: a prompt being taken, a
    reset or listing awaited); ``None`` when it may."""
    if turn:
        return f"a turn of task {task_id} is running"
    if approvals:
        waiting = "an approval waits" if approvals == 1 else f"{approvals} approvals wait"
        return f"{waiting} on task {task_id}"
    if queued:
        prompts = "a prompt is" if queued == 1 else f"{queued} prompts are"
        return f"{prompts} queued on task {task_id}"
    if busy:
        return f"task {task_id} is busy (a prompt is being taken, or its agent is asked)"
    return None


def let_go(route: RouteData, request: LetTaskGo) -> None:
    """``request`` decided (module docstring)."""
    task = route.task
    if task is None or task.id != request.task_id:
        # Not current here: a route closes a task's session when it switches away from it.
        route.emit(Answer(request.answer, None))
        return
    refusal = let_go_refusal(
        task.id,
        turn=route.turn is not None,
        queued=len(route.pending),
        approvals=len(route.approvals) + len(route.answered),
        busy=route.taking or bool(route.listings) or route.resetting is not None,
    )
    if refusal is not None:
        route.emit(Answer(request.answer, refusal))
        return
    # Closed whether or not this incarnation opened it: a passivated route's session stays
    # open at the agent, which answers at once when none is.
    route.opened.discard(task.id)
    route.emit(Tell(task.agent, CloseSession(task.id, partial(request.answer, None))))
