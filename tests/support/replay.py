"""Replay a recorded agent transcript through robota's sans-IO protocol mappers.

The transcripts in ``tests/transcripts/<agent>/<scenario>.jsonl`` hold what crossed the wire
between the recorder (``tools/record_transcripts.py``) and a real agent. ``replay`` feeds them,
in wire order, to ``ThreadTracker`` (App Server, agent dir ``codex``) or ``SessionTracker`` (ACP,
every other dir) exactly the way ``AppServerClient`` and ``AcpClient`` drive those trackers, and
returns the ``RuntimeEvent``s the client would hand to its ``on_event`` sink. No threads, sockets
or processes: the recorder played the human, so its answers to approval requests are the
decisions, and its ``session/cancel`` is the client's ``cancel``.

Where the clients' behaviour depends on I/O it cannot be replayed, and the replay says so:

* ``AppServerClient._reconcile`` (``thread/read`` when a tracker sets ``needs_read``) needs the
  server's answer; the replay records where the client would start it (``Replay.reconciles``) and
  clears the flag as the client does, but feeds nothing.
* The clients handle agent requests and prompt responses in tasks, which the trio scheduler may
  run a little after notifications that arrived in the same read; the replay takes wire order.
* ``ApprovalResolved`` is emitted when the human decides, which is just before the client sends
  its answer: the replay emits it at the recorder's answer.

The recorder shut every agent process down at the end of its part, so the replay calls the
client's ``close`` there (pending approvals resolve ``cancel``, running turns fail
``agent_exited``); in the recorded transcripts that emits nothing, since every turn had ended.

The output is deterministic (``SessionTracker`` gets a fixed per-process nonce instead of its
random one), so it can serve as a golden event stream.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from robota.core.events import (
    ApprovalDecision,
    ApprovalResolved,
    RuntimeEvent,
    TurnError,
)
from robota.runtimes._acp_map import SessionTracker, permission_request, prompt_error
from robota.runtimes._app_server_map import ThreadTracker, approval_request, notification_thread

__all__ = [
    "APP_SERVER_AGENTS",
    "CLOSE_REASON",
    "TRANSCRIPTS",
    "Emitted",
    "Reconcile",
    "Replay",
    "ReplayError",
    "Wire",
    "agents",
    "load",
    "replay",
    "replay_detailed",
    "scenarios",
    "transcripts",
]

TRANSCRIPTS = Path(__file__).resolve().parents[1] / "transcripts"
"""Where ``tools/record_transcripts.py`` writes: ``<agent>/<scenario>.jsonl``."""

APP_SERVER_AGENTS = frozenset({"codex"})
"""Agent dirs recorded over the Codex App Server protocol; every other dir speaks ACP."""

CLOSE_REASON = "the agent process exited"
"""What the replay passes to the client's ``close`` when a recorded process ends."""

Direction = Literal["in", "out"]


class ReplayError(Exception):
    """The transcript asks for something the client would never have done (or cannot parse)."""


@dataclass(frozen=True, slots=True)
class Wire:
    """One recorded message: ``in`` = agent to client, ``out`` = client to agent."""

    direction: Direction
    msg: dict[str, Any]
    process: int | None = None
    """``1``/``2`` in the two-process scenarios (``resume``, ``load``), else ``None``."""


@dataclass(frozen=True, slots=True)
class Emitted:
    """An event as the client's sink would receive it."""

    owner: str
    """The thread id (App Server) or session id (ACP) the event belongs to."""
    event: RuntimeEvent
    process: int | None
    line: int
    """Index (0-based) into ``load(...)`` of the wire message that caused the event."""


@dataclass(frozen=True, slots=True)
class Reconcile:
    """A point where ``AppServerClient`` would start ``_reconcile`` for ``thread_id``."""

    thread_id: str
    turn_id: str | None
    """The turn the tracker believed was running then."""
    process: int | None
    line: int


