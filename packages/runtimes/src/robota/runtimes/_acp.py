"""The ACP client: one agent process, one handshake, many sessions.

A turn is one ``session/prompt`` request; it runs as a task in the client's nursery and ends
with the response (``stopReason``) or a JSON-RPC error, which becomes a failed turn with a
classified error. Prompts are serialised per session by the client itself, because agents
disagree about a second prompt during a first (ACP.md s.13): one is refused with ``SessionBusy``
and the engine queues it. ACP has no steer: ``steer`` raises ``SteerUnsupported``.

The agent may call back for files and terminals (declared in ``initialize``); those are served by
``_acp_host`` within the session's directory.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import trio

from robota.core import AgentError
from robota.core.events import ApprovalDecision, RuntimeEvent, TurnError

from ._acp_host import FileAccess, HostError, Terminals
from ._acp_map import (
    ACP_PERMISSION_MODES,
    SessionTracker,
    permission_request,
    permission_result,
    prompt_blocks,
    prompt_error,
)
from ._approvals import ApprovalRegistry, DecidedBy
from ._handshake import acp_initialize_params, acp_version
from ._jsonrpc import (
    Connection,
    ConnectionLost,
    MethodNotFound,
    PendingRequest,
    RpcError,
    RpcTimeout,
)

__all__ = [
    "AcpClient",
    "AcpSession",
    "ImagesUnsupported",
    "SessionBusy",
    "SteerUnsupported",
]

logger = logging.getLogger("robota.runtimes.acp")

LIFECYCLE = 60.0
CONTROL = 10.0

EventSink = Callable[[str, RuntimeEvent], None]


class SessionBusy(AgentError):
    """A prompt is already running in this session; queue the new one."""


class SteerUnsupported(AgentError):
    """ACP cannot add input to a running turn; queue it for the next turn."""


class ImagesUnsupported(AgentError):
    """The agent did not advertise image prompts; nothing was sent."""


@dataclass
class AcpSession:
    id: str
    cwd: Path
    modes: tuple[str, ...] = ()
    current_mode: str | None = None
    unrestricted_files: bool = False
    terminal_env: dict[str, str] = field(default_factory=dict)
    """Added to the environment of the terminals this session asks for (``ROBOTA_TASK_ID``)."""
    tracker: SessionTracker = field(init=False)

    def __post_init__(self) -> None:
        self.tracker = SessionTracker(self.id)


class AcpClient:
    """Drives one ACP agent process through ``connection``."""

    def __init__(
        self, connection: Connection, on_event: EventSink, *, fs: bool = True, terminal: bool = True
    ) -> None:
        connection.on_notification = self.on_notification
        connection.on_request = self.on_request
        self._connection = connection
        self._on_event = on_event
        self._fs = fs
        self._terminal = terminal
        self._sessions: dict[str, AcpSession] = {}
        self._approvals = ApprovalRegistry(self._emit)
        self._nursery: trio.Nursery | None = None
        self._terminals: Terminals | None = None
        self.version: str | None = None
        self.capabilities: dict[str, Any] = {}
        self.auth_methods: list[dict[str, Any]] = []

    # -- lifecycle -----------------------------------------------------------------------------

    async def initialize(self, nursery: trio.Nursery) -> str | None:
        self._nursery = nursery
        self._terminals = Terminals(nursery)
        result = await self._connection.request(
            "initialize",
            acp_initialize_params(fs=self._fs, terminal=self._terminal),
            timeout=LIFECYCLE,
        )
        if isinstance(result, dict):
            caps = result.get("agentCapabilities")
            self.capabilities = caps if isinstance(caps, dict) else {}
            methods = result.get("authMethods")
            self.auth_methods = [m for m in methods or [] if isinstance(m, dict)]
        self.version = acp_version(result)
        return self.version

    @property
    def can_load(self) -> bool:
        return bool(self.capabilities.get("loadSession"))

    @property
    def can_fork(self) -> bool:
        sessions = self.capabilities.get("sessionCapabilities")
        return isinstance(sessions, dict) and sessions.get("fork") is not None

    @property
    def accepts_images(self) -> bool:
        prompt = self.capabilities.get("promptCapabilities")
        return isinstance(prompt, dict) and bool(prompt.get("image"))

    def close(self, reason: str) -> None:
        """The process is gone: cancel pending approvals, fail running turns, kill terminals.

        The owner of the process must call it: a turn whose connection was lost stays running
        until then, so that it ends with the real reason."""
        self._approvals.cancel_all()
        for session in self._sessions.values():
            error = TurnError(reason, "agent_exited", retryable=False)
            for event in session.tracker.fail(error):
                self._emit(session.id, event)
        if self._terminals is not None:
            self._terminals.close()

    # -- sessions ------------------------------------------------------------------------------

    async def new_session(
        self,
        cwd: Path,
        *,
        permission_mode: str = "default",
        mcp_servers: Sequence[Mapping[str, Any]] = (),
    ) -> AcpSession:
        params = {"cwd": str(cwd), "mcpServers": list(mcp_servers)}
        try:
            result = await self._connection.request("session/new", params, timeout=LIFECYCLE)
        except RpcError as error:
            if not await self._authenticate_after(error):
                raise
            result = await self._connection.request("session/new", params, timeout=LIFECYCLE)
        if not isinstance(result, dict) or not isinstance(result.get("sessionId"), str):
            raise RpcError("session/new", -32603, f"no sessionId in {str(result)[:200]}")
        session = self._register(result["sessionId"], cwd, result)
        await self.apply_permission_mode(session, permission_mode)
        return session

    async def load_session(
        self,
        session_id: str,
        cwd: Path,
        *,
        permission_mode: str = "default",
        mcp_servers: Sequence[Mapping[str, Any]] = (),
    ) -> AcpSession | None:
        """Reattach to a saved session in this process; ``None`` when the agent cannot."""
        if not self.can_load:
            return None
        result = await self._connection.request(
            "session/load",
            {"sessionId": session_id, "cwd": str(cwd), "mcpServers": list(mcp_servers)},
            timeout=LIFECYCLE,
        )
        # The replayed history arrived before this response, outside any turn: ignored.
        session = self._register(session_id, cwd, result if isinstance(result, dict) else {})
        await self.apply_permission_mode(session, permission_mode)
        return session

    async def fork_session(
        self,
        session_id: str,
        cwd: Path,
        *,
        permission_mode: str = "default",
        mcp_servers: Sequence[Mapping[str, Any]] = (),
    ) -> AcpSession:
        """A new session with ``session_id``'s history (the unstable ``session/fork``, for
        agents that advertise ``sessionCapabilities.fork``); the source is left as it was."""
        result = await self._connection.request(
            "session/fork",
            {"sessionId": session_id, "cwd": str(cwd), "mcpServers": list(mcp_servers)},
            timeout=LIFECYCLE,
        )
        if not isinstance(result, dict) or not isinstance(result.get("sessionId"), str):
            raise RpcError("session/fork", -32603, f"no sessionId in {str(result)[:200]}")
        session = self._register(result["sessionId"], cwd, result)
        await self.apply_permission_mode(session, permission_mode)
        return session

    def _register(self, session_id: str, cwd: Path, result: dict[str, Any]) -> AcpSession:
        raw_modes = result.get("modes")
        modes: dict[str, Any] = raw_modes if isinstance(raw_modes, dict) else {}
        available = tuple(
            str(m.get("id")) for m in modes.get("availableModes") or () if isinstance(m, dict)
        )
        # The rest of the answer (``configOptions``: a codex-acp session's model list, about
        # 5 KB decoded) is not kept: nothing reads it, and a host lives with every session.
        session = AcpSession(session_id, cwd, available, modes.get("currentModeId"))
        self._sessions[session_id] = session
        return session

    async def apply_permission_mode(self, session: AcpSession, mode: str) -> bool:
        """Switch the agent's own mode to match robota's permission mode, where it has one."""
        session.unrestricted_files = mode == "bypassPermissions"
        for candidate in ACP_PERMISSION_MODES.get(mode, ()):
            if candidate == session.current_mode:
                return True
            if candidate in session.modes:
                await self.set_mode(session.id, candidate)
                session.current_mode = candidate
                return True
        if mode == "plan":
            # Nothing of the agent's own keeps it from editing: say so in the log.
            logger.warning(
                "acp: the agent offers no plan or read-only mode (its modes: %s); it runs in its "
                "current mode although plan was asked for",
                ", ".join(session.modes) or "none",
            )
        return False

    async def close_session(self, session_id: str) -> None:
        """Free the session in the agent (``session/close``, where advertised); errors ignored:
        a session that cannot be closed is simply left to the agent."""
        self._sessions.pop(session_id, None)
        try:
            await self._connection.request("session/close", {"sessionId": session_id}, timeout=1.5)
        except (RpcError, RpcTimeout):
            logger.debug("acp: session/close of %s failed", session_id)

    async def set_mode(self, session_id: str, mode_id: str) -> None:
        await self._connection.request(
            "session/set_mode", {"sessionId": session_id, "modeId": mode_id}, timeout=CONTROL
        )

    async def set_config_option(self, session_id: str, config_id: str, value: Any) -> None:
        await self._connection.request(
            "session/set_config_option",
            {"sessionId": session_id, "configId": config_id, "value": value},
            timeout=CONTROL,
        )

    async def _authenticate_after(self, error: RpcError) -> bool:
        """After an auth failure, authenticate once with a method whose variables are set."""
        if "auth" not in error.message.lower() and error.code != -32000:
            return False
        for method in self.auth_methods:
            names = [v.get("name") for v in method.get("vars") or () if isinstance(v, dict)]
            if (
                method.get("type") == "env_var"
                and names
                and all(isinstance(n, str) and os.environ.get(n) for n in names)
            ):
                await self._connection.request(
                    "authenticate", {"methodId": method.get("id")}, timeout=LIFECYCLE
                )
                return True
        return False

    # -- turns ---------------------------------------------------------------------------------

    def session(self, session_id: str) -> AcpSession | None:
        """The open session ``session_id``, if this process has it."""
        return self._sessions.get(session_id)

    def active_turn(self, session_id: str) -> str | None:
        session = self._sessions.get(session_id)
        return session.tracker.active_turn_id if session is not None else None

    async def prompt(
        self, session_id: str, text: str, images: Sequence[tuple[str, str]] = ()
    ) -> str:
        """Start a turn; its events and its end arrive through ``on_event``. Returns once the
        prompt is written, its ``TurnStarted`` announced just after the write (announced
        before, the notice's readers would race the write for the interpreter)."""
        session = self._sessions[session_id]
        if session.tracker.active_turn_id is not None:
            raise SessionBusy(f"session {session_id} is running a turn")
        if images and not self.accepts_images:
            raise ImagesUnsupported(
                f"agent {self._connection.name} does not accept images in prompts"
            )
        started = session.tracker.begin()
        params = {"sessionId": session_id, "prompt": prompt_blocks(text, images)}
        try:
            pending = await self._connection.send_request("session/prompt", params)
        except ConnectionLost:
            # Whoever owns the process learns why it went (exit code, garbage) and says so
            # through ``close``, which fails this turn; failing it here would say less.
            pending = None
        self._emit(session_id, started)
        if pending is not None:
            assert self._nursery is not None
            self._nursery.start_soon(self._await_prompt, session, pending)
        return started.turn_id

    async def _await_prompt(self, session: AcpSession, pending: PendingRequest) -> None:
        try:
            result = await pending.result(timeout=None)
        except RpcError as error:
            events = session.tracker.fail(prompt_error(error.code, error.message, error.data))
        except ConnectionLost:
            return  # ``close`` fails the turn, naming why the process went
        else:
            events = session.tracker.end(result)
        for event in events:
            self._emit(session.id, event)

    async def steer(self, session_id: str, text: str) -> None:  # noqa: ARG002
        raise SteerUnsupported("ACP agents cannot take input during a turn; queue it")

    async def cancel(self, session_id: str) -> None:
        """Ask the agent to stop the running turn; it answers the prompt with ``cancelled``."""
        for approval_id in self._approvals.pending_for(session_id):
            self.decide(approval_id, "cancel")
        await self._connection.notify("session/cancel", {"sessionId": session_id})

    # -- approvals -----------------------------------------------------------------------------

    def decide(
        self, approval_id: str, decision: ApprovalDecision, *, by: DecidedBy = "user"
    ) -> bool:
        """Answer a pending permission request. ``False`` when unknown or already answered."""
        return self._approvals.decide(approval_id, decision, by=by)

    # -- the agent's requests ------------------------------------------------------------------

    async def on_request(self, method: str, params: Any) -> Any:
        session_id = params.get("sessionId") if isinstance(params, dict) else None
        session = self._sessions.get(session_id) if isinstance(session_id, str) else None
        if method == "session/request_permission":
            return await self._permission(session, params)
        if session is None:
            raise HostError(-32602, f"unknown session {session_id!r}")
        files = FileAccess(session.cwd, unrestricted=session.unrestricted_files)
        terminals = self._terminals
        assert terminals is not None
        if method == "fs/read_text_file" and self._fs:
            return files.read(params)
        if method == "fs/write_text_file" and self._fs:
            files.write(params)
            return None
        if self._terminal:
            if method == "terminal/create":
                return await terminals.create(params, files, session.terminal_env)
            if method == "terminal/output":
                return terminals.output(params)
            if method == "terminal/wait_for_exit":
                return await terminals.wait_for_exit(params)
            if method == "terminal/kill":
                return terminals.kill(params)
            if method == "terminal/release":
                return terminals.release(params)
        raise MethodNotFound

    async def _permission(self, session: AcpSession | None, params: Any) -> Any:
        if session is None or session.tracker.active_turn_id is None:
            return permission_result(params, "cancel")
        approval_id = self._approvals.next_id()
        event = permission_request(params, approval_id)
        if event is None:
            return permission_result(params, "cancel")
        for announced in session.tracker.announce(params.get("toolCall")):
            self._emit(session.id, announced)
        pending = self._approvals.expect(approval_id, session.id)
        self._emit(session.id, event)
        decision = await self._approvals.wait(pending)
        if decision in ("decline", "cancel"):
            for declined in session.tracker.declined(event.tool_id):
                self._emit(session.id, declined)
        return permission_result(params, decision)

    def on_notification(self, method: str, params: Any) -> None:
        if method != "session/update" or not isinstance(params, dict):
            return
        session = self._sessions.get(str(params.get("sessionId")))
        if session is None:
            return
        for event in session.tracker.feed(params.get("update")):
            self._emit(session.id, event)

    def _emit(self, session_id: str, event: RuntimeEvent) -> None:
        try:
            self._on_event(session_id, event)
        except Exception:
            logger.exception("acp: event sink failed on %s", type(event).__name__)
