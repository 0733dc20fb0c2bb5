"""From a configured agent to what a runtime plugin needs to start it."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from robota.core import AgentLaunch
    from robota.core.config import AgentConfig, Config, Profile

__all__ = ["agent_launch"]


def agent_launch(
    agent: AgentConfig,
    config: Config,
    profile: Profile,
    extra_env: Mapping[str, str] | None = None,
) -> AgentLaunch:
    """The launch of ``agent``; its ``secrets`` (masked where the agent's stderr is shown) are
    the configuration's and the secret-named variables the agent gets, inherited or its own.
    ``extra_env`` (the host's transports' non-secret ids) comes under the agent's own ``env``."""
    from robota.core import AgentLaunch  # noqa: PLC0415 (keeps --help fast)
    from robota.core.config import is_secret_value, merged_servers  # noqa: PLC0415

    given = {**os.environ, **agent.env}
    credentials = {value for name, value in given.items() if is_secret_value(name, value)}
    cwd = config.defaults.cwd
    return AgentLaunch(
        name=agent.name,
        kind=agent.kind,
        command=agent.command,
        args=agent.args,
        env={**(extra_env or {}), **agent.env},
        home=profile.home,
        config_path=config.file,
        cwd=cwd if cwd.is_dir() else None,
        secrets=config.secrets | credentials,
        mcp_servers=merged_servers(config.mcp_servers, agent.mcp_servers),
    )