@dataclass(frozen=True, slots=True)
class Replay:
    """What the client would have emitted for one transcript, in emission order."""

    emitted: tuple[Emitted, ...]
    reconciles: tuple[Reconcile, ...] = ()

    @property
    def events(self) -> list[RuntimeEvent]:
        return [emitted.event for emitted in self.emitted]

    def of(self, owner: str) -> list[RuntimeEvent]:
        return [e.event for e in self.emitted if e.owner == owner]

    def owners(self) -> list[str]:
        """Threads/sessions that received events, in order of their first event."""
        return list(dict.fromkeys(e.owner for e in self.emitted))


# -- transcripts ---------------------------------------------------------------------------------


def agents() -> list[str]:
    """Agent dirs that hold at least one transcript."""
    return sorted(p.name for p in TRANSCRIPTS.iterdir() if p.is_dir() and any(p.glob("*.jsonl")))


def scenarios(agent: str) -> list[str]:
    return sorted(p.stem for p in (TRANSCRIPTS / agent).glob("*.jsonl"))


def transcripts() -> list[tuple[str, str]]:
    """Every recorded ``(agent, scenario)``."""
    return [(agent, scenario) for agent in agents() for scenario in scenarios(agent)]


def load(agent: str, scenario: str) -> list[Wire]:
    """The recorded messages of one transcript, in wire order."""
    path = TRANSCRIPTS / agent / f"{scenario}.jsonl"
    wires: list[Wire] = []
    for number, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        line = json.loads(raw)
        direction, msg, process = line.get("dir"), line.get("msg"), line.get("process")
        if direction not in ("in", "out") or not isinstance(msg, dict):
            raise ReplayError(f"{path}:{number}: not a transcript line: {raw[:200]}")
        if process is not None and not isinstance(process, int):
            raise ReplayError(f"{path}:{number}: process {process!r} is not an int")
        wires.append(Wire(direction, msg, process))
    return wires


# -- replay --------------------------------------------------------------------------------------


def replay(agent: str, scenario: str) -> list[RuntimeEvent]:
    """The events the client would emit for this transcript, in order, for every thread or
    session the client started, resumed, forked or loaded."""
    return replay_detailed(agent, scenario).events


def replay_detailed(agent: str, scenario: str) -> Replay:
    """``replay`` with each event's owner, process and causing wire line, plus reconciles."""
    wires = load(agent, scenario)
    emitted: list[Emitted] = []
    reconciles: list[Reconcile] = []
    for process, lines in _processes(wires):
        # Each recorded process had its own client: fresh trackers, approval ids and request
        # ids. The recorder shut every process down at the end, which the client sees as close.
        client: _Client = (
            _AppServerClient(process) if agent in APP_SERVER_AGENTS else _AcpClient(process)
        )
        for index, wire in lines:
            client.line = index
            client.handle(wire)
        client.line = lines[-1][0]
        client.close(CLOSE_REASON)
        emitted.extend(client.emitted)
        reconciles.extend(client.reconciles)
    return Replay(tuple(emitted), tuple(reconciles))


def _processes(wires: list[Wire]) -> Iterator[tuple[int | None, list[tuple[int, Wire]]]]:
    numbered = list(enumerate(wires))
    for process, group in itertools.groupby(numbered, key=lambda item: item[1].process):
        yield process, list(group)


@dataclass
class _Outgoing:
    """A request the client sent; its response decides what happens."""

    method: str
    params: Any


@dataclass
class _Approval:
    """An agent request waiting for the human."""

    approval_id: str
    method: str
    params: Any
    owner: str
    tool_id: str | None


