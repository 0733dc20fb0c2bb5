"""Install the real coding agents the test suite drives, pinned, into a cache outside the repo.

    python3 tools/agents.py [--prefix DIR] [NAME ...]      # all agents when no NAME is given
    python3 tools/agents.py --print-paths                   # JSON: name -> executable
    python3 tools/agents.py --print-prefix                  # where they are installed

The cache is ``$ROBOTA_TEST_AGENTS``, else ``$XDG_CACHE_HOME/robota/test-agents``, else
``~/.cache/robota/test-agents``: outside the checkout, so every clone on a machine (and every CI
run) reuses one install of about 1.7 GB. Each agent gets its own npm prefix so their
dependencies never clash. An agent whose installed
version already matches its pin is left alone, so the second run costs a few stat calls. Only the
npm registry is contacted. Uses nothing but the standard library: it runs before any venv exists.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path


def default_prefix() -> Path:
    explicit = os.environ.get("ROBOTA_TEST_AGENTS")
    if explicit:
        return Path(explicit).expanduser().resolve()
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache).expanduser().resolve() / "robota" / "test-agents"


@dataclass(frozen=True)
class Agent:
    name: str
    package: str
    version: str
    executable: str
    """Path of the real executable inside the prefix (the native binary where there is one:
    npm launchers add a process layer and some do not forward signals)."""
    needs_node22: bool = False


AGENTS = [
    Agent(
        "codex",
        "@openai/codex",
        "0.171.0",
        "node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex",
    ),
    Agent(
        "codex-acp",
        "@zed-industries/codex-acp",
        "0.16.0",
        "node_modules/@zed-industries/codex-acp-linux-x64/bin/codex-acp",
    ),
    Agent("gemini", "@google/gemini-cli", "0.61.0", "node_modules/.bin/gemini"),
    Agent("qwen", "@qwen-code/qwen-code", "0.24.4", "node_modules/.bin/qwen", needs_node22=True),
    Agent("opencode", "opencode-ai", "1.18.33", "node_modules/opencode-ai/bin/opencode.exe"),
    Agent(
        "claude-agent-acp",
        "@agentclientprotocol/claude-agent-acp",
        "0.49.0",
        "node_modules/.bin/claude-agent-acp",
    ),
]
NODE22 = Agent("node22", "node", "22", "node_modules/node/bin/node")


def installed_version(prefix: Path, agent: Agent) -> str | None:
    manifest = prefix / agent.name / "node_modules" / agent.package / "package.json"
    try:
        return str(json.loads(manifest.read_text())["version"])
    except (OSError, ValueError, KeyError):
        return None


def npm_install(prefix: Path, agent: Agent, env: dict[str, str]) -> None:
    target = prefix / agent.name
    target.mkdir(parents=True, exist_ok=True)
    command = [
        "npm",
        "install",
        "--no-audit",
        "--no-fund",
        "--loglevel=error",
        "--prefix",
        str(target),
        f"{agent.package}@{agent.version}",
    ]
    print(f"agents: installing {agent.package}@{agent.version}", file=sys.stderr)
    subprocess.run(command, check=True, env=env, timeout=900, stdout=sys.stderr)


def node22_bin(prefix: Path) -> Path:
    return prefix / NODE22.name / "node_modules" / "node" / "bin"


def install(prefix: Path, names: list[str]) -> None:
    if shutil.which("npm") is None:
        raise SystemExit("agents: npm is not on PATH; install Node.js and npm first")
    wanted = [a for a in AGENTS if not names or a.name in names]
    unknown = set(names) - {a.name for a in AGENTS}
    if unknown:
        raise SystemExit(f"agents: unknown agent(s) {sorted(unknown)}")
    env = dict(os.environ)
    for agent in wanted:
        if installed_version(prefix, agent) == agent.version:
            continue
        agent_env = env
        if agent.needs_node22:
            # qwen-code 0.24 declares node >= 22; npm under Node 20 silently picks an old
            # release, so npm itself must run under Node 22.
            if not (node22_bin(prefix) / "node").exists():
                npm_install(prefix, NODE22, env)
            agent_env = {**env, "PATH": f"{node22_bin(prefix)}{os.pathsep}{env['PATH']}"}
        npm_install(prefix, agent, agent_env)
        got = installed_version(prefix, agent)
        if got != agent.version:
            raise SystemExit(f"agents: {agent.package} installed as {got}, want {agent.version}")


def paths(prefix: Path) -> dict[str, str]:
    out = {}
    for agent in AGENTS:
        executable = prefix / agent.name / agent.executable
        if executable.exists():
            out[agent.name] = str(executable)
    if (node22_bin(prefix) / "node").exists():
        out["node22-bin"] = str(node22_bin(prefix))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help="agents to install (default: all)")
    parser.add_argument("--prefix", type=Path, default=None)
    parser.add_argument("--print-paths", action="store_true")
    parser.add_argument("--print-prefix", action="store_true")
    args = parser.parse_args()
    prefix = args.prefix.resolve() if args.prefix is not None else default_prefix()
    if args.print_prefix:
        print(prefix)
        return
    if args.print_paths:
        print(json.dumps(paths(prefix), indent=2))
        return
    install(prefix, args.names)


if __name__ == "__main__":
    main()
