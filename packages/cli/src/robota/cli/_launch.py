"""From a configured agent to what a runtime plugin needs to start it."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from robota.core import AgentLaunch
    from robota.core.config import AgentConfig, Config, Profile

__all__ = ["agent_launch"]


def agent_launch(agent: AgentConfig, config: Config, profile: Profile) -> AgentLaunch:
    from robota.core import AgentLaunch  # noqa: PLC0415 (keeps --help fast)

    cwd = config.defaults.cwd
    return AgentLaunch(
        name=agent.name,
        kind=agent.kind,
        command=agent.command,
        args=agent.args,
        env=agent.env,
        home=profile.home,
        config_path=config.file,
        cwd=cwd if cwd.is_dir() else None,
    )
