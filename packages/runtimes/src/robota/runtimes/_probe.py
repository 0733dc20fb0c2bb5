"""The probe behind ``RuntimePlugin.probe``: start an agent, shake hands, optionally open and
close a session, stop it, and report versions, timings and capabilities.

``robota doctor`` and ``robota agents check`` use it; driving turns uses the same clients.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import trio

from robota.core import AgentLaunch, ProbeReport

from ._acp import AcpClient
from ._app_server import AppServerClient
from ._jsonrpc import Connection, ConnectionLost, RpcError, RpcTimeout
from ._process import AgentProcess

__all__ = ["probe"]


async def probe(launch: AgentLaunch, *, acp: bool, timeout: float, session: bool) -> ProbeReport:
    """See ``robota.core.RuntimePlugin.probe``."""
    return await _Probe(launch, acp=acp).run(timeout=timeout, session=session)


def _ignore(_session: str, _event: object) -> None:
    """Probes run no turns; any event is noise."""


class _Probe:
    """One probe run: the steps, their timings, and the report."""

    def __init__(self, launch: AgentLaunch, *, acp: bool) -> None:
        self.launch = launch
        self.acp = acp
        self.began = time.perf_counter()
        self.timings: dict[str, float] = {}
        self.capabilities: dict[str, Any] = {}

    def report(self, ok: bool, detail: str, version: str | None = None) -> ProbeReport:
        return ProbeReport(
            self.launch.name,
            self.launch.kind,
            ok,
            detail,
            version,
            time.perf_counter() - self.began,
            dict(self.timings),
            dict(self.capabilities),
        )

    async def run(self, *, timeout: float, session: bool) -> ProbeReport:
        launch = self.launch
        try:
            agent = await AgentProcess.launch(launch)
        except OSError as error:
            return self.report(False, f"cannot start {launch.command!r}: {error.strerror or error}")
        assert agent.process.stdin is not None and agent.process.stdout is not None
        connection = Connection(
            agent.process.stdin, agent.process.stdout, name=launch.name, jsonrpc_field=self.acp
        )
        client: AcpClient | AppServerClient = (
            AcpClient(connection, _ignore, fs=False, terminal=False)
            if self.acp
            else AppServerClient(connection, _ignore)
        )
        outcome = self.report(False, "the probe was cancelled")
        async with trio.open_nursery() as nursery:
            nursery.start_soon(agent.drain_stderr)
            await nursery.start(connection.run)
            try:
                with trio.fail_after(timeout):
                    version = await self._steps(client, nursery, session=session)
                outcome = self.report(True, "session ok" if session else "handshake ok", version)
            except trio.TooSlowError:
                outcome = self.report(False, f"no answer within {timeout:g} s")
            except RpcTimeout as error:
                outcome = self.report(False, str(error))
            except RpcError as error:
                outcome = self.report(
                    False, f"{error.method} failed: {error.code}: {error.message}"
                )
            except ConnectionLost:
                with trio.move_on_after(1.0):
                    await agent.process.wait()
                code = agent.process.returncode
                outcome = self.report(False, f"the agent exited early (exit code {code})")
            finally:
                stopping = time.perf_counter()
                await agent.shutdown()
                self.timings["stop"] = time.perf_counter() - stopping
                client.close("probe finished")
                nursery.cancel_scope.cancel()
        return ProbeReport(**{**_fields(outcome), "timings": dict(self.timings)})

    async def _steps(
        self, client: AcpClient | AppServerClient, nursery: trio.Nursery, *, session: bool
    ) -> str | None:
        step = time.perf_counter()
        version = await client.initialize(nursery)
        self.timings["initialize"] = time.perf_counter() - step
        cwd = Path(self.launch.cwd or Path.cwd())
        if isinstance(client, AcpClient):
            prompt = client.capabilities.get("promptCapabilities") or {}
            sessions = client.capabilities.get("sessionCapabilities") or {}
            self.capabilities.update(
                steer=False,
                load=client.can_load,
                images=bool(prompt.get("image")),
                audio=bool(prompt.get("audio")),
                sessions=sorted(sessions) if isinstance(sessions, dict) else [],
                auth=[m.get("id") for m in client.auth_methods],
            )
            if session:
                step = time.perf_counter()
                opened = await client.new_session(cwd, permission_mode="default")
                self.capabilities["modes"] = list(opened.modes)
                if isinstance(sessions, dict) and "close" in sessions:
                    await client.close_session(opened.id)
                self.timings["session"] = time.perf_counter() - step
        else:
            self.capabilities.update(
                steer=True,
                load=True,
                images=True,
                fork=True,
                interrupt=True,
                modes=["default", "acceptEdits", "bypassPermissions", "plan"],
            )
            if session:
                step = time.perf_counter()
                await client.start_thread(cwd=str(cwd), permission_mode=None, ephemeral=True)
                self.timings["session"] = time.perf_counter() - step
        return version


def _fields(report: ProbeReport) -> dict[str, Any]:
    return {name: getattr(report, name) for name in report.__dataclass_fields__}
