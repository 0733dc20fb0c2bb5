"""The mesh commands' test profiles: a profile's config, the environment its ``robota`` runs
in (no session bus, so the file store is used and no test touches the keychain of the person
running it), ``robota`` run without a controlling terminal (``listed``: a listing's
``--json``), and ``mesh init`` on a pseudo-terminal with the phrase typed back."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

from ._terminal import ROBOTA, Run, Step, run_on_terminal

__all__ = ["CONFIG", "WORD", "_env", "_init", "_robota", "_shown_phrase", "listed"]

CONFIG = """\
agents:
  mine: {kind: acp, command: my-agent}
defaults: {agent: mine}
mesh:
  name: laptop
"""
WORD = re.compile(r"(\d+)\. ([a-z]+)")


def _env(home: Path) -> dict[str, str]:
    # No session bus: the OS keychain (Secret Service) is out of reach, the file store is used,
    # and no test touches the keychain of the person running it.
    return {
        "HOME": str(home.parent / "user"),
        "PATH": "/usr/bin:/bin",
        "ROBOTA_HOME": str(home),
        "LC_ALL": "C.UTF-8",
    }


def _robota(home: Path, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(ROBOTA), *args],
        check=False,
        env=_env(home),
        cwd=cwd or home.parent,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        start_new_session=True,  # no controlling terminal
    )


def listed(home: Path, *command: str) -> list[dict[str, Any]]:
    """``robota COMMAND --json`` (a listing: ``task list``, ``mesh offers``, ``mesh
    handoffs``, ``session list``), its rows."""
    done = _robota(home, *command, "--json")
    assert done.returncode == 0, (command, done.stderr)
    rows: list[dict[str, Any]] = json.loads(done.stdout)
    return rows


def _shown_phrase(screen: str) -> str:
    words = dict(WORD.findall(screen))
    assert len(words) == 24, screen
    return " ".join(words[str(i)] for i in range(1, 25))


def _init(home: Path, seen: list[bytes] | None = None) -> tuple[Run, str]:
    phrase: list[str] = []

    def type_back(screen: str) -> str:
        phrase.append(_shown_phrase(screen))
        return phrase[0].upper().replace(" ", "  ") + "\n"

    def look(pid: int) -> None:
        if seen is not None:
            seen.append(Path(f"/proc/{pid}/cmdline").read_bytes())
            seen.append(Path(f"/proc/{pid}/environ").read_bytes())

    run = run_on_terminal(
        ["mesh", "init"],
        _env(home),
        home.parent,
        [Step("Type the 24 words to confirm", type_back)],
        while_waiting=look,
    )
    return run, phrase[0]
