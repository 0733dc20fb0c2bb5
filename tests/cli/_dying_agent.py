"""A profile whose only agent dies with last words on stderr (a ``.env`` secret and a token
among them), for the tests that check those words are shown and the secrets are not."""

from __future__ import annotations

import json
import sys

from ..support.agent_actor import FAULT_AGENT
from ..support.robota import Robota
from ..support.trust import trust_workspace

DOTENV_SECRET = "dotenv-secret-8c41f"


SHAPED_TOKEN = "xoxb-1234567890-abcdefghij"


DYING_WORDS = ["Error: cannot log in", "  password *** was refused", "  token *** too"]


def write_dying_agent_config(robota: Robota, *, mid_turn: bool = False) -> None:
    """A profile whose only agent writes on stderr (a .env secret and a token among it) and
    exits with code 4 before it answers anything, or with ``mid_turn`` when told ``EXIT``
    (code 3)."""
    config = {
        "agents": {
            "dying": {
                "kind": "acp",
                "command": sys.executable,
                "args": [str(FAULT_AGENT)],
                "env": {
                    "FAULT_AGENT_DYING" if mid_turn else "FAULT_AGENT_STDERR": (
                        "\x1b[31mError:\x1b[0m cannot log in\n"
                        "  password ${DYING_PASSWORD} was refused\n"
                        f"  token {SHAPED_TOKEN} too"
                    ),
                    **({} if mid_turn else {"FAULT_AGENT_EXIT_AT_START": "4"}),
                },
            }
        },
        "defaults": {"agent": "dying", "cwd": str(robota.root)},
    }
    robota.home.mkdir(mode=0o700, exist_ok=True)
    (robota.home / "config.yaml").write_text(json.dumps(config))
    trust_workspace(robota.home, robota.root)
    env_file = robota.home / ".env"
    env_file.write_text(f"DYING_PASSWORD={DOTENV_SECRET}\n")
    env_file.chmod(0o600)
