"""A minimal valid configuration and its parse, as the validation tests make them."""

from __future__ import annotations

from pathlib import Path

from robota.core.config import Config, Profile, parse_config, resolve_profile

HOME = Path("/profiles/p")

MINIMAL = """\
agents:
  mine:
    kind: acp
    command: my-agent
defaults:
  agent: mine
"""


def _parse(text: str, environ: dict[str, str] | None = None) -> Config:
    return parse_config(
        text,
        file=HOME / "config.yaml",
        environ=environ or {},
        profile=_profile(),
        start_dir=START,
    )


START = Path("/work/here")


def _profile() -> Profile:
    return resolve_profile({"ROBOTA_HOME": str(HOME)})
