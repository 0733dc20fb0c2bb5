"""How a configured agent is spawned: its argv and its scrubbed environment, without trio.

Environment. An agent inherits ordinary variables, but never robota's secrets: every inherited
or configured variable whose name matches ``FEISHU_*``, ``SLACK_*`` or ``ROBOTA_*`` (in any case)
is removed, then robota adds its own non-secret context (``ROBOTA=1``, ``ROBOTA_HOME``,
``ROBOTA_CONFIG``, ``ROBOTA_AGENT_NAME``). ``agents.<name>.env`` is applied after the scrub and
cannot set a reserved name, save the chat transports' non-secret ids the host configures for
every agent (``CONTEXT_IDS``: ``ROBOTA_LARK_APP_ID``, ``ROBOTA_SLACK_USER_ID``, ...); the same
names inherited from robota's own environment are still scrubbed.

Both ways an agent starts use ``launch_command``: the process service (``_process``, on the
trio loop) and ``_prestart`` (plain ``subprocess``, before trio has even loaded, which is why
this module imports neither trio nor the kernel).
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ._stderr_tail import agent_secrets

if TYPE_CHECKING:
    from robota.core import AgentLaunch

__all__ = [
    "INJECTED_NAMES",
    "Spawn",
    "agent_environment",
    "is_reserved_name",
    "launch_command",
    "scrubbed_names",
]

logger = logging.getLogger("robota.runtimes.process")

_RESERVED = re.compile(r"^(FEISHU_|SLACK_|ROBOTA_)", re.IGNORECASE)
CONTEXT_IDS = re.compile(r"^ROBOTA_(LARK|SLACK)_[A-Z_]*ID$")
"""Reserved names an agent may be configured with: the chat transports' ids (never a secret:
no name of this shape holds a token; ``TransportPlugin.agent_env``)."""
INJECTED_NAMES = ("ROBOTA", "ROBOTA_HOME", "ROBOTA_CONFIG", "ROBOTA_AGENT_NAME")
"""robota's non-secret context an agent sees (set anew for each agent)."""


def is_reserved_name(name: str) -> bool:
    """Whether robota owns this variable name (chat credentials and robota's own settings)."""
    return bool(_RESERVED.match(name)) or name.upper() == "ROBOTA"


def scrubbed_names(inherited: Mapping[str, str]) -> list[str]:
    """The inherited variables ``agent_environment`` keeps from the agent (those it sets again
    itself, robota's non-secret context, aside)."""
    return [k for k in inherited if is_reserved_name(k) and k.upper() not in INJECTED_NAMES]


def agent_environment(
    inherited: Mapping[str, str],
    configured: Mapping[str, str],
    *,
    agent_name: str,
    home: Path,
    config_path: Path,
) -> dict[str, str]:
    """The environment an agent process starts with; see the module docstring for the rules."""
    env = {k: v for k, v in inherited.items() if not is_reserved_name(k)}
    for key, value in configured.items():
        if is_reserved_name(key) and not CONTEXT_IDS.match(key):
            logger.warning(
                "agent %s: env %s is reserved and was not passed",
                agent_name,
                key,
                extra={"agent": agent_name},
            )
            continue
        env[key] = value
    env.update(
        {
            "ROBOTA": "1",
            "ROBOTA_HOME": str(home),
            "ROBOTA_CONFIG": str(config_path),
            "ROBOTA_AGENT_NAME": agent_name,
        }
    )
    return env


@dataclass(frozen=True, slots=True)
class Spawn:
    """How a configured agent is spawned, whichever way it is (here, or ahead of the engine)."""

    command: list[str]
    env: dict[str, str]
    secrets: tuple[str, ...]
    """What the tail of its stderr masks: the values robota scrubbed from its environment and
    the profile's secrets."""


def launch_command(launch: AgentLaunch, environ: Mapping[str, str] | None = None) -> Spawn:
    """The argv, environment and masked secrets a configured agent starts with (``environ``
    default: this process's environment): one answer for every way an agent is spawned."""
    inherited = os.environ if environ is None else environ
    env = agent_environment(
        inherited,
        launch.env,
        agent_name=launch.name,
        home=launch.home,
        config_path=launch.config_path,
    )
    secrets = tuple(agent_secrets(inherited, scrubbed_names(inherited), launch.secrets))
    return Spawn([launch.command, *launch.args], env, secrets)
