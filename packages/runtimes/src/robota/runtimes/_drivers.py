"""One face for both protocol clients, so the process service never asks which one it drives.

A ``SessionDriver`` wraps an ``AppServerClient`` or an ``AcpClient`` on one connection and
offers what the process service needs: open (or resume) a session from a ``SessionSpec``, start,
steer and interrupt turns, answer approvals, close. Protocol differences become outcomes the
session table understands: ``SteerRefused`` for an ACP steer or a steer that lost the race with
the turn's end, ``PromptRefused`` for a busy session or images the agent cannot take.
"""

from __future__ import annotations

import base64
import logging
import mimetypes
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Literal, Protocol

import trio

from robota.core import AgentError
from robota.core.agents import AgentSessionInfo, SessionSpec
from robota.core.events import ApprovalDecision, RuntimeEvent

from ._acp import AcpClient, AcpSession, ImagesUnsupported, SessionBusy
from ._app_server import AppServerClient, SteerRejected
from ._approvals import DecidedBy
from ._jsonrpc import Connection, RpcError

__all__ = [
    "AcpDriver",
    "AppServerDriver",
    "DriverFactory",
    "PromptRefused",
    "SessionDriver",
    "SessionRefused",
    "SteerRefusedError",
]

logger = logging.getLogger("robota.runtimes.agent")

EventSink = Callable[[str, RuntimeEvent], None]


class SteerRefusedError(AgentError):
    """The text did not reach a running turn."""

    def __init__(self, reason: Literal["ended", "unsupported"], message: str) -> None:
        self.reason: Literal["ended", "unsupported"] = reason
        super().__init__(message)


class PromptRefused(AgentError):
    """The prompt was not sent."""

    def __init__(self, reason: Literal["busy", "images_unsupported"], message: str) -> None:
        self.reason: Literal["busy", "images_unsupported"] = reason
        super().__init__(message)


class SessionRefused(AgentError):
    """The agent cannot open the session as asked (say, a fork on an agent that has none)."""


class SessionDriver(Protocol):
    version: str | None

    @property
    def capabilities(self) -> Mapping[str, object]: ...

    async def initialize(self, nursery: trio.Nursery) -> str | None: ...

    async def open(self, spec: SessionSpec, resume_id: str | None) -> tuple[str, bool]:
        """Open a session; resume ``resume_id`` when given and possible. Returns the session
        id and whether it was resumed."""
        ...

    async def start_turn(
        self, session_id: str, text: str, images: Sequence[Path], spec: SessionSpec
    ) -> str:
        """Start a turn; where the protocol takes them per turn, ``spec``'s model and effort
        apply from this turn on (App Server); elsewhere they apply when a session opens."""
        ...

    async def steer(self, session_id: str, expected_turn_id: str, text: str) -> str: ...

    async def interrupt(self, session_id: str) -> None: ...

    def decide(
        self, approval_id: str, decision: ApprovalDecision, *, by: DecidedBy = "user"
    ) -> bool: ...

    async def close_session(self, session_id: str) -> None: ...

    async def list_sessions(self, *, search: str | None, limit: int) -> list[AgentSessionInfo]:
        """The agent's own sessions, most recent first; ``SessionRefused`` when it has no list
        robota reads."""
        ...

    def close(self, reason: str) -> None: ...


DriverFactory = Callable[[Connection, EventSink], SessionDriver]


class AppServerDriver:
    def __init__(self, connection: Connection, on_event: EventSink) -> None:
        self.client = AppServerClient(connection, on_event)
        self.version: str | None = None

    @property
    def capabilities(self) -> Mapping[str, object]:
        return {"steer": True, "images": True, "resume": True, "fork": True}

    async def initialize(self, nursery: trio.Nursery) -> str | None:
        self.version = await self.client.initialize(nursery)
        return self.version

    async def open(self, spec: SessionSpec, resume_id: str | None) -> tuple[str, bool]:
        if resume_id is not None:
            try:
                info = await self.client.resume_thread(
                    resume_id,
                    cwd=str(spec.cwd),
                    model=spec.model,
                    permission_mode=spec.permission_mode,
                )
            except RpcError as error:
                # A thread the server no longer has (deleted, another CODEX_HOME) cannot come
                # back; a fresh thread keeps the session usable and ``resumed=False`` says so.
                logger.warning("app-server: cannot resume thread %s: %s", resume_id, error)
            else:
                return info.id, True
        elif spec.fork_from is not None:
            info = await self.client.fork_thread(spec.fork_from, last_turn_id=spec.fork_turn_id)
            return info.id, True
        info = await self.client.start_thread(
            cwd=str(spec.cwd),
            model=spec.model,
            permission_mode=spec.permission_mode,
            developer_instructions=spec.developer_instructions,
        )
        return info.id, False

    async def start_turn(
        self, session_id: str, text: str, images: Sequence[Path], spec: SessionSpec
    ) -> str:
        if self.client.active_turn(session_id) is not None:
            raise PromptRefused("busy", f"thread {session_id} is running a turn")
        return await self.client.start_turn(
            session_id, text, [str(p) for p in images], model=spec.model, effort=spec.effort
        )

    async def steer(self, session_id: str, expected_turn_id: str, text: str) -> str:
        try:
            return await self.client.steer(session_id, expected_turn_id, text)
        except SteerRejected as rejected:
            raise SteerRefusedError("ended", str(rejected)) from rejected

    async def interrupt(self, session_id: str) -> None:
        turn_id = self.client.active_turn(session_id)
        if turn_id is not None:
            await self.client.interrupt(session_id, turn_id)

    def decide(
        self, approval_id: str, decision: ApprovalDecision, *, by: DecidedBy = "user"
    ) -> bool:
        return self.client.decide(approval_id, decision, by=by)

    async def close_session(self, session_id: str) -> None:
        """App Server threads persist on their own; there is nothing to free."""

    async def list_sessions(self, *, search: str | None, limit: int) -> list[AgentSessionInfo]:
        threads, _ = await self.client.list_threads(limit=limit, search=search)
        return [info for info in map(_session_info, threads) if info is not None]

    def close(self, reason: str) -> None:
        self.client.close(reason)


