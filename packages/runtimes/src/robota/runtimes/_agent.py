"""An agent as a supervised subtree: its actor and its process service.

``agent_host`` builds, for one configured agent, a supervisor with two children in
``rest_for_one`` order: the ``AgentActor`` (the session table, reached through the host's
stable address) and the ``AgentProcessService`` (the process, spawned on first use). A crash of
the process restarts only the process, with backoff; a crash of the actor restarts both, since
the process's sessions belonged to the table that is gone.

Jobs cross from the actor's thread to the trio loop through ``LoopPort.post`` into one unbounded
channel owned by the host, so jobs sent while the process is down wait for the next one. The
channel is unbounded because its producer is the actor, whose own inbox is where load is shed.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from itertools import count

import trio

from robota.core import (
    AgentHost,
    AgentLaunch,
    Backoff,
    ChildSpec,
    LoopPort,
    Strategy,
    Supervisor,
)

from ._agent_actor import AgentActor
from ._agent_jobs import Job
from ._agent_process import AgentProcessService, ProcessSettings
from ._drivers import AcpDriver, AppServerDriver
from ._process import ShutdownTimings

__all__ = ["agent_host"]


def agent_host(
    launch: AgentLaunch,
    *,
    acp: bool,
    backoff: Backoff | None = None,
    handshake_timeout: float = 60.0,
    timings: ShutdownTimings | None = None,
    environ: Mapping[str, str] | None = None,
) -> AgentHost:
    """The agent named by ``launch`` as an ``AgentHost`` (see ``robota.core.AgentHost``)."""
    timings = timings or ShutdownTimings()
    settings = ProcessSettings(
        launch,
        AcpDriver if acp else AppServerDriver,
        jsonrpc_field=acp,
        handshake_timeout=handshake_timeout,
        timings=timings,
        environ=environ,
    )
    send, receive = trio.open_memory_channel[Job](math.inf)
    generations = count(1)

    def actor() -> AgentActor:
        port = LoopPort()  # the factory runs on the trio thread: it captures this run

        def submit(job: Job) -> None:
            port.post(_send, send, job)

        return AgentActor(launch.name, submit)

    supervisor = Supervisor(
        f"agent:{launch.name}",
        [
            ChildSpec("sessions", actor),
            ChildSpec(
                "process",
                lambda: AgentProcessService(
                    settings, receive, supervisor.address("sessions"), generations
                ),
                shutdown=timings.eof_grace + timings.term_grace + 5.0,
            ),
        ],
        strategy=Strategy.REST_FOR_ONE,
        backoff=backoff,
    )
    return AgentHost(launch.name, supervisor.address("sessions"), supervisor)


def _send(channel: trio.MemorySendChannel[Job], job: Job) -> None:
    try:
        channel.send_nowait(job)
    except (trio.ClosedResourceError, trio.BrokenResourceError):
        pass  # the host is gone; nobody is left to answer
