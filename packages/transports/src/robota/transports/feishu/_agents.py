"""What an agent can do, as its runtime plugin declares it: the transport offers only what
the agent can take (images as images, a Reset button where turns can be forked through)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from robota.core import AgentCapabilities, PluginError, runtime_plugins

if TYPE_CHECKING:
    from robota.core.config import Config

__all__ = ["declared"]


def declared(config: Config, agent: str | None) -> AgentCapabilities:
    """The capabilities ``agent``'s runtime declares (``None``: the profile's default agent);
    an unknown agent or runtime can do nothing. A session may refine them down (an ACP agent
    says whether it takes images); the engine then refuses with the reason."""
    entry = config.agents.get(agent or config.defaults.agent)
    if entry is None:
        return AgentCapabilities()
    try:
        plugin = runtime_plugins().get(entry.kind)
    except PluginError:
        return AgentCapabilities()
    return plugin.capabilities if plugin is not None else AgentCapabilities()
