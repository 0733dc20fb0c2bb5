"""A ``robota_run``'s turn as its client sees it: which of a route's notices are the run's
turn, the progress line each move says, and the approvals the result reports.

Pure (no I/O, no clock of its own: the caller passes ``now``), so both backends report the
same things: the in-process engine (``_engine_backend``) feeds it its route's notices as they
come, the host (``_host_backend``) the same notices decoded from its ``task.run`` stream.
``progress_line`` is the mapping from one notice to its line, tested with a table; ``TurnFollow``
is the state of one run (the turn it recognised, its end, whether the route went idle after
the run's input, the approvals resolved in it) and the throttle of its lines.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from robota.core.engine import (
    InputQueued,
    InputSteered,
    RouteIdle,
    RouteNotice,
    RouteReply,
    TurnBegan,
    TurnFinished,
    TurnUpdate,
)
from robota.core.events import (
    ApprovalRequested,
    ApprovalResolved,
    PlanUpdated,
    ReasoningDelta,
    RuntimeEvent,
    TextDelta,
    ToolCompleted,
    ToolStarted,
    ToolUpdated,
)

from ._setup import RunOutcome, ToolRefused

__all__ = ["PROGRESS_EVERY", "Line", "TurnFollow", "event_line"]

PROGRESS_EVERY = 0.25
"""At most one throttled progress line per this many seconds (a text stream is many deltas),
the first at once; a forced line (the turn's start and end, a tool's start, an approval)
always goes and does not count."""


@dataclass(frozen=True, slots=True)
class Line:
    """A progress line: what happened, and whether it goes out past the throttle."""

    message: str
    force: bool = False


def event_line(event: RuntimeEvent, titles: Mapping[str, str], written: int) -> Line | None:
    """The line one of the turn's agent events says; ``titles`` are the tools' titles by id
    (from their start), ``written`` the answer's characters so far, this event's included.
    ``None``: nothing worth a line (the turn's own start, usage)."""
    if isinstance(event, ToolStarted):
        return Line(f"tool: {event.title}", force=True)
    if isinstance(event, ToolCompleted):
        return Line(f"tool {event.status}: {titles.get(event.tool_id, event.tool_id)}")
    if isinstance(event, ToolUpdated):
        return Line(f"tool running: {titles.get(event.tool_id, event.tool_id)}")
    if isinstance(event, ApprovalRequested):
        return Line(f"approval asked: {event.title}", force=True)
    if isinstance(event, ApprovalResolved):
        return Line(f"approval {event.decision} by {event.by}", force=True)
    if isinstance(event, TextDelta):
        return Line(f"answer: {written} characters")
    if isinstance(event, ReasoningDelta):
        return Line("thinking")
    if isinstance(event, PlanUpdated):
        done = sum(1 for entry in event.entries if entry.status == "completed")
        return Line(f"plan: {done} of {len(event.entries)} steps done")
    return None


class TurnFollow:
    """One run's turn through its route's notices (the module docstring).

    The run's turn is the first ``TurnBegan`` whose prompt is the run's, or the running turn
    the prompt was steered into (``InputSteered``). With ``sent`` the run is ``done`` once its
    turn finished and a ``RouteIdle`` counted at least ``sent`` inputs (the next prompt then
    finds the agent's session free, as ``task send --wait`` waits for it); without, once the
    turn finished (the host's stream says itself when the route went idle).
    """

    def __init__(self, prompt: str, sent: int | None = None) -> None:
        self.prompt = prompt
        self.sent = sent
        self.attempt: str | None = None
        self.finished: TurnFinished | None = None
        self.idle = False
        self._approvals: dict[str, dict[str, object]] = {}
        self._titles: dict[str, str] = {}
        self._written = 0
        self._said = -math.inf

    @property
    def done(self) -> bool:
        return self.finished is not None and (self.sent is None or self.idle)

    @property
    def approvals(self) -> tuple[Mapping[str, object], ...]:
        """The approvals resolved in the run's turn, in the order asked: ``id``, ``decision``,
        ``by`` and, when the request was heard, its ``title``."""
        return tuple(a for a in self._approvals.values() if "decision" in a)

    def hear(self, notice: RouteNotice, now: float) -> str | None:
        """Take one of the route's notices; the progress line to send now, if any. Raises
        ``ToolRefused`` when the route refused the prompt before its turn began."""
        line = self._line(notice)
        if line is None:
            return None
        if not line.force:
            if now - self._said < PROGRESS_EVERY:
                return None
            self._said = now
        return line.message

    def _line(self, notice: RouteNotice) -> Line | None:
        if isinstance(notice, TurnBegan):
            if self.attempt is None and notice.prompt == self.prompt:
                self.attempt = notice.attempt_id
                return Line("turn started", force=True)
        elif isinstance(notice, InputSteered):
            if self.attempt is None and notice.text == self.prompt:
                self.attempt = notice.attempt_id
                return Line("steered into the running turn", force=True)
        elif isinstance(notice, InputQueued):
            if self.attempt is None and notice.text == self.prompt:
                return Line(f"queued ({notice.ahead} ahead)", force=True)
        elif isinstance(notice, RouteReply):
            if self.attempt is None and notice.level == "error":
                raise ToolRefused(notice.text)
        elif isinstance(notice, TurnUpdate):
            if self.attempt is not None and notice.attempt_id == self.attempt:
                return self._event(notice.event)
        elif isinstance(notice, TurnFinished):
            if self.attempt is not None and notice.attempt_id == self.attempt:
                self.finished = notice
                return Line(f"turn {notice.status}", force=True)
        elif isinstance(notice, RouteIdle) and self.sent is not None:
            self.idle = self.idle or notice.inputs >= self.sent
        return None

    def _event(self, event: RuntimeEvent) -> Line | None:
        if isinstance(event, ToolStarted):
            self._titles[event.tool_id] = event.title
        elif isinstance(event, TextDelta):
            self._written += len(event.text)
        elif isinstance(event, ApprovalRequested):
            self._approvals[event.approval_id] = {"id": event.approval_id, "title": event.title}
        elif isinstance(event, ApprovalResolved):
            approval = self._approvals.setdefault(event.approval_id, {"id": event.approval_id})
            approval["decision"] = event.decision
            approval["by"] = event.by
        return event_line(event, self._titles, self._written)

    def outcome(self, task_id: str) -> RunOutcome:
        """What the run reports: the turn's end, or (no end heard) the turn still running."""
        finished = self.finished
        if finished is None:
            return RunOutcome(task_id, self.attempt, None, None, approvals=self.approvals)
        error = finished.error.message if finished.error is not None else None
        return RunOutcome(
            task_id,
            finished.attempt_id,
            finished.status,
            finished.final_text,
            error,
            self.approvals,
        )
