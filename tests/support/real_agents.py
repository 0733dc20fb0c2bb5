"""The real agents the suite drives: their pinned versions and a ``robota`` profile made of them
(each isolated through its env, pointed at the fake model when given one)."""

from __future__ import annotations

import json
from typing import Any

from .agents import isolated
from .robota import Robota
from .trust import trust_workspace

PINNED = {
    "codex": "0.171.0",
    "codex-acp": "0.16.0",
    "gemini": "0.61.0",
    "qwen": "0.24.4",
    "opencode": "1.18.33",
    "claude-agent-acp": "0.49.0",
}


TEMPLATE_NAMES = {"claude-agent-acp": "claude"}


def write_real_agents_config(
    robota: Robota, names: list[str], model_url: str | None = None, **isolation: Any
) -> dict[str, Any]:
    """A profile whose agents are the real installed ones, each isolated through its env, and
    pointed at the fake model at ``model_url`` when given (the first name is the default)."""
    agents: dict[str, Any] = {}
    for name in names:
        if model_url is None:
            setup = isolated(name, robota.root / "agents", **isolation)
        else:
            setup = isolated(name, robota.root / "agents", model_url, **isolation)
        agents[TEMPLATE_NAMES.get(name, name)] = {
            "kind": setup.kind,
            "command": setup.command,
            "args": list(setup.args),
            "env": setup.env,
        }
    config = {
        "agents": agents,
        "defaults": {"agent": next(iter(agents)), "cwd": str(robota.root)},
        "storage": {"sqlitePath": "./data/robota.sqlite"},
        "logging": {"level": "debug", "path": "./logs/robota.log"},
    }
    robota.home.mkdir(mode=0o700, exist_ok=True)
    (robota.home / "config.yaml").write_text(json.dumps(config, indent=2))
    trust_workspace(robota.home, robota.root)  # headless starts refuse untrusted workspaces
    return config
