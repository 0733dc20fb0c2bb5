"""Real agents for tests: where they are installed and how each runs offline, isolated.

``tools/agents.py`` installs pinned agents into a cache outside the checkout (the test command
runs it).
``isolated(name, root, model_url)`` gives the command and environment that run one of them with a
private HOME and config pointing at a model server on 127.0.0.1, with every update check,
telemetry and plugin sync switched off, so the only traffic is to loopback.
"""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

COMMON_ENV = {
    "NO_BROWSER": "1",
    "BROWSER": "/bin/true",
    "DO_NOT_TRACK": "1",
    "NO_UPDATE_NOTIFIER": "1",
    "CI": "1",
}

KINDS = {
    "codex": "app-server",
    "codex-acp": "acp",
    "gemini": "acp",
    "qwen": "acp",
    "opencode": "acp",
    "claude-agent-acp": "acp",
}


@functools.cache
def _ask_agents_py(flag: str) -> str:
    """What ``tools/agents.py FLAG`` prints, asked once per test process: the installed agents
    do not change during a run (./dev test installs them before pytest starts), and a fresh
    interpreter for each agent a test sets up cost a third of a second on a loaded machine."""
    out = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "agents.py"), flag],
        check=True,
        capture_output=True,
        text=True,
        timeout=60,
    )
    return out.stdout


def prefix() -> Path:
    """Where tools/agents.py installs the agents (outside the checkout)."""
    return Path(_ask_agents_py("--print-prefix").strip())


def installed() -> dict[str, str]:
    """The installed agents' commands by name (a new dict each call: the caller may change it)."""
    paths: dict[str, str] = json.loads(_ask_agents_py("--print-paths"))
    return paths


@dataclass(frozen=True)
class AgentSetup:
    name: str
    kind: str
    command: str
    args: tuple[str, ...]
    env: dict[str, str]
    """The complete environment (inherit nothing else)."""
    cwd: Path


def codex_model_catalog(codex: str, scratch: Path) -> dict[str, object]:
    """A Codex model catalog naming ``fake-model``, built offline from the bundled one of the
    ``codex`` binary (codex-acp cannot print its own; this one suits both).

    Without it Codex warns "Model metadata for `fake-model` not found" on every turn (codex-acp
    forwards that as message text) and offers no ``apply_patch`` tool (AGENTS.md 4.1).
    """
    scratch.mkdir(parents=True, exist_ok=True)
    out = subprocess.run(
        [codex, "debug", "models", "--bundled"],
        check=True,
        capture_output=True,
        text=True,
        timeout=60,
        env={
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(scratch),
            "CODEX_HOME": str(scratch),
        },
    )
    models = json.loads(out.stdout)["models"]
    entry = next((m for m in models if m.get("slug") == "gpt-5.5"), models[0])
    entry.update(
        slug="fake-model",
        display_name="Fake model",
        description="The test suite's fake model server",
        upgrade=None,
        availability_nux=None,
    )
    # The older Codex core inside codex-acp requires these two keys.
    entry.setdefault("supports_reasoning_summaries", False)
    entry.setdefault("supports_parallel_tool_calls", False)
    return {"models": [entry]}


