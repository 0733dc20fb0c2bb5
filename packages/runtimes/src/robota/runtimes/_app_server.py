"""The App Server client: one agent process, one handshake, many threads.

A thin I/O layer over ``Connection`` and the pure mapping in ``_app_server_map``. Requests use
timeouts by class (lifecycle 60 s, control 10 s, reads 5 s) and none at all for ``thread/fork``,
whose retry after a timeout could leave a second branch behind. Events reach ``on_event`` as
``(thread_id, event)`` on the trio thread, in the order the server sent them.

Approval requests become ``ApprovalRequested`` events and wait for ``decide``; an approval for a
thread this client does not know is declined at once, and every pending approval is answered
``cancel`` when the process goes away (``close``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import trio

from robota.core import AgentError
from robota.core.events import ApprovalDecision, RuntimeEvent

from ._app_server_map import (
    ThreadTracker,
    approval_request,
    approval_result,
    notification_thread,
    user_input,
)
from ._approvals import ApprovalRegistry, DecidedBy
from ._handshake import app_server_initialize_params, app_server_version, thread_params
from ._jsonrpc import Connection, MethodNotFound, RpcError

__all__ = ["AppServerClient", "SteerRejected", "ThreadInfo"]

logger = logging.getLogger("robota.runtimes.app_server")

LIFECYCLE = 60.0
CONTROL = 10.0
READ = 5.0
DEFAULT = 30.0
RECONCILE_GRACE = 1.0
"""Seconds an unexplained thread state may stay unexplained before ``thread/read``."""

EventSink = Callable[[str, RuntimeEvent], None]


class SteerRejected(AgentError):
    """The turn to steer is no longer running; the engine queues the text instead."""


@dataclass(frozen=True, slots=True)
class ThreadInfo:
    id: str
    model: str | None
    provider: str | None
    cwd: str | None
    raw: dict[str, Any]


def _thread_info(result: Any) -> ThreadInfo:
    if not isinstance(result, dict) or not isinstance(result.get("thread"), dict):
        raise RpcError("thread", -32603, f"unexpected thread response: {str(result)[:200]}")
    thread = result["thread"]
    return ThreadInfo(
        id=str(thread.get("id")),
        model=result.get("model") or thread.get("model"),
        provider=result.get("modelProvider") or thread.get("modelProvider"),
        cwd=result.get("cwd") or thread.get("cwd"),
        raw=result,
    )


def _rejects_field(error: RpcError, field: str) -> bool:
    """Whether the server refused ``field`` itself (unknown, unsupported, experimental)."""
    text = f"{error.message} {error.data or ''}".lower()
    refusal = ("unknown", "unsupported", "unrecognized", "experimental", "not supported")
    return field.lower() in text and any(word in text for word in refusal)


class AppServerClient:
    """Drives one ``codex app-server`` (or compatible) process through ``connection``."""

    def __init__(self, connection: Connection, on_event: EventSink) -> None:
        connection.on_notification = self.on_notification
        connection.on_request = self.on_request
        self._connection = connection
        self._on_event = on_event
        self._threads: dict[str, ThreadTracker] = {}
        self._approvals = ApprovalRegistry(self._emit)
        self._nursery: trio.Nursery | None = None
        self.version: str | None = None

    # -- lifecycle -----------------------------------------------------------------------------

    async def initialize(self, nursery: trio.Nursery) -> str | None:
        """The handshake, once per process. ``nursery`` runs reconciliation reads."""
        self._nursery = nursery
        result = await self._connection.request(
            "initialize", app_server_initialize_params(), timeout=LIFECYCLE
        )
        await self._connection.notify("initialized")
        self.version = app_server_version(result)
        return self.version

    def close(self, reason: str) -> None:
        """The process is gone: running turns fail, pending approvals resolve to cancel."""
        self._approvals.cancel_all()
        for thread_id, tracker in self._threads.items():
            for event in tracker.end_with_error(reason):
                self._emit(thread_id, event)

    # -- threads -------------------------------------------------------------------------------

    async def start_thread(
        self,
        *,
        cwd: str,
        model: str | None = None,
        provider: str | None = None,
        permission_mode: str | None = "default",
        developer_instructions: str | None = None,
        ephemeral: bool = False,
        config: Mapping[str, object] | None = None,
    ) -> ThreadInfo:
        params = thread_params(
            cwd=cwd,
            model=model,
            provider=provider,
            permission_mode=permission_mode,
            developer_instructions=developer_instructions,
        )
        if config:
            params["config"] = dict(config)  # overrides of Codex's config (MCP servers)
        if ephemeral:
            params["ephemeral"] = True  # not persisted: checks leave no thread behind
        info = _thread_info(
            await self._connection.request("thread/start", params, timeout=LIFECYCLE)
        )
        self._threads.setdefault(info.id, ThreadTracker(info.id))
        return info

    async def resume_thread(
        self,
        thread_id: str,
        *,
        cwd: str | None = None,
        model: str | None = None,
        provider: str | None = None,
        permission_mode: str | None = None,
        config: Mapping[str, object] | None = None,
    ) -> ThreadInfo:
        params = {
            "threadId": thread_id,
            "excludeTurns": True,
            **thread_params(
                cwd=cwd,
                model=model,
                provider=provider,
                permission_mode=permission_mode,
                developer_instructions=None,
            ),
        }
        if config:
            params["config"] = dict(config)
        info = _thread_info(
            await self._connection.request("thread/resume", params, timeout=LIFECYCLE)
        )
        self._threads.setdefault(info.id, ThreadTracker(info.id))
        return info

    async def fork_thread(self, thread_id: str, *, last_turn_id: str | None = None) -> ThreadInfo:
        """Fork through ``last_turn_id`` (default: the latest turn). No timeout, by design."""
        params: dict[str, Any] = {"threadId": thread_id, "excludeTurns": True}
        if last_turn_id is not None:
            params["lastTurnId"] = last_turn_id
        try:
            result = await self._connection.request("thread/fork", params, timeout=None)
        except RpcError as error:
            # Only an explicit refusal of the field is retried: the first request cannot
            # have created a branch then. Timeouts and disconnects never reach here.
            if not _rejects_field(error, "excludeTurns"):
                raise
            del params["excludeTurns"]
            result = await self._connection.request("thread/fork", params, timeout=None)
        info = _thread_info(result)
        self._threads.setdefault(info.id, ThreadTracker(info.id))
        return info

    async def list_threads(
        self, *, limit: int = 25, cursor: str | None = None, search: str | None = None
    ) -> tuple[list[dict[str, Any]], str | None]:
        params: dict[str, Any] = {"limit": limit, "sortKey": "recency_at"}
        if cursor is not None:
            params["cursor"] = cursor
        if search:
            params["searchTerm"] = search
        try:
            result = await self._connection.request("thread/list", params, timeout=READ)
        except RpcError as error:
            if error.code not in (-32602, -32600):
                raise
            params["sortKey"] = "updated_at"  # older servers know no recency_at
            result = await self._connection.request("thread/list", params, timeout=READ)
        data = result.get("data") if isinstance(result, dict) else None
        next_cursor = result.get("nextCursor") if isinstance(result, dict) else None
        return [t for t in data or [] if isinstance(t, dict)], next_cursor

    async def read_thread(self, thread_id: str) -> dict[str, Any]:
        result = await self._connection.request(
            "thread/read", {"threadId": thread_id, "includeTurns": False}, timeout=READ
        )
        thread = result.get("thread") if isinstance(result, dict) else None
        return thread if isinstance(thread, dict) else {}

    async def set_name(self, thread_id: str, name: str) -> None:
        await self._connection.request(
            "thread/name/set", {"threadId": thread_id, "name": name}, timeout=CONTROL
        )

    async def config_read(self) -> dict[str, Any]:
        result = await self._connection.request("config/read", {}, timeout=READ)
        return result if isinstance(result, dict) else {}

    async def model_list(self) -> list[dict[str, Any]]:
        result = await self._connection.request("model/list", {}, timeout=READ)
        data = result.get("data") if isinstance(result, dict) else None
        return [m for m in data or [] if isinstance(m, dict)]

    # -- turns ---------------------------------------------------------------------------------

    def active_turn(self, thread_id: str) -> str | None:
        tracker = self._threads.get(thread_id)
        return tracker.active_turn_id if tracker is not None else None

    async def start_turn(
        self,
        thread_id: str,
        text: str,
        images: Sequence[str] = (),
        *,
        model: str | None = None,
        effort: str | None = None,
    ) -> str:
        tracker = self._threads.setdefault(thread_id, ThreadTracker(thread_id))
        params: dict[str, Any] = {"threadId": thread_id, "input": user_input(text, images)}
        if model is not None:
            params["model"] = model
        if effort is not None:
            params["effort"] = effort
        result = await self._connection.request("turn/start", params, timeout=DEFAULT)
        turn = result.get("turn") if isinstance(result, dict) else None
        turn_id = turn.get("id") if isinstance(turn, dict) else None
        if not isinstance(turn_id, str):
            raise RpcError("turn/start", -32603, f"no turn id in {str(result)[:200]}")
        for event in tracker.adopt(turn_id):
            self._emit(thread_id, event)
        return turn_id

    async def steer(self, thread_id: str, expected_turn_id: str, text: str) -> str:
        """Add ``text`` to the running turn. ``SteerRejected`` when that turn already ended."""
        if self.active_turn(thread_id) != expected_turn_id:
            raise SteerRejected(f"turn {expected_turn_id} is not running")
        try:
            result = await self._connection.request(
                "turn/steer",
                {
                    "threadId": thread_id,
                    "expectedTurnId": expected_turn_id,
                    "input": user_input(text),
                },
                timeout=CONTROL,
            )
        except RpcError as error:
            if error.code == -32600 or "no active turn" in error.message.lower():
                raise SteerRejected(error.message) from error
            raise
        turn_id = result.get("turnId") if isinstance(result, dict) else None
        if turn_id != expected_turn_id:
            raise SteerRejected(f"the server steered {turn_id!r}, not {expected_turn_id!r}")
        return expected_turn_id

    async def interrupt(self, thread_id: str, turn_id: str) -> None:
        await self._connection.request(
            "turn/interrupt", {"threadId": thread_id, "turnId": turn_id}, timeout=CONTROL
        )

    # -- approvals -----------------------------------------------------------------------------

    def decide(
        self, approval_id: str, decision: ApprovalDecision, *, by: DecidedBy = "user"
    ) -> bool:
        """Answer a pending approval. ``False`` when it is unknown or already answered."""
        return self._approvals.decide(approval_id, decision, by=by)

    async def on_request(self, method: str, params: Any) -> Any:
        """The connection's handler for server-to-client requests."""
        thread_id = params.get("threadId") if isinstance(params, dict) else None
        approval_id = self._approvals.next_id()
        event = approval_request(method, params, approval_id)
        if event is None:
            raise MethodNotFound
        if not isinstance(thread_id, str) or thread_id not in self._threads:
            return approval_result(method, params, "decline")
        pending = self._approvals.expect(approval_id, thread_id)
        self._emit(thread_id, event)
        decision = await self._approvals.wait(pending)
        return approval_result(method, params, decision)

    # -- notifications -------------------------------------------------------------------------

    def on_notification(self, method: str, params: Any) -> None:
        thread_id = notification_thread(params)
        if thread_id is None:
            return
        tracker = self._threads.get(thread_id)
        if tracker is None:
            return
        for event in tracker.feed(method, params):
            self._emit(thread_id, event)
        if tracker.needs_read and self._nursery is not None:
            tracker.needs_read = False
            self._nursery.start_soon(self._reconcile, thread_id)

    async def _reconcile(self, thread_id: str) -> None:
        """The tracker saw something odd: ask the server what state the thread is in.

        Not at once: Codex reports the thread ``idle`` just before every ``turn/completed``
        (see the recorded transcripts), so the odd sign is usually explained a moment later,
        and a read then would cost every turn a round trip."""
        tracker = self._threads[thread_id]
        turn_id = tracker.active_turn_id
        await trio.sleep(RECONCILE_GRACE)
        if turn_id is None or tracker.active_turn_id != turn_id:
            return
        try:
            thread = await self.read_thread(thread_id)
            status = thread.get("status")
            if isinstance(status, dict) and status.get("type") == "active":
                return
            result = await self._connection.request(
                "thread/turns/list", {"threadId": thread_id, "limit": 5}, timeout=READ
            )
        except Exception:
            logger.exception("app-server: reconciling thread %s failed", thread_id)
            return
        for turn in (result.get("data") if isinstance(result, dict) else None) or []:
            if isinstance(turn, dict) and turn.get("id") == turn_id:
                events = tracker.feed("turn/completed", {"threadId": thread_id, "turn": turn})
                for event in events:
                    self._emit(thread_id, event)
                return

    def _emit(self, thread_id: str, event: RuntimeEvent) -> None:
        try:
            self._on_event(thread_id, event)
        except Exception:
            logger.exception("app-server: event sink failed on %s", type(event).__name__)
