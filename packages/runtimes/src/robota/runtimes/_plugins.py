"""The runtime plugins robota ships: ``app-server`` and ``acp``, registered as entry points.

For now each offers ``probe`` (start, handshake, version, stop), which ``robota doctor`` uses;
driving sessions and turns builds on the same connection and process pieces.
"""

from __future__ import annotations

import os
import time
from collections.abc import Awaitable, Callable
from typing import Any

import trio

from robota.core import AgentLaunch, ProbeReport

from ._handshake import (
    acp_initialize_params,
    acp_version,
    app_server_initialize_params,
    app_server_version,
)
from ._jsonrpc import Connection, ConnectionLost, RpcError, RpcTimeout
from ._process import AgentProcess, agent_environment

__all__ = ["AcpRuntime", "AppServerRuntime", "acp", "app_server"]

Handshake = Callable[[Connection], Awaitable[str | None]]


async def _probe(
    launch: AgentLaunch, *, timeout: float, acp: bool, handshake: Handshake
) -> ProbeReport:
    began = time.perf_counter()

    def report(ok: bool, detail: str, version: str | None = None) -> ProbeReport:
        return ProbeReport(
            launch.name, launch.kind, ok, detail, version, time.perf_counter() - began
        )

    env = agent_environment(
        os.environ,
        launch.env,
        agent_name=launch.name,
        home=launch.home,
        config_path=launch.config_path,
    )
    try:
        agent = await AgentProcess.start(
            launch.name, [launch.command, *launch.args], env=env, cwd=launch.cwd
        )
    except OSError as error:
        return report(False, f"cannot start {launch.command!r}: {error.strerror or error}")
    assert agent.process.stdin is not None and agent.process.stdout is not None
    connection = Connection(
        agent.process.stdin, agent.process.stdout, name=launch.name, jsonrpc_field=acp
    )
    outcome = report(False, "the probe was cancelled")
    async with trio.open_nursery() as nursery:
        nursery.start_soon(agent.drain_stderr)
        await nursery.start(connection.run)
        try:
            version = await handshake(connection)
            outcome = report(True, "handshake ok", version)
        except RpcTimeout:
            outcome = report(False, f"no answer to initialize within {timeout:g} s")
        except RpcError as error:
            outcome = report(False, f"initialize failed: {error.code}: {error.message}")
        except ConnectionLost:
            with trio.move_on_after(1.0):
                await agent.process.wait()
            code = agent.process.returncode
            outcome = report(False, f"the agent exited during the handshake (exit code {code})")
        finally:
            await agent.shutdown()
            nursery.cancel_scope.cancel()
    return outcome


class AppServerRuntime:
    """Codex App Server protocol (and compatible servers)."""

    kind = "app-server"

    async def probe(self, launch: AgentLaunch, *, timeout: float) -> ProbeReport:
        async def handshake(connection: Connection) -> str | None:
            result: Any = await connection.request(
                "initialize", app_server_initialize_params(), timeout=timeout
            )
            await connection.notify("initialized")
            return app_server_version(result)

        return await _probe(launch, timeout=timeout, acp=False, handshake=handshake)


class AcpRuntime:
    """Agent Client Protocol (gemini, qwen, opencode, codex-acp, claude-agent-acp, ...)."""

    kind = "acp"

    async def probe(self, launch: AgentLaunch, *, timeout: float) -> ProbeReport:
        async def handshake(connection: Connection) -> str | None:
            result: Any = await connection.request(
                "initialize", acp_initialize_params(fs=False, terminal=False), timeout=timeout
            )
            return acp_version(result)

        return await _probe(launch, timeout=timeout, acp=True, handshake=handshake)


app_server = AppServerRuntime()
acp = AcpRuntime()
