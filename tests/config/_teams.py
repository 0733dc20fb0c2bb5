"""A configuration with teams, as the team tests make it."""

from __future__ import annotations

from pathlib import Path

from robota.core.config import Config, parse_config, resolve_profile

HOME = Path("/profiles/p")
FILE = HOME / "config.yaml"


BASE = """\
agents:
  mine:
    kind: acp
    command: my-agent
defaults:
  agent: mine
transports:
  feishu:
    appId: cli_a
    appSecret: a-secret-of-enough-length
    userOpenId: ou_owner
  slack:
    botToken: xoxb-1-2-3
    appToken: xapp-1-2
    userId: U1
"""


def _parse(teams: str) -> Config:
    return parse_config(
        BASE + teams,
        file=FILE,
        environ={},
        profile=resolve_profile({"ROBOTA_HOME": str(HOME)}),
        start_dir=Path("/start"),
    )


def _team(extra: str, transport: str = "feishu") -> str:
    head = f"teams:\n  web:\n    transport: {transport}\n"
    return head + f"    chat: oc_1\n    project: /srv/web\n{extra}"
