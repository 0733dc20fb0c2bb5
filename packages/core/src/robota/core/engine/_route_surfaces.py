"""The route's surfaces and its approvals: who may answer a question, and what happens when
nobody can.

A route that is shown by several surfaces at once (terminals attached to a background session,
WebSocket clients) hears ``SurfaceJoined`` and ``SurfaceLeft``; the set of joined surfaces
(``RouteData.surfaces``) is the only state, the driver count is derived from it. The rule:

* an approval goes to every surface (it is a ``TurnUpdate`` like any event); the first answer
  from a driving surface is sent to the agent, every later one is refused to its surface alone,
  as is an answer from a surface that only observes;
* the agent's ``ApprovalResolved`` goes out with its ``answerer`` (the surface, ``policy``, or
  ``None`` when unknown) so the other surfaces withdraw their question and say who answered;
* on a route some surface has joined, a question asked while no driving surface is joined is
  declined by policy, and when the last driving surface leaves, a pending question is settled:
  a permission request is declined, a question (kind ``other``) is cancelled.

A route no surface ever joined (the TUI, print mode, a chat) answers as before: whatever its one
front end says goes to the agent, refused only when the question was already answered.
"""

from __future__ import annotations

from .._records import replace
from ..agents import DecideApproval
from ..events import (
    ApprovalDecision,
    ApprovalRequested,
    ApprovalResolved,
    RuntimeEvent,
    TurnCompleted,
)
from ._notices import RouteReply
from ._requests import AnswerApproval, SurfaceJoined, SurfaceLeft
from ._route_effects import Log, Notify, Tell
from ._route_state import RouteData

__all__ = ["handle", "observe", "settle_unattended"]

POLICY = "policy"
RESOLVED_KEPT = 64
"""Resolved approval ids remembered, to refuse a late answer by name."""
OBSERVES = "this surface only observes: its answer was not sent"


def drivers(route: RouteData) -> int:
    return sum(1 for drives in route.surfaces.values() if drives)


def handle(route: RouteData, message: AnswerApproval | SurfaceJoined | SurfaceLeft) -> None:
    match message:
        case AnswerApproval():
            answer(route, message)
        case SurfaceJoined():
            joined(route, message)
        case SurfaceLeft():
            left(route, message)


def joined(route: RouteData, message: SurfaceJoined) -> None:
    route.attended = True
    route.surfaces[message.surface] = message.drives


def left(route: RouteData, message: SurfaceLeft) -> None:
    drove = route.surfaces.pop(message.surface, None)
    if drove is None:
        route.emit(Log("debug", f"route {route.key}: {message.surface} left, never joined"))
        return
    if drove and not drivers(route):
        _settle(route, "the last driving surface left")


def answer(route: RouteData, message: AnswerApproval) -> None:
    approval_id, surface = message.approval_id, message.surface
    if route.task is None:
        return
    if surface is not None and route.surfaces.get(surface) is False:
        _refuse(route, surface, OBSERVES)
        return
    taken = route.answered if approval_id in route.answered else route.resolved
    if approval_id in taken:
        who = taken[approval_id]
        by = f" by {who}" if who is not None else ""
        _refuse(route, surface, f"approval {approval_id} was already answered{by}")
        return
    if approval_id in route.approvals:
        route.answered[approval_id] = surface
    _decide(route, approval_id, message.decision)


def observe(route: RouteData, event: RuntimeEvent) -> RuntimeEvent:
    """Keep the pending approvals from the agent's events; the event as the surfaces see it."""
    match event:
        case ApprovalRequested(approval_id=approval_id):
            route.approvals[approval_id] = event
        case ApprovalResolved(approval_id=approval_id, by=by):
            route.approvals.pop(approval_id, None)
            answerer = route.answered.pop(approval_id, None)
            if answerer is None and by == POLICY:
                answerer = POLICY
            _remember(route, approval_id, answerer)
            return replace(event, answerer=answerer)
        case TurnCompleted():
            # The agent cancels what its turn left waiting; nobody may answer it after.
            for approval_id in route.approvals:
                _remember(route, approval_id, route.answered.get(approval_id))
            route.approvals.clear()
            route.answered.clear()
    return event


def settle_unattended(route: RouteData, event: RuntimeEvent) -> None:
    """A question asked on an attended route with no driving surface: nobody could answer it."""
    if isinstance(event, ApprovalRequested) and route.attended and not drivers(route):
        _settle(route, "no driving surface is attached")


def _settle(route: RouteData, why: str) -> None:
    for approval_id, request in list(route.approvals.items()):
        if approval_id in route.answered:
            continue
        decision = _withdrawn(request)
        route.answered[approval_id] = POLICY
        _decide(route, approval_id, decision)
        said = "declined" if decision == "decline" else "cancelled"
        route.reply(f"approval {approval_id} ({request.title}) {said}: {why}")


def _withdrawn(request: ApprovalRequested) -> ApprovalDecision:
    """A permission request nobody answers is denied; a question is cancelled."""
    if request.kind == "other" or "decline" not in request.decisions:
        return "cancel"
    return "decline"


def _decide(route: RouteData, approval_id: str, decision: ApprovalDecision) -> None:
    assert route.task is not None
    route.emit(Tell(route.task.agent, DecideApproval(route.task.id, approval_id, decision)))


def _refuse(route: RouteData, surface: str | None, text: str) -> None:
    route.emit(Notify(RouteReply(route.key, text, "error", surface=surface)))


def _remember(route: RouteData, approval_id: str, answerer: str | None) -> None:
    route.answered.pop(approval_id, None)
    route.resolved[approval_id] = answerer
    while len(route.resolved) > RESOLVED_KEPT:
        del route.resolved[next(iter(route.resolved))]
