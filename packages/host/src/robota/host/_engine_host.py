"""From a profile to a running engine: configuration, logging, agent hosts.

Shared by the host, background sessions, ``--serve``, print mode and the TUI, so each only
decides what it does with the engine, never how the engine is put together. The ``robota``
script's parse cache is the CLI's (``robota.cli._profile`` turns it on, then loads through
``load_profile`` here): the host reads configuration as any library caller does.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from robota.core import PrestartedAgent
    from robota.core.config import Config, Profile
    from robota.core.engine import Engine, TaskOwning

__all__ = ["load_profile", "open_engine"]


def load_profile() -> tuple[Config, Profile]:
    """The profile's configuration; exit 2 with the reason when it is missing or invalid."""
    from robota.core import ConfigError  # noqa: PLC0415 (keeps --help fast)
    from robota.core.config import load_config, resolve_profile  # noqa: PLC0415

    try:
        profile = resolve_profile()
        return load_config(profile), profile
    except FileNotFoundError as missing:
        print(
            f"robota: {missing.filename or missing}: not found; run: robota init", file=sys.stderr
        )
        sys.exit(2)
    except ConfigError as error:
        print(f"robota: {error}", file=sys.stderr)
        sys.exit(2)


def open_engine(
    config: Config,
    profile: Profile,
    *,
    human_approves: bool | Callable[[str], bool],
    recover: Callable[[str], bool] | None = None,
    prestarted: PrestartedAgent | None = None,
    agent_env: Mapping[str, str] | None = None,
    restricted: Callable[[Path], bool] | None = None,
    quiet_after: float | None = None,
    open_ahead: Callable[[str], bool] | None = None,
    owning: TaskOwning | None = None,
) -> Engine:
    """An engine for the profile's agents and store, logging to the profile's log file; the
    host of ``prestarted``'s agent adopts that process (see ``_prestart``); every agent also
    gets ``agent_env`` (non-secret). ``restricted(cwd)``: which directories run Restricted
    (``_trust``; ``None``: each by its workspace's trust, fail closed). ``quiet_after``: the
    engine's passivation of settled routes (``Engine``; ``None``: only after its idle time).
    ``open_ahead(route_key)``: the routes whose agents keep a session opened ahead for them.
    ``owning``: which tasks its routes may take up and claim (the terminal's,
    ``_terminal_owner``; ``None``: every task)."""
    from robota.core import runtime_plugins  # noqa: PLC0415
    from robota.core.engine import Engine, EngineAgent, TaskDefaults  # noqa: PLC0415
    from robota.core.logs import configure_logging  # noqa: PLC0415

    from ._launch import agent_launch  # noqa: PLC0415
    from ._trust import restricted_hook  # noqa: PLC0415

    configure_logging(config.logging.path, config.logging.level, secrets=config.secrets)
    plugins = runtime_plugins()
    agents = []
    for agent in config.agents.values():
        plugin = plugins.get(agent.kind)
        if plugin is None:
            print(f"robota: no runtime plugin for agent kind {agent.kind!r}", file=sys.stderr)
            sys.exit(2)
        launch = agent_launch(agent, config, profile, agent_env)
        adopt = prestarted if prestarted is not None and prestarted.launch == launch else None
        host = plugin.host(launch, prestarted=adopt)
        agents.append(EngineAgent(agent.kind, host, plugin.capabilities))
    defaults = TaskDefaults(
        agent=config.defaults.agent,
        cwd=config.defaults.cwd,
        permission_mode=config.defaults.permission_mode,
        workspace=profile.home / "workspace",
    )
    config.storage.sqlite_path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    return Engine(
        config.storage.sqlite_path,
        agents,
        defaults,
        human_approves=human_approves,
        recover=recover,
        restricted=restricted if restricted is not None else restricted_hook(profile),
        quiet_after=quiet_after,
        open_ahead=open_ahead,
        owning=owning,
    )
