"""The ``SessionDriver`` of the Codex App Server protocol (see ``_drivers``)."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from pathlib import Path

import trio

from robota.core import McpServer
from robota.core.agents import AgentSessionInfo, SessionSpec
from robota.core.events import ApprovalDecision

from ._app_server import AppServerClient, SteerRejected
from ._approvals import DecidedBy
from ._drivers import EventSink, PromptRefused, SessionRefused, SteerRefusedError
from ._handshake import THREAD_CONFIG
from ._jsonrpc import Connection, RpcError, RpcTimeout
from ._mcp_servers import app_server_mcp_config

__all__ = ["AppServerDriver"]

logger = logging.getLogger("robota.runtimes.agent")

HELD_ELSEWHERE = "active writer"
"""What Codex's refusal to resume says when another server process holds the thread loaded."""


def held_elsewhere(error: RpcError) -> bool:
    """Whether a refused ``thread/resume`` means another process writes the thread (it exists,
    with its history), rather than that the thread is gone."""
    return HELD_ELSEWHERE in error.message.lower()


class AppServerDriver:
    def __init__(
        self,
        connection: Connection,
        on_event: EventSink,
        mcp_servers: Sequence[McpServer] = (),
    ) -> None:
        self.client = AppServerClient(connection, on_event)
        self.version: str | None = None
        self.mcp_servers = tuple(mcp_servers)
        """Offered to every thread but a Restricted session's (``SessionSpec.restricted``)."""

    def _config(self, spec: SessionSpec) -> dict[str, object]:
        if spec.restricted:
            return dict(THREAD_CONFIG)
        return {**THREAD_CONFIG, **app_server_mcp_config(self.mcp_servers)}

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
                    config=self._config(spec),
                )
            except RpcError as error:
                if held_elsewhere(error):
                    # The thread lives, loaded by another agent process (another owner of the
                    # task not let go of it): a fresh thread would answer without the task's
                    # history and split it in two, so the open fails saying why.
                    raise SessionRefused(
                        f"thread {resume_id} is held by another agent process (Codex: "
                        f"{error.message}); robota does not start a blank thread for a task "
                        "with history: stop the process that drives it, then try again"
                    ) from error
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
            config=self._config(spec),
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

    def claim(self, session_id: str, spec: SessionSpec) -> None:
        """A thread knows nothing of robota's task: nothing to tie."""

    async def close_session(self, session_id: str) -> None:
        """Unfollow the thread, which the server then unloads (``_config``); it persists on
        its own. Errors ignored: a thread not unloaded is simply left to the server."""
        try:
            await self.client.unsubscribe_thread(session_id)
        except (RpcError, RpcTimeout):
            logger.debug("app-server: thread/unsubscribe of %s failed", session_id)

    async def list_sessions(self, *, search: str | None, limit: int) -> list[AgentSessionInfo]:
        threads, _ = await self.client.list_threads(limit=limit, search=search)
        return [info for info in map(_session_info, threads) if info is not None]

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