def isolated(
    name: str,
    root: Path,
    model_url: str = "http://127.0.0.1:9",
    *,
    ask: bool = False,
    model_catalog: bool = False,
) -> AgentSetup:
    """Command and environment to run agent ``name`` under ``root``, offline.

    ``model_url`` is the fake model server's base (``http://127.0.0.1:PORT``); the default is the
    discard port, for tests that never reach a model (handshakes).

    ``ask``: Codex and codex-acp get ``approval_policy = "untrusted"`` (approval requests for
    non-trivial commands and every ``apply_patch``) instead of ``"never"``; the other agents ask by
    default in this configuration (qwen ``tools.approvalMode: "default"``, opencode
    ``permission: ask``, gemini and Claude in their default mode). ``model_catalog``: Codex and
    codex-acp get a model catalog that knows ``fake-model`` (see ``codex_model_catalog``).
    """
    paths = installed()
    if name not in paths:
        raise LookupError(f"agent {name} is not installed; run: python3 tools/agents.py {name}")
    home = root / name / "home"
    cwd = root / name / "work"
    for directory in (home, cwd):
        directory.mkdir(parents=True, exist_ok=True)
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "XDG_STATE_HOME": str(home / ".local" / "state"),
        **COMMON_ENV,
    }
    args: tuple[str, ...] = ()
    if name in ("codex", "codex-acp"):
        codex_home = home / ".codex"
        codex_home.mkdir(parents=True, exist_ok=True)
        policy = "untrusted" if ask else "never"
        catalog = ""
        if model_catalog:
            catalog_path = root / name / "fake-model-catalog.json"
            catalog_path.write_text(
                json.dumps(codex_model_catalog(paths["codex"], root / name / "catalog-scratch"))
            )
            catalog = f"model_catalog_json = {json.dumps(str(catalog_path))}\n"
        (codex_home / "config.toml").write_text(
            f'model = "fake-model"\nmodel_provider = "fake"\napproval_policy = "{policy}"\n'
            'sandbox_mode = "danger-full-access"\ncheck_for_update_on_startup = false\n'
            f"{catalog}\n"
            '[model_providers.fake]\nname = "Fake LLM"\n'
            f'base_url = "{model_url}/v1"\nenv_key = "FAKE_LLM_API_KEY"\n'
            'wire_api = "responses"\nrequest_max_retries = 0\nstream_max_retries = 0\n\n'
            "[features]\nplugins = false\nremote_plugin = false\napps = false\n"
            "plugin_sharing = false\n"
        )
        env.update({"CODEX_HOME": str(codex_home), "FAKE_LLM_API_KEY": "fake-key"})
        if name == "codex":
            args = ("app-server", "--listen", "stdio://")
    elif name in ("gemini", "qwen"):
        settings_dir = home / (".gemini" if name == "gemini" else ".qwen")
        settings_dir.mkdir(parents=True, exist_ok=True)
        auth = "gemini-api-key" if name == "gemini" else "openai"
        model = "gemini-2.5-pro" if name == "gemini" else "fake-model"
        settings = {
            "security": {"auth": {"selectedType": auth}},
            "general": {"disableAutoUpdate": True, "disableUpdateNag": True},
            "privacy": {"usageStatisticsEnabled": False},
            "telemetry": {"enabled": False},
            "model": {"name": model},
        }
        if name == "qwen":
            settings["tools"] = {"approvalMode": "default"}
        (settings_dir / "settings.json").write_text(json.dumps(settings))
        args = ("--acp",)
        if name == "gemini":
            env.update(
                {
                    "GEMINI_API_KEY": "fake-key",
                    "GOOGLE_GEMINI_BASE_URL": model_url,
                    "GEMINI_CLI_NO_RELAUNCH": "true",
                }
            )
        else:
            env.update(
                {
                    "OPENAI_API_KEY": "fake-key",
                    "OPENAI_BASE_URL": f"{model_url}/v1",
                    "OPENAI_MODEL": "fake-model",
                }
            )
            env["PATH"] = f"{paths['node22-bin']}{os.pathsep}{env['PATH']}"
    elif name == "opencode":
        config_dir = home / ".config" / "opencode"
        config_dir.mkdir(parents=True, exist_ok=True)
        (config_dir / "opencode.json").write_text(
            json.dumps(
                {
                    "$schema": "https://opencode.ai/config.json",
                    "autoupdate": False,
                    "share": "disabled",
                    "model": "fake/fake-model",
                    "small_model": "fake/fake-model",
                    "provider": {
                        "fake": {
                            "npm": "@ai-sdk/openai-compatible",
                            "name": "Fake LLM",
                            "options": {"baseURL": f"{model_url}/v1", "apiKey": "fake-key"},
                            "models": {
                                "fake-model": {
                                    "name": "Fake model",
                                    "tool_call": True,
                                    "limit": {"context": 128000, "output": 8192},
                                }
                            },
                        }
                    },
                    "permission": {"bash": "ask", "edit": "ask", "webfetch": "deny"},
                }
            )
        )
        env.update(
            {
                f"OPENCODE_DISABLE_{k}": "1"
                for k in ("AUTOUPDATE", "MODELS_FETCH", "LSP_DOWNLOAD", "DEFAULT_PLUGINS", "SHARE")
            }
        )
        args = ("acp",)
    elif name == "claude-agent-acp":
        env.update(
            {
                "ANTHROPIC_BASE_URL": model_url,
                "ANTHROPIC_API_KEY": "fake-key",
                "ANTHROPIC_MODEL": "claude-sonnet-4-5",
                "ANTHROPIC_SMALL_FAST_MODEL": "claude-haiku-4-5",
                "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
                "DISABLE_TELEMETRY": "1",
                "DISABLE_AUTOUPDATER": "1",
                "DISABLE_ERROR_REPORTING": "1",
                "DISABLE_BUG_COMMAND": "1",
                "IS_SANDBOX": "1",
                "CLAUDE_CONFIG_DIR": str(home / ".claude"),
            }
        )
    return AgentSetup(name, KINDS[name], paths[name], args, env, cwd)
