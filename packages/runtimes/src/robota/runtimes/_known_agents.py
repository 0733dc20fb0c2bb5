"""The agents each shipped runtime plugin drives that ``robota init`` can find and install.

Core's detection (``robota.core.config.detect_agents``) reads this from the plugins
(``known_agents`` of each, ``robota.core.config.KnowsAgents``), so the table of products lives
with the protocol that drives them: the App Server agent, and the ACP agents robota is tested
with (their adapters' npm packages where the agent itself speaks no ACP).
"""

from __future__ import annotations

from robota.core.config import KnownAgent

__all__ = ["ACP_AGENTS", "APP_SERVER_AGENTS", "KNOWN_AGENTS"]

APP_SERVER_AGENTS: tuple[KnownAgent, ...] = (KnownAgent("codex", "@openai/codex"),)

ACP_AGENTS: tuple[KnownAgent, ...] = (
    KnownAgent("codex-acp", "@zed-industries/codex-acp"),
    KnownAgent("gemini", "@google/gemini-cli"),
    KnownAgent("qwen", "@qwen-code/qwen-code"),
    KnownAgent("opencode", "opencode-ai"),
    KnownAgent("claude-agent-acp", "@agentclientprotocol/claude-agent-acp"),
)

KNOWN_AGENTS: tuple[KnownAgent, ...] = (*APP_SERVER_AGENTS, *ACP_AGENTS)
"""Both plugins' agents, in the order ``robota init`` lists them."""