@dataclass
class _Client:
    """What a protocol client does around its trackers; subclasses mirror ``AppServerClient``
    and ``AcpClient`` method by method."""

    process: int | None
    line: int = 0
    emitted: list[Emitted] = field(default_factory=list)
    reconciles: list[Reconcile] = field(default_factory=list)
    requests: dict[Any, _Outgoing] = field(default_factory=dict)
    approvals: dict[Any, _Approval] = field(default_factory=dict)
    """Pending approvals by the agent's JSON-RPC request id."""
    approval_ids: Iterator[int] = field(default_factory=itertools.count)

    def next_approval_id(self) -> str:
        # ApprovalRegistry.next_id: unique per connection.
        return f"a{next(self.approval_ids)}"

    def emit(self, owner: str, events: Iterable[RuntimeEvent]) -> None:
        for event in events:
            self.emitted.append(Emitted(owner, event, self.process, self.line))

    def handle(self, wire: Wire) -> None:
        msg = wire.msg
        method, has_id = msg.get("method"), "id" in msg
        if wire.direction == "out":
            if isinstance(method, str) and has_id:
                self.requests[_key(msg["id"])] = _Outgoing(method, msg.get("params"))
                self.sent_request(method, msg.get("params"))
            elif isinstance(method, str):
                self.sent_notification(method, msg.get("params"))
            elif has_id:
                approval = self.approvals.pop(_key(msg["id"]), None)
                if approval is not None:
                    self.answered(approval, msg)
        elif isinstance(method, str) and has_id:
            self.agent_request(_key(msg["id"]), method, msg.get("params"))
        elif isinstance(method, str):
            self.notification(method, msg.get("params"))
        elif has_id:
            request = self.requests.pop(_key(msg["id"]), None)
            if request is not None:
                self.response(request, msg)

    def resolve(
        self,
        approval: _Approval,
        decision: ApprovalDecision,
        by: Literal["user", "runtime"] = "user",
    ) -> None:
        """``ApprovalRegistry.decide`` / ``cancel_all``: the resolution is an event."""
        self.emit(approval.owner, [ApprovalResolved(approval.approval_id, decision, by=by)])

    # Protocol specifics ---------------------------------------------------------------------

    def sent_request(self, method: str, params: Any) -> None:
        """The client sent ``method`` (before any answer)."""

    def sent_notification(self, method: str, params: Any) -> None:
        """The client sent a notification."""

    def agent_request(self, request_id: Any, method: str, params: Any) -> None:
        raise NotImplementedError

    def notification(self, method: str, params: Any) -> None:
        raise NotImplementedError

    def response(self, request: _Outgoing, msg: Mapping[str, Any]) -> None:
        raise NotImplementedError

    def answered(self, approval: _Approval, msg: Mapping[str, Any]) -> None:
        raise NotImplementedError

    def close(self, reason: str) -> None:
        raise NotImplementedError


def _key(request_id: Any) -> Any:
    # JSON-RPC ids are numbers or strings (codex-acp uses UUIDs); 1 and "1" are different ids.
    return (type(request_id).__name__, request_id)


def _result(msg: Mapping[str, Any]) -> dict[str, Any] | None:
    result = msg.get("result")
    return result if isinstance(result, dict) and "error" not in msg else None


# -- App Server (AppServerClient) ----------------------------------------------------------------

_APP_DECISIONS: Mapping[str, ApprovalDecision] = {
    "accept": "accept",
    "acceptForSession": "accept_for_session",
    "decline": "decline",
    "cancel": "cancel",
}


