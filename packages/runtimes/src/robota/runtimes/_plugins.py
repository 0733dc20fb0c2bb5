"""The runtime plugins robota ships: ``app-server`` and ``acp``, registered as entry points.

Each offers ``probe``: start the agent with its scrubbed environment, shake hands, optionally
open and close a session, stop it, and report versions, timings and capabilities (``_probe``).
``robota doctor`` and ``robota agents check`` use it; driving turns uses the same clients.
``prestart`` spawns an agent's process before its host exists, for the host to adopt
(``_prestart``).

Loading a plugin (its entry point) must stay cheap: ``prestart`` runs before the rest of robota
has loaded, so this module imports the protocol clients and the agent host only where they are
used (``probe``, ``host``).
"""

from __future__ import annotations

from robota.core import AgentHost, AgentLaunch, Backoff, PrestartedAgent, ProbeReport

from ._prestart import Prestarted, prestart

__all__ = ["AcpRuntime", "AppServerRuntime", "acp", "app_server"]


class _Runtime:
    """What both plugins offer; ``acp`` picks the protocol."""

    kind: str
    acp: bool

    async def probe(
        self, launch: AgentLaunch, *, timeout: float, session: bool = False
    ) -> ProbeReport:
        from ._probe import probe  # noqa: PLC0415 (see the module docstring)

        return await probe(launch, acp=self.acp, timeout=timeout, session=session)

    def prestart(self, launch: AgentLaunch) -> PrestartedAgent | None:
        return prestart(launch)

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
    acp = False


class AcpRuntime(_Runtime):
    """Agent Client Protocol (gemini, qwen, opencode, codex-acp, claude-agent-acp, ...)."""

    kind = "acp"
    acp = True


app_server = AppServerRuntime()
acp = AcpRuntime()
