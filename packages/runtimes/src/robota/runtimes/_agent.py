"""An agent as a supervised subtree: its session table and its process service.

``agent_host`` builds, for one configured agent, the ``SessionTable`` (reached through a
``LoopMailbox``, the host's stable address: it lives on the trio loop and outlives processes)
and a supervisor whose one child is the ``AgentProcessService`` (the process, spawned on first
use). A crash of the process restarts only the process, with backoff; the table resumes its
sessions in the next one. A message the table fails on ends the current process the same way.

Jobs go from the table to the process service along one ``JobLine`` owned by the host, so
jobs sent while the process is down wait for the next one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import count
from typing import TYPE_CHECKING

from robota.core import (
    AgentHost,
    AgentLaunch,
    Backoff,
    ChildSpec,
    LoopMailbox,
    Supervisor,
)

from ._agent_process import AgentProcessService, JobLine, ProcessSettings
from ._prestart import Prestarted
from ._process import ShutdownTimings
from ._session_table import SessionTable

if TYPE_CHECKING:
    from robota.core import McpServer

    from ._drivers import DriverFactory, EventSink, SessionDriver
    from ._jsonrpc import Connection

__all__ = ["agent_host", "driver_factory"]


def agent_host(
    launch: AgentLaunch,
    *,
    acp: bool,
    backoff: Backoff | None = None,
    handshake_timeout: float = 60.0,
    timings: ShutdownTimings | None = None,
    environ: Mapping[str, str] | None = None,
    prestarted: Prestarted | None = None,
) -> AgentHost:
    """The agent named by ``launch`` as an ``AgentHost`` (see ``robota.core.AgentHost``);
    its first process is ``prestarted`` when given (see ``_prestart``)."""
    timings = timings or ShutdownTimings()
    settings = ProcessSettings(
        launch,
        driver_factory(acp=acp, mcp_servers=launch.mcp_servers),
        jsonrpc_field=acp,
        handshake_timeout=handshake_timeout,
        timings=timings,
        environ=environ,
        prestarted=prestarted,
    )
    jobs = JobLine()
    generations = count(1)
    table = SessionTable(launch.name, jobs.submit)
    current: AgentProcessService | None = None

    def table_failed(error: Exception) -> None:
        if current is not None:
            current.fail(error)

    mailbox = LoopMailbox(f"agent:{launch.name}", table.receive, on_error=table_failed)

    def process() -> AgentProcessService:
        # The factory runs on the trio thread, at every (re)start: the mailbox opens here.
        nonlocal current
        mailbox.open()
        current = AgentProcessService(settings, jobs, mailbox.handle, generations)
        return current

    supervisor = Supervisor(
        f"agent:{launch.name}",
        [
            ChildSpec(
                "process",
                process,
                shutdown=timings.eof_grace + timings.term_grace + 5.0,
            )
        ],
        backoff=backoff,
    )

    def pid() -> int | None:
        return current.pid if current is not None else None

    return AgentHost(launch.name, mailbox, supervisor, pid)


def driver_factory(*, acp: bool, mcp_servers: Sequence[McpServer] = ()) -> DriverFactory:
    """The driver factory of one protocol; its module (and client) loads at the first driver,
    so building a host imports neither (every configured agent gets one). Each driver offers
    its sessions ``mcp_servers`` (the agent's launch's)."""

    def make(connection: Connection, on_event: EventSink) -> SessionDriver:
        if acp:
            from ._acp_driver import AcpDriver  # noqa: PLC0415 (one protocol per process)

            return AcpDriver(connection, on_event, mcp_servers)
        from ._app_server_driver import AppServerDriver  # noqa: PLC0415

        return AppServerDriver(connection, on_event, mcp_servers)

    return make
