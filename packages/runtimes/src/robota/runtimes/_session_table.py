"""The session table of one configured agent: the agent's actor, kept on the trio loop.

Routes tell it ``robota.core.agents`` requests through the agent's ``LoopMailbox``; the process
service reports to it by calling ``receive`` directly (both on the trio thread, so the table
sees one message at a time). It holds, per session key, the spec, where the session's notices
go, the agent's session id (to resume it in a later process) and the running turn; it answers
what it can decide alone (an unknown key, a busy session, a steer for a turn that already
ended) without a round trip, and hands the rest to the process service as jobs. It outlives
the agent's processes: a restarted process resumes its sessions from here.

It lives on the loop rather than on a thread of its own because everything it does ends in I/O
the loop does: a prompt would otherwise wake the table's thread and then the loop, and every
event from the agent the table's thread and then the route's.

It also applies the approval policy no protocol applies for us: in ``bypassPermissions`` every
request is accepted, in ``acceptEdits`` file changes are, and where no person can answer
(``SessionSpec.human_approves`` false) the ``default`` mode declines, so a turn never waits for
a click that cannot come. Those decisions are marked ``by="policy"`` in the turn.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from robota.core import replace
from robota.core.agents import (
    CloseSession,
    DecideApproval,
    Deliver,
    InterruptTurn,
    ListSessions,
    OpenSession,
    SessionEvent,
    SessionOpened,
    SessionsListed,
    SessionSpec,
    StartTurn,
    SteerRefused,
    SteerTurn,
    TurnAccepted,
    TurnRefused,
)
from robota.core.events import (
    ApprovalDecision,
    ApprovalRequested,
    TurnCompleted,
    TurnError,
    TurnStarted,
)

from ._agent_jobs import (
    Bind,
    Decide,
    Interrupt,
    Job,
    Listed,
    ListJob,
    Notice,
    Opened,
    ProcessDown,
    ProcessUp,
    Prompt,
    Release,
    Steer,
    Update,
)

__all__ = ["SessionTable", "policy_decision"]

logger = logging.getLogger("robota.runtimes.agent")

Submit = Callable[[Job], None]


def policy_decision(spec: SessionSpec, request: ApprovalRequested) -> ApprovalDecision | None:
    """What policy answers for ``request``, or ``None`` when a person decides."""
    if spec.permission_mode == "bypassPermissions":
        return "accept"
    if spec.permission_mode == "acceptEdits" and request.kind == "file_change":
        return "accept"
    if not spec.human_approves:
        return "decline"
    return None


@dataclass
class _Session:
    spec: SessionSpec
    deliver: Deliver
    session_id: str | None
    generation: int = 0
    """The process the session is open in; 0 while it is not open in any."""
    turn_id: str | None = None
    starting: bool = False
    opened: int = 0
    ended: str | None = None
    """The last turn whose end came: its acceptance, reported after it (a fast turn's events
    can overtake the job that started it), does not make it running again."""


class SessionTable:
    """One per configured agent name; see the module docstring."""

    def __init__(self, name: str, submit: Submit) -> None:
        self.name = name
        self._submit = submit
        self._sessions: dict[str, _Session] = {}
        self._version: str | None = None
        self._capabilities: dict[str, object] = {}
        self._listings: dict[str, Deliver] = {}

    def receive(self, message: Any) -> None:
        match message:
            case OpenSession():
                self._open(message)
            case StartTurn():
                self._start_turn(message)
            case SteerTurn():
                self._steer(message)
            case InterruptTurn(key=key):
                if key in self._sessions:
                    self._submit(Interrupt(key))
            case DecideApproval(key=key, approval_id=approval_id, decision=decision):
                if key in self._sessions:
                    self._submit(Decide(key, approval_id, decision))
            case CloseSession(key=key, closed=closed):
                if self._sessions.pop(key, None) is not None:
                    self._submit(Release(key, closed))
                elif closed is not None:
                    _closed(closed)  # none open under that key: nothing to wait for
            case ListSessions(ref=ref, search=search, limit=limit):
                self._listings[ref] = message.deliver
                self._submit(ListJob(ref, search, limit))
            case Listed(ref=ref):
                deliver = self._listings.pop(ref, None)
                if deliver is not None:
                    listed = SessionsListed(ref, self.name, message.sessions, message.error)
                    _deliver(deliver, listed)
            case Update():
                self._update(message)
            case Notice():
                self._notice(message)
            case Opened():
                self._opened(message)
            case ProcessUp():
                self._version = message.version
                self._capabilities = dict(message.capabilities)
            case ProcessDown():
                self._process_down(message)
            case _:
                logger.warning("agent %s: ignored %s", self.name, type(message).__name__)

    # -- requests ------------------------------------------------------------------------------

    def _open(self, request: OpenSession) -> None:
        known = self._sessions.get(request.key)
        if known is not None:
            # The route that owns the key was restarted (or re-activated), or changed the
            # task's settings, and opens again: the session and its running turn carry on, talk
            # to the new deliver, and later turns (and a reopen in a new process) use the spec.
            known.deliver = request.deliver
            known.spec = replace(request.spec, resume_id=known.spec.resume_id)
            return
        spec = request.spec
        self._sessions[request.key] = _Session(spec, request.deliver, spec.resume_id)
        self._submit(Bind(request.key, spec, spec.resume_id))

    def _start_turn(self, request: StartTurn) -> None:
        session = self._sessions.get(request.key)
        if session is None:
            logger.warning("agent %s: prompt for unknown session %r", self.name, request.key)
            return
        if session.turn_id is not None or session.starting:
            refusal = TurnRefused(request.key, request.text, "busy", "a turn is running")
            _deliver(session.deliver, refusal)
            return
        missing = [str(p) for p in request.images if not p.is_file()]
        if missing:
            message = f"image not found: {', '.join(missing)}; nothing was sent"
            _deliver(session.deliver, TurnRefused(request.key, request.text, "failed", message))
            return
        session.starting = True
        self._submit(
            Prompt(request.key, session.spec, session.session_id, request.text, request.images)
        )

    def _steer(self, request: SteerTurn) -> None:
        session = self._sessions.get(request.key)
        if session is None:
            return
        if session.turn_id != request.expected_turn_id:
            message = f"turn {request.expected_turn_id} is not running"
            _deliver(session.deliver, SteerRefused(request.key, request.text, "ended", message))
            return
        self._submit(Steer(request.key, request.expected_turn_id, request.text))

    # -- reports from the process --------------------------------------------------------------

    def _update(self, update: Update) -> None:
        session = self._sessions.get(update.key)
        if session is None:
            return  # closed meanwhile; its late events have no reader
        event = update.event
        if isinstance(event, TurnStarted):
            session.turn_id = event.turn_id
            session.starting = False
        elif isinstance(event, TurnCompleted):
            session.ended = event.turn_id
            if event.turn_id == session.turn_id:
                session.turn_id = None
        _deliver(session.deliver, SessionEvent(update.key, event))
        if isinstance(event, ApprovalRequested):
            decision = policy_decision(session.spec, event)
            if decision is not None:
                self._submit(Decide(update.key, event.approval_id, decision, by="policy"))

    def _notice(self, report: Notice) -> None:
        notice = report.notice
        session = self._sessions.get(notice.key)
        if session is None:
            return
        if isinstance(notice, TurnAccepted):
            session.starting = False
            if session.turn_id is None and notice.turn_id != session.ended:
                session.turn_id = notice.turn_id
        elif isinstance(notice, TurnRefused):
            session.starting = False
        _deliver(session.deliver, notice)

    def _opened(self, report: Opened) -> None:
        session = self._sessions.get(report.key)
        if session is None:
            return
        session.session_id = report.session_id
        session.generation = report.generation
        session.opened += 1
        _deliver(
            session.deliver,
            SessionOpened(
                report.key,
                report.session_id,
                resumed=report.resumed,
                restarted=session.opened > 1,
                agent_version=self._version,
                capabilities=dict(self._capabilities),
            ),
        )

    def _process_down(self, report: ProcessDown) -> None:
        """Sessions of that process will be resumed by the next job; a turn that is still
        running in our table (its end never came) ends here, failed."""
        for key, session in self._sessions.items():
            if session.generation != report.generation:
                continue
            session.generation = 0
            if session.turn_id is not None:
                error = TurnError(report.reason, "agent_exited", retryable=False)
                ended = TurnCompleted(session.turn_id, "failed", error)
                session.turn_id = None
                _deliver(session.deliver, SessionEvent(key, ended))


def _closed(closed: Callable[[], None]) -> None:
    try:
        closed()
    except Exception:
        logger.exception("agent: telling a session's close failed")


def _deliver(deliver: Deliver, notice: object) -> None:
    try:
        deliver(notice)
    except Exception:
        logger.exception("agent: delivering %s failed", type(notice).__name__)
