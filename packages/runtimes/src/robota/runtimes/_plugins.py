"""The runtime plugins robota ships: ``app-server`` and ``acp``, registered as entry points.

Each offers ``probe``: start the agent with its scrubbed environment, shake hands, optionally
open and close a session, stop it, and report versions, timings, capabilities and the last lines
of the agent's stderr (secrets masked). ``robota doctor`` and ``robota agents check`` use it;
driving turns uses the same clients. ``prestart`` spawns an agent's process before its host
exists, for the host to adopt (``_prestart``).

Each also declares what core decides with but does not know: its protocol's error codes
(``error_codes``, ``classify_failure``: ``robota.core.events.ClassifiesFailures``) and the
agents it drives that ``robota init`` detects (``known_agents``:
``robota.core.config.KnowsAgents``).

Loading a plugin (its entry point) must stay cheap: ``prestart`` runs it before the rest of
robota has loaded, so the protocol clients, the agent host and trio itself are imported where
they are used (tests/cli/test_import_budget.py pins it).
"""

from __future__ import annotations

import time
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from robota.core import (
    AgentCapabilities,
    AgentHost,
    AgentLaunch,
    PrestartedAgent,
    ProbeReport,
)

from ._error_codes import APP_SERVER_ERROR_CODES
from ._handshake import (
    PERMISSION_MODES,
    THREAD_CONFIG,
    acp_initialize_params,
    app_server_initialize_params,
    thread_params,
)
from ._prestart import Ahead, FirstRequest, Prestarted, prestart

if TYPE_CHECKING:
    from collections.abc import Mapping

    import trio

    from robota.core import Backoff
    from robota.core.config import KnownAgent
    from robota.core.events import ErrorCategory, TurnError

    from ._acp import AcpClient
    from ._app_server import AppServerClient

__all__ = ["AcpRuntime", "AppServerRuntime", "acp", "app_server"]


def _app_server_opening(
    *, cwd: Path, permission_mode: str, model: str | None, developer_instructions: str | None
) -> tuple[Ahead, ...]:
    """A new thread's opening as the App Server driver makes it (``AppServerDriver.open``:
    ``initialized`` after ``initialize``, then ``start_thread``). ACP writes none ahead (not
    done): the ACP agent measured (claude-agent-acp, on Node) is ready after robota is, so
    there is no wait for a ``session/new`` to hide."""
    if permission_mode not in PERMISSION_MODES:
        return ()
    params = thread_params(
        cwd=str(cwd),
        model=model,
        provider=None,
        permission_mode=permission_mode,
        developer_instructions=developer_instructions,
    )
    params["config"] = dict(THREAD_CONFIG)  # as the driver asks with no MCP server offered
    return (Ahead("initialized", None, request=False), Ahead("thread/start", params, request=True))


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
        # Here, not at the top: see the module docstring.
        import trio  # noqa: PLC0415 (prestart runs before trio loads; see the module docstring)

        from ._acp import AcpClient  # noqa: PLC0415
        from ._app_server import AppServerClient  # noqa: PLC0415
        from ._jsonrpc import Connection, ConnectionLost, RpcError, RpcTimeout  # noqa: PLC0415
        from ._process import AgentProcess  # noqa: PLC0415

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
                with trio.CancelScope(shield=True):
                    tail = await agent.last_words()
                nursery.cancel_scope.cancel()
        return ProbeReport(
            **{**_fields(outcome), "timings": dict(self.timings), "stderr_tail": tail}
        )

    async def _steps(
        self, client: AcpClient | AppServerClient, nursery: trio.Nursery, *, session: bool
    ) -> str | None:
        from ._acp import AcpClient  # noqa: PLC0415 (see the module docstring)

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


class _Runtime:
    """What both plugins offer; ``acp`` picks the protocol."""

    kind: str
    title: str
    acp: bool
    capabilities: AgentCapabilities
    error_codes: Mapping[str, ErrorCategory] = MappingProxyType({})
    """Its protocol's structured error codes (``ClassifiesFailures``); none: the text decides."""

    @property
    def known_agents(self) -> tuple[KnownAgent, ...]:
        """The agents ``robota init`` detects for this kind (``robota.core.config.KnowsAgents``);
        read when asked: the table's type loads config's detection, which a start never needs."""
        from ._known_agents import ACP_AGENTS, APP_SERVER_AGENTS  # noqa: PLC0415

        return ACP_AGENTS if self.acp else APP_SERVER_AGENTS

    def classify_failure(
        self, message: str, *, code: Any = None, http_status: int | None = None
    ) -> TurnError:
        from robota.core.events import classify_failure  # noqa: PLC0415 (see the docstring)

        return classify_failure(message, code=code, http_status=http_status, codes=self.error_codes)

    async def probe(
        self, launch: AgentLaunch, *, timeout: float, session: bool = False
    ) -> ProbeReport:
        return await _Probe(launch, acp=self.acp).run(timeout=timeout, session=session)

    def prestart(self, launch: AgentLaunch) -> PrestartedAgent | None:
        # The handshake's first request as the process service's driver makes it.
        params = (
            acp_initialize_params(fs=True, terminal=True)
            if self.acp
            else app_server_initialize_params()
        )
        first = FirstRequest("initialize", params, jsonrpc_field=self.acp)
        return prestart(launch, first, opening=None if self.acp else _app_server_opening)

    def host(
        self,
        launch: AgentLaunch,
        *,
        backoff: Backoff | None = None,
        handshake_timeout: float = 60.0,
        prestarted: PrestartedAgent | None = None,
    ) -> AgentHost:
        from ._agent import agent_host  # noqa: PLC0415 (see the module docstring)

        return agent_host(
            launch,
            acp=self.acp,
            backoff=backoff,
            handshake_timeout=handshake_timeout,
            # Only this package's own kind can be adopted; any other is its owner's to close.
            prestarted=prestarted if isinstance(prestarted, Prestarted) else None,
        )


class AppServerRuntime(_Runtime):
    """Codex App Server protocol (and compatible servers)."""

    kind = "app-server"
    title = "App Server"
    """How robota's messages name the kind (a reset's refusal: ``robota.core.engine``)."""
    acp = False
    error_codes = APP_SERVER_ERROR_CODES
    capabilities = AgentCapabilities(
        steer=True,
        per_turn_settings=True,
        list_sessions=True,
        fork=True,
        fork_at_turn=True,
        images=True,
        resume=True,
    )


class AcpRuntime(_Runtime):
    """Agent Client Protocol (gemini, qwen, opencode, codex-acp, claude-agent-acp, ...)."""

    kind = "acp"
    title = "ACP"
    acp = True
    capabilities = AgentCapabilities(fork=True, images=True, resume=True)
    """At most: whether an agent takes images, loads or forks sessions, its session says."""


app_server = AppServerRuntime()
acp = AcpRuntime()
