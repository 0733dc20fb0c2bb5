"""What an agent can do, as its runtime plugin declares it: the transport offers only what
the agent can take (images as images, a Reset button where turns can be forked through)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from robota.core.frontend import agent_capabilities

if TYPE_CHECKING:
    from robota.core import AgentCapabilities
    from robota.core.config import Config

__all__ = ["declared"]


def declared(config: Config, agent: str | None) -> AgentCapabilities:
    """The capabilities ``agent``'s runtime declares (core's ``agent_capabilities``)."""
    return agent_capabilities(config, agent)