@dataclass
class _AppServerClient(_Client):
    threads: dict[str, ThreadTracker] = field(default_factory=dict)

    def sent_request(self, method: str, params: Any) -> None:
        if method == "turn/start" and isinstance(params, dict):
            thread_id = params.get("threadId")
            if isinstance(thread_id, str):
                # start_turn creates the tracker before it sends the request.
                self.threads.setdefault(thread_id, ThreadTracker(thread_id))

    def response(self, request: _Outgoing, msg: Mapping[str, Any]) -> None:
        result = _result(msg)
        if result is None:
            return  # an RpcError: the caller sees it, no event is emitted
        if request.method in ("thread/start", "thread/resume", "thread/fork"):
            thread = result.get("thread")
            thread_id = thread.get("id") if isinstance(thread, dict) else None
            if thread_id is not None:
                self.threads.setdefault(str(thread_id), ThreadTracker(str(thread_id)))
        elif request.method == "turn/start":
            thread_id = request.params.get("threadId") if isinstance(request.params, dict) else None
            turn = result.get("turn")
            turn_id = turn.get("id") if isinstance(turn, dict) else None
            if not isinstance(thread_id, str) or not isinstance(turn_id, str):
                raise ReplayError(f"turn/start answered without a turn id: {str(result)[:200]}")
            tracker = self.threads.setdefault(thread_id, ThreadTracker(thread_id))
            self.emit(thread_id, tracker.adopt(turn_id))

    def agent_request(self, request_id: Any, method: str, params: Any) -> None:
        # AppServerClient.on_request takes an approval id before it knows the method.
        thread_id = params.get("threadId") if isinstance(params, dict) else None
        approval_id = self.next_approval_id()
        event = approval_request(method, params, approval_id)
        if event is None:
            return  # MethodNotFound
        if not isinstance(thread_id, str) or thread_id not in self.threads:
            return  # declined at once, without an event
        self.emit(thread_id, [event])
        self.approvals[request_id] = _Approval(
            approval_id, method, params, thread_id, event.tool_id
        )

    def answered(self, approval: _Approval, msg: Mapping[str, Any]) -> None:
        self.resolve(approval, _app_decision(approval, msg))

    def notification(self, method: str, params: Any) -> None:
        # AppServerClient.on_notification
        thread_id = notification_thread(params)
        if thread_id is None:
            return
        tracker = self.threads.get(thread_id)
        if tracker is None:
            return
        turn_id = tracker.active_turn_id
        self.emit(thread_id, tracker.feed(method, params))
        if tracker.needs_read:
            # The client starts _reconcile here: thread/read and thread/turns/list are I/O, so
            # the replay only records the point (and clears the flag, as the client does).
            tracker.needs_read = False
            self.reconciles.append(Reconcile(thread_id, turn_id, self.process, self.line))

    def close(self, reason: str) -> None:
        # AppServerClient.close: pending approvals resolve to cancel, running turns fail.
        pending, self.approvals = self.approvals, {}
        for approval in pending.values():
            self.resolve(approval, "cancel", by="runtime")
        for thread_id, tracker in self.threads.items():
            self.emit(thread_id, tracker.end_with_error(reason))


def _app_decision(approval: _Approval, msg: Mapping[str, Any]) -> ApprovalDecision:
    """The decision behind the recorded answer (the inverse of ``approval_result``)."""
    result = _result(msg)
    if result is None:
        return "cancel"
    decision = result.get("decision")
    if isinstance(decision, str):
        return _APP_DECISIONS.get(decision, "cancel")
    if approval.method == "item/permissions/requestApproval":
        if not result.get("permissions"):
            return "decline"
        return "accept_for_session" if result.get("scope") == "session" else "accept"
    return "cancel"


# -- ACP (AcpClient) -----------------------------------------------------------------------------

_ACP_DECISIONS: Mapping[str, ApprovalDecision] = {
    "allow_once": "accept",
    "allow_always": "accept_for_session",
    "reject_once": "decline",
    "reject_always": "decline",
}