class AcpDriver:
    def __init__(self, connection: Connection, on_event: EventSink) -> None:
        self.client = AcpClient(connection, on_event)
        self.version: str | None = None

    @property
    def capabilities(self) -> Mapping[str, object]:
        return {
            "steer": False,
            "images": self.client.accepts_images,
            "resume": self.client.can_load,
            "fork": self.client.can_fork,
        }

    async def initialize(self, nursery: trio.Nursery) -> str | None:
        self.version = await self.client.initialize(nursery)
        return self.version

    async def open(self, spec: SessionSpec, resume_id: str | None) -> tuple[str, bool]:
        session, resumed = await self._open(spec, resume_id)
        if spec.task_id is not None:
            # Terminals are robota's own processes, run for one session: they can say whose.
            session.terminal_env["ROBOTA_TASK_ID"] = spec.task_id
        return session.id, resumed

    async def _open(self, spec: SessionSpec, resume_id: str | None) -> tuple[AcpSession, bool]:
        if resume_id is not None and self.client.can_load:
            try:
                loaded = await self.client.load_session(
                    resume_id, spec.cwd, permission_mode=spec.permission_mode
                )
            except RpcError as error:
                logger.warning("acp: cannot load session %s: %s", resume_id, error)
            else:
                if loaded is not None:
                    return loaded, True
        elif spec.fork_from is not None:
            if not self.client.can_fork:
                raise SessionRefused(
                    "this agent cannot fork a session (it does not advertise session/fork)"
                )
            forked = await self.client.fork_session(
                spec.fork_from, spec.cwd, permission_mode=spec.permission_mode
            )
            return forked, True
        session = await self.client.new_session(spec.cwd, permission_mode=spec.permission_mode)
        return session, False

    async def start_turn(
        self,
        session_id: str,
        text: str,
        images: Sequence[Path],
        spec: SessionSpec,  # noqa: ARG002 (ACP takes settings when a session opens)
    ) -> str:
        if images and not self.client.accepts_images:
            raise PromptRefused(
                "images_unsupported", "this agent does not accept images; nothing was sent"
            )
        try:
            return await self.client.prompt(session_id, text, [_inline_image(p) for p in images])
        except SessionBusy as busy:
            raise PromptRefused("busy", str(busy)) from busy
        except ImagesUnsupported as refused:
            raise PromptRefused("images_unsupported", str(refused)) from refused

    async def steer(self, session_id: str, expected_turn_id: str, text: str) -> str:  # noqa: ARG002
        raise SteerRefusedError("unsupported", "ACP agents take no input during a turn")

    async def interrupt(self, session_id: str) -> None:
        if self.client.active_turn(session_id) is not None:
            await self.client.cancel(session_id)

    def decide(
        self, approval_id: str, decision: ApprovalDecision, *, by: DecidedBy = "user"
    ) -> bool:
        return self.client.decide(approval_id, decision, by=by)

    async def close_session(self, session_id: str) -> None:
        await self.client.close_session(session_id)

    async def list_sessions(self, *, search: str | None, limit: int) -> list[AgentSessionInfo]:  # noqa: ARG002
        # ``session/list`` is still unstable in ACP and its agents keep no shared store other
        # clients write to, so there is nothing beyond robota's own tasks to show.
        raise SessionRefused("ACP agents have no session list robota reads")

    def close(self, reason: str) -> None:
        self.client.close(reason)


def _session_info(thread: Mapping[str, object]) -> AgentSessionInfo | None:
    """A ``thread/list`` entry as an ``AgentSessionInfo``; ``None`` when it has no id."""
    thread_id = thread.get("id")
    if not isinstance(thread_id, str) or not thread_id:
        return None
    title = next(
        (
            " ".join(v.split())[:80]
            for k in ("name", "preview")
            if isinstance(v := thread.get(k), str) and v.strip()
        ),
        None,
    )
    cwd = thread.get("cwd")
    stamps = [thread.get(k) for k in ("recencyAt", "updatedAt", "createdAt")]
    updated = next(
        (float(v) for v in stamps if isinstance(v, int | float) and not isinstance(v, bool)), None
    )
    return AgentSessionInfo(thread_id, title, cwd if isinstance(cwd, str) else None, updated)


def _inline_image(path: Path) -> tuple[str, str]:
    """ACP takes images inline: ``(mime type, base64 data)``."""
    mime = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
    return mime, base64.b64encode(path.read_bytes()).decode("ascii")
