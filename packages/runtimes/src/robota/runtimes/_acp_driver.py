"""The ``SessionDriver`` of ACP (see ``_drivers``)."""

from __future__ import annotations

import base64
import logging
import mimetypes
from collections.abc import Mapping, Sequence
from pathlib import Path

import trio

from robota.core import McpServer
from robota.core.agents import AgentSessionInfo, SessionSpec
from robota.core.events import ApprovalDecision

from ._acp import AcpClient, AcpSession, ImagesUnsupported, SessionBusy
from ._approvals import DecidedBy
from ._drivers import EventSink, PromptRefused, SessionRefused, SteerRefusedError
from ._jsonrpc import Connection, RpcError
from ._mcp_servers import acp_mcp_servers

__all__ = ["AcpDriver"]

logger = logging.getLogger("robota.runtimes.agent")


class AcpDriver:
    def __init__(
        self,
        connection: Connection,
        on_event: EventSink,
        mcp_servers: Sequence[McpServer] = (),
    ) -> None:
        self.client = AcpClient(connection, on_event)
        self.version: str | None = None
        self.mcp_servers = tuple(mcp_servers)
        """Offered to every session but a Restricted one (``SessionSpec.restricted``)."""

    def _servers(self, spec: SessionSpec) -> list[dict[str, object]]:
        if spec.restricted:
            return []
        return acp_mcp_servers(self.mcp_servers, self.client.capabilities)

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
        self.claim(session.id, spec)
        return session.id, resumed

    def claim(self, session_id: str, spec: SessionSpec) -> None:
        session = self.client.session(session_id)
        if session is not None and spec.task_id is not None:
            # Terminals are robota's own processes, run for one session: they can say whose.
            session.terminal_env["ROBOTA_TASK_ID"] = spec.task_id

    async def _open(self, spec: SessionSpec, resume_id: str | None) -> tuple[AcpSession, bool]:
        if resume_id is not None and self.client.can_load:
            try:
                loaded = await self.client.load_session(
                    resume_id,
                    spec.cwd,
                    permission_mode=spec.permission_mode,
                    mcp_servers=self._servers(spec),
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
                spec.fork_from,
                spec.cwd,
                permission_mode=spec.permission_mode,
                mcp_servers=self._servers(spec),
            )
            return forked, True
        session = await self.client.new_session(
            spec.cwd, permission_mode=spec.permission_mode, mcp_servers=self._servers(spec)
        )
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


def _inline_image(path: Path) -> tuple[str, str]:
    """ACP takes images inline: ``(mime type, base64 data)``."""
    mime = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
    return mime, base64.b64encode(path.read_bytes()).decode("ascii")