@dataclass
class _AcpClient(_Client):
    sessions: dict[str, SessionTracker] = field(default_factory=dict)

    def _register(self, session_id: str) -> None:
        tracker = SessionTracker(session_id)
        # The tracker's random nonce keeps turn ids unique across processes in production; a
        # fixed one per recorded process keeps them unique here and the replay deterministic.
        tracker._nonce = f"p{self.process or 1}"
        self.sessions[session_id] = tracker

    def sent_request(self, method: str, params: Any) -> None:
        if method != "session/prompt":
            return
        session_id = params.get("sessionId") if isinstance(params, dict) else None
        tracker = self.sessions.get(str(session_id))
        if tracker is None:
            raise ReplayError(f"session/prompt for a session the client does not know: {params}")
        if tracker.active_turn_id is not None:
            # AcpClient.prompt raises SessionBusy instead of sending a second prompt.
            raise ReplayError(f"a second prompt during a turn in {session_id}: SessionBusy")
        self.emit(tracker.session_id, [tracker.begin()])

    def sent_notification(self, method: str, params: Any) -> None:
        if method != "session/cancel" or not isinstance(params, dict):
            return
        # AcpClient.cancel answers the session's pending approvals "cancel" before it notifies.
        session_id = params.get("sessionId")
        for request_id, approval in list(self.approvals.items()):
            if approval.owner == session_id:
                del self.approvals[request_id]
                self._decided(approval, "cancel")

    def response(self, request: _Outgoing, msg: Mapping[str, Any]) -> None:
        params = request.params if isinstance(request.params, dict) else {}
        result = _result(msg)
        if request.method == "session/new" and result is not None:
            if not isinstance(result.get("sessionId"), str):
                raise ReplayError(f"session/new answered without a sessionId: {str(result)[:200]}")
            self._register(result["sessionId"])
        elif request.method == "session/load" and result is not None:
            # Registered only now: the history replayed before this response had no session.
            self._register(str(params.get("sessionId")))
        elif request.method == "session/prompt":
            tracker = self.sessions[str(params.get("sessionId"))]
            error = msg.get("error")
            if isinstance(error, dict):
                failure = prompt_error(
                    int(error.get("code", -32603)), str(error.get("message", "")), error.get("data")
                )
                self.emit(tracker.session_id, tracker.fail(failure))
            else:
                self.emit(tracker.session_id, tracker.end(msg.get("result")))

    def agent_request(self, request_id: Any, method: str, params: Any) -> None:
        # AcpClient.on_request: only permission requests produce events; files and terminals
        # (which this recorder did not offer) are served without any.
        if method != "session/request_permission":
            return
        session_id = params.get("sessionId") if isinstance(params, dict) else None
        tracker = self.sessions.get(session_id) if isinstance(session_id, str) else None
        if tracker is None or tracker.active_turn_id is None:
            return  # answered "cancelled" at once, without an event
        approval_id = self.next_approval_id()
        event = permission_request(params, approval_id)
        if event is None:
            return
        self.emit(tracker.session_id, tracker.announce(params.get("toolCall")))
        self.emit(tracker.session_id, [event])
        self.approvals[request_id] = _Approval(
            approval_id, method, params, tracker.session_id, event.tool_id
        )

    def answered(self, approval: _Approval, msg: Mapping[str, Any]) -> None:
        self._decided(approval, _acp_decision(approval, msg))

    def _decided(self, approval: _Approval, decision: ApprovalDecision) -> None:
        self.resolve(approval, decision)
        if decision in ("decline", "cancel"):
            tracker = self.sessions.get(approval.owner)
            if tracker is not None:
                self.emit(approval.owner, tracker.declined(approval.tool_id))

    def notification(self, method: str, params: Any) -> None:
        # AcpClient.on_notification
        if method != "session/update" or not isinstance(params, dict):
            return
        tracker = self.sessions.get(str(params.get("sessionId")))
        if tracker is None:
            return
        self.emit(tracker.session_id, tracker.feed(params.get("update")))

    def close(self, reason: str) -> None:
        # AcpClient.close: pending approvals resolve to cancel, running turns fail.
        pending, self.approvals = self.approvals, {}
        for approval in pending.values():
            self.resolve(approval, "cancel", by="runtime")
        for session_id, tracker in self.sessions.items():
            error = TurnError(reason, "agent_exited", retryable=False)
            self.emit(session_id, tracker.fail(error))


def _acp_decision(approval: _Approval, msg: Mapping[str, Any]) -> ApprovalDecision:
    """The decision behind the recorded answer (the inverse of ``permission_result``)."""
    result = _result(msg)
    outcome = result.get("outcome") if result is not None else None
    if not isinstance(outcome, dict) or outcome.get("outcome") != "selected":
        return "cancel"
    options = approval.params.get("options") if isinstance(approval.params, dict) else None
    for option in options if isinstance(options, list) else ():
        if isinstance(option, dict) and option.get("optionId") == outcome.get("optionId"):
            return _ACP_DECISIONS.get(str(option.get("kind")), "cancel")
    return "cancel"
