"""Which coding agents are installed, and at which version, without starting them.

Several agents start a server on stdin as soon as they run, so detection reads instead of
running: it follows the executable on PATH (a symlink, or a launcher script as npm writes on
some platforms, or pnpm) to the npm package it belongs to and reads ``version`` from that
package's ``package.json``. Only when no package can be found does it run ``<command>
--version``, with stdin closed and a timeout, so a misbehaving binary cannot hang ``robota init``.

Which agents there are to find is the runtime plugins' knowledge, not core's: each declares the
agents its protocol drives (``KnowsAgents.known_agents``), and ``known_agents`` gathers them
from the installed plugins, in the order the plugins are found.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, runtime_checkable

from .._plugins import runtime_plugins
from ._kinds import as_the_template_orders

__all__ = [
    "AgentStatus",
    "KnowsAgents",
    "KnownAgent",
    "detect_agent",
    "detect_agents",
    "known_agents",
]

_VERSION = re.compile(r"\d+\.\d+(?:\.\d+)?(?:[-+][0-9A-Za-z.-]+)?")
_LAUNCHER_BYTES = 64 * 1024


@dataclass(frozen=True, slots=True)
class KnownAgent:
    """An agent robota knows how to install: its executable and its npm package."""

    command: str
    package: str

    @property
    def install_command(self) -> str:
        return f"npm install -g {self.package}"


@runtime_checkable
class KnowsAgents(Protocol):
    """What a runtime plugin (``robota.core.RuntimePlugin``) declares, on its entry point object,
    of the agents its protocol drives: the ones ``robota init`` looks for and offers to install.
    A plugin without it is simply not one; its agents are configured by hand."""

    @property
    def known_agents(self) -> tuple[KnownAgent, ...]: ...


def known_agents() -> tuple[KnownAgent, ...]:
    """Every installed runtime plugin's known agents, once each, the plugins in the order of
    the packaged config.yaml (``as_the_template_orders``) (loads the plugins: call it when
    detecting, not at a start)."""
    plugins = runtime_plugins()
    found: dict[KnownAgent, None] = {}
    for kind in as_the_template_orders(tuple(plugins)):
        plugin = plugins[kind]
        if isinstance(plugin, KnowsAgents):
            found.update(dict.fromkeys(plugin.known_agents))
    return tuple(found)


@dataclass(frozen=True, slots=True)
class AgentStatus:
    agent: KnownAgent
    path: Path | None
    """The executable found on PATH; ``None`` when the agent is missing."""
    version: str | None
    """``None`` when missing, or when installed but no version could be found."""

    @property
    def installed(self) -> bool:
        return self.path is not None


def _package_version(package_json: Path, package: str) -> str | None:
    try:
        data = json.loads(package_json.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("name") != package:
        return None
    version = data.get("version")
    return version if isinstance(version, str) and version else None


def _candidates(executable: Path, package: str) -> Iterator[Path]:
    """Places the package.json of ``package`` may be, most specific first."""
    resolved = executable.resolve()
    # A symlink into the package (npm on Unix): walk up from the target.
    for parent in resolved.parents:
        yield parent / "package.json"
        if parent.name == "node_modules":
            break
    # The usual layouts next to a bin directory: npm's global prefix, node_modules/.bin, and
    # npm's Windows layout.
    for base in dict.fromkeys((executable.parent, resolved.parent)):
        yield base.parent / "lib" / "node_modules" / package / "package.json"
        yield base.parent / package / "package.json"
        yield base / "node_modules" / package / "package.json"
    # A launcher script that names the package's path (npm cmd-shims, pnpm, volta).
    yield from _launcher_paths(executable, package)


def _launcher_paths(executable: Path, package: str) -> Iterator[Path]:
    try:
        with executable.open("rb") as stream:
            head = stream.read(_LAUNCHER_BYTES)
    except OSError:
        return
    if b"\0" in head:
        return  # a native binary, not a launcher
    text = head.decode("utf-8", "replace").replace("\\", "/")
    base = str(executable.parent).replace("\\", "/")
    for variable in ("$basedir", "${basedir}", "%~dp0", "%dp0%", "$PSScriptRoot"):
        text = text.replace(variable, base)
    needle = f"node_modules/{package}/"
    for match in re.finditer(re.escape(needle), text):
        start = match.start()
        while start > 0 and text[start - 1] not in "\"' \t\n=(:;`":
            start -= 1
        root = Path(text[start : match.end()])
        yield (root if root.is_absolute() else executable.parent / root) / "package.json"


def _version_from_package(executable: Path, package: str) -> str | None:
    for candidate in _candidates(executable, package):
        version = _package_version(candidate, package)
        if version is not None:
            return version
    return None


def _version_from_running(executable: Path, timeout: float) -> str | None:
    try:
        completed = subprocess.run(
            [str(executable), "--version"],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=timeout,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    output = completed.stdout.decode("utf-8", "replace") or completed.stderr.decode(
        "utf-8", "replace"
    )
    match = _VERSION.search(output)
    return match.group() if match else None


def detect_agent(
    agent: KnownAgent, *, path: str | None = None, timeout: float = 5.0
) -> AgentStatus:
    """Find ``agent`` on ``path`` (default: ``$PATH``) and its version."""
    found = shutil.which(agent.command, path=path)
    if found is None:
        return AgentStatus(agent, None, None)
    executable = Path(found)
    if not executable.is_absolute():
        executable = Path.cwd() / executable
    version = _version_from_package(executable, agent.package)
    if version is None:
        version = _version_from_running(executable, timeout)
    return AgentStatus(agent, executable, version)


def detect_agents(
    agents: Sequence[KnownAgent] | None = None,
    *,
    path: str | None = None,
    timeout: float = 5.0,
) -> tuple[AgentStatus, ...]:
    """Detect ``agents`` (default: ``known_agents()``) concurrently: the slow ``--version``
    fallbacks overlap."""
    if agents is None:
        agents = known_agents()
    search = os.environ.get("PATH", os.defpath) if path is None else path
    with ThreadPoolExecutor(max_workers=max(1, len(agents))) as pool:
        return tuple(pool.map(lambda a: detect_agent(a, path=search, timeout=timeout), agents))
