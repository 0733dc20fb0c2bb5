"""Agent detection against fake npm installations built in tmp_path.

Every fake agent executable records that it was run, so the tests can tell "read the version
from package.json" from "ran the agent".
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from robota.core.config import AgentStatus, detect_agents
from robota.runtimes import KNOWN_AGENTS


def _executable(path: Path, body: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)
    return path


def _runs_marker(marker: Path) -> str:
    return f'echo "$@" >> "{marker}"\n'


def _package(root: Path, name: str, version: str, entry: str, marker: Path) -> Path:
    """``root/<name>/package.json`` and an entry script that records each run."""
    package = root / name
    package.mkdir(parents=True)
    (package / "package.json").write_text(json.dumps({"name": name, "version": version}))
    return _executable(package / entry, _runs_marker(marker) + "exec sleep 30\n")


def _symlink(link: Path, target: Path) -> None:
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(os.path.relpath(target, link.parent))


def _by_command(statuses: tuple[AgentStatus, ...]) -> dict[str, AgentStatus]:
    return {status.agent.command: status for status in statuses}


def test_versions_come_from_package_json_without_running_the_agents(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    # npm's global prefix: bin/codex -> ../lib/node_modules/@openai/codex/bin/codex.js
    prefix = tmp_path / "prefix"
    entry = _package(
        prefix / "lib" / "node_modules", "@openai/codex", "0.46.0", "bin/codex.js", marker
    )
    _symlink(prefix / "bin" / "codex", entry)
    # A project's node_modules/.bin: .bin/gemini -> ../@google/gemini-cli/dist/index.js
    modules = tmp_path / "project" / "node_modules"
    entry = _package(modules, "@google/gemini-cli", "0.9.0", "dist/index.js", marker)
    _symlink(modules / ".bin" / "gemini", entry)
    # A launcher script (pnpm-style) naming a package kept in a store elsewhere.
    store = tmp_path / "store" / "node_modules"
    _package(store, "@qwen-code/qwen-code", "0.1.2", "cli.js", marker)
    _executable(
        tmp_path / "shims" / "qwen",
        'basedir=$(dirname "$0")\n'
        'exec node "$basedir/../store/node_modules/@qwen-code/qwen-code/cli.js" "$@"\n',
    )
    path = os.pathsep.join(
        str(p) for p in (prefix / "bin", modules / ".bin", tmp_path / "shims", tmp_path / "empty")
    )

    found = _by_command(detect_agents(path=path, timeout=0.5))

    assert (found["codex"].installed, found["codex"].version) == (True, "0.46.0")
    assert found["codex"].path == prefix / "bin" / "codex"
    assert found["gemini"].version == "0.9.0"
    assert found["qwen"].version == "0.1.2"
    for missing in ("codex-acp", "opencode", "claude-agent-acp"):
        assert not found[missing].installed
        assert found[missing].version is None
    assert not marker.exists(), "an agent was run to find its version"


def test_falls_back_to_version_flag_with_stdin_closed(tmp_path: Path) -> None:
    log = tmp_path / "ran"
    _executable(
        tmp_path / "bin" / "opencode",
        # Reading stdin would block forever on a terminal; /dev/null gives EOF at once.
        _runs_marker(log) + 'read -r line; echo "read:$?" >> "' + str(log) + '"\n'
        'echo "opencode version 0.15.3"\n',
    )
    found = _by_command(detect_agents(path=str(tmp_path / "bin"), timeout=5))
    assert found["opencode"].version == "0.15.3"
    assert log.read_text() == "--version\nread:1\n"


def test_a_package_json_of_another_package_is_not_trusted(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    package = tmp_path / "lib" / "node_modules" / "not-opencode"
    package.mkdir(parents=True)
    (package / "package.json").write_text('{"name": "not-opencode", "version": "9.9.9"}')
    entry = _executable(package / "oc.js", _runs_marker(marker) + "echo 1.2.3\n")
    _symlink(tmp_path / "bin" / "opencode", entry)
    found = _by_command(detect_agents(path=str(tmp_path / "bin"), timeout=5))
    assert found["opencode"].version == "1.2.3"
    assert marker.read_text() == "--version\n"


def test_a_hanging_agent_is_reported_installed_without_a_version(tmp_path: Path) -> None:
    _executable(tmp_path / "bin" / "claude-agent-acp", "exec sleep 30\n")
    _executable(tmp_path / "bin" / "codex-acp", "exit 3\n")
    started = time.monotonic()
    found = _by_command(detect_agents(path=str(tmp_path / "bin"), timeout=0.5))
    assert time.monotonic() - started < 5
    for command in ("claude-agent-acp", "codex-acp"):
        assert found[command].installed
        assert found[command].version is None


def test_install_commands_name_the_npm_packages() -> None:
    assert {agent.command: agent.install_command for agent in KNOWN_AGENTS} == {
        "codex": "npm install -g @openai/codex",
        "codex-acp": "npm install -g @zed-industries/codex-acp",
        "gemini": "npm install -g @google/gemini-cli",
        "qwen": "npm install -g @qwen-code/qwen-code",
        "opencode": "npm install -g opencode-ai",
        "claude-agent-acp": "npm install -g @agentclientprotocol/claude-agent-acp",
    }


def test_detects_the_real_npm_installs_with_their_pinned_versions() -> None:
    """The agents tools/agents.py installed from npm, found the way a user's PATH finds them."""
    from ..support.agents import prefix
    from ..support.real_agents import PINNED

    bins = sorted(prefix().glob("*/node_modules/.bin"))
    statuses = {s.agent.command: s for s in detect_agents(path=os.pathsep.join(map(str, bins)))}
    assert {command: s.version for command, s in statuses.items()} == {
        "codex": PINNED["codex"],
        "codex-acp": PINNED["codex-acp"],
        "gemini": PINNED["gemini"],
        "qwen": PINNED["qwen"],
        "opencode": PINNED["opencode"],
        "claude-agent-acp": PINNED["claude-agent-acp"],
    }
