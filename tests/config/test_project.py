"""A workspace's ``.robota/config.yaml``: validation tables, and it is applied only when the
workspace is trusted (through the headless gate the front ends use)."""

from __future__ import annotations

from pathlib import Path

import pytest

from robota.core import ConfigError
from robota.core.config import (
    Config,
    Profile,
    apply_project,
    load_config,
    parse_project_config,
    resolve_profile,
)
from robota.host import WorkspaceRefused, headless_workspace

from ..support.trust import trust_workspace

AGENTS = {"codex": object(), "claude": object()}
FILE = Path("/w/.robota/config.yaml")


@pytest.mark.parametrize(
    ("data", "key", "found"),
    [
        ({"transports": {}}, "(top level)", "the key 'transports'"),
        ({"defaults": {"cwd": "/"}}, "defaults", "the key 'cwd'"),
        ({"defaults": {"agent": "gemini"}}, "defaults.agent", "'gemini'"),
        ({"defaults": {"permissionMode": "yolo"}}, "defaults.permissionMode", "'yolo'"),
        ({"agents": {"gemini": {"env": {}}}}, "agents", "the agent 'gemini'"),
        ({"agents": {"codex": {"command": "x"}}}, "agents.codex", "the key 'command'"),
        ({"agents": {"codex": {"env": ["A=1"]}}}, "agents.codex.env", "a list"),
        ({"agents": {"codex": {"env": {"1X": "a"}}}}, "agents.codex.env", "the name '1X'"),
        (
            {"agents": {"codex": {"env": {"OPENAI_API_KEY": "sk-1234"}}}},
            "agents.codex.env.OPENAI_API_KEY",
            "a secret-named variable",
        ),
        (
            {"agents": {"codex": {"env": {"ROBOTA_LARK_APP_ID": "cli_1"}}}},
            "agents.codex.env.ROBOTA_LARK_APP_ID",
            "the reserved name ROBOTA_LARK_APP_ID",
        ),
        (
            {"agents": {"codex": {"env": {"HOME_COPY": "${CHAT_APP_SECRET}"}}}},
            "agents.codex.env.HOME_COPY",
            "a ${NAME} reference",
        ),
        ({"agents": {"codex": {"env": {"DEBUG": True}}}}, "agents.codex.env.DEBUG", "true"),
    ],
)
def test_invalid_settings_name_file_key_found_and_expected(
    data: object, key: str, found: str
) -> None:
    with pytest.raises(ConfigError) as raised:
        parse_project_config(data, file=FILE, agents=AGENTS)
    error = raised.value
    assert (error.file, error.key) == (str(FILE), key), error
    assert found in error.found and error.expected, error
    assert "sk-1234" not in str(error)


def test_valid_settings_parse() -> None:
    project = parse_project_config(
        {
            "defaults": {"agent": "claude", "permissionMode": "acceptEdits"},
            "agents": {"codex": {"env": {"RUST_LOG": "info", "LEVEL": 3}}},
        },
        file=FILE,
        agents=AGENTS,
    )
    assert (project.agent, project.permission_mode) == ("claude", "acceptEdits")
    assert dict(project.env["codex"]) == {"RUST_LOG": "info", "LEVEL": "3"}
    assert parse_project_config(None, file=FILE, agents=AGENTS).env == {}


def profile_at(tmp_path: Path) -> tuple[Config, Profile, Path]:
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    (home / "config.yaml").write_text(
        "agents:\n"
        "  codex: {kind: app-server, command: codex, env: {RUST_LOG: warn}}\n"
        "  claude: {kind: acp, command: claude}\n"
        f"defaults: {{agent: codex, cwd: {tmp_path}}}\n"
    )
    workspace = tmp_path / "repo"
    (workspace / ".git").mkdir(parents=True)
    (workspace / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (workspace / ".robota").mkdir()
    (workspace / ".robota" / "config.yaml").write_text(
        "defaults: {agent: claude, permissionMode: bypassPermissions}\n"
        "agents: {codex: {env: {RUST_LOG: trace, EXTRA: '1'}}}\n"
    )
    environ = {"ROBOTA_HOME": str(home)}
    profile = resolve_profile(environ)
    return load_config(profile, environ=dict(environ)), profile, workspace


def test_the_project_is_applied_only_when_the_workspace_is_trusted(tmp_path: Path) -> None:
    config, profile, workspace = profile_at(tmp_path)
    with pytest.raises(WorkspaceRefused, match="robota trust --yes"):
        headless_workspace(config, profile, workspace, restricted=False, mode="print")
    ignored = headless_workspace(config, profile, workspace / "src", restricted=True, mode="print")
    assert ignored.restricted and ignored.config is config and ignored.hook(workspace)
    trust_workspace(profile.home, workspace)
    trusted = headless_workspace(config, profile, workspace, restricted=False, mode="print")
    assert not trusted.restricted and not trusted.hook(workspace)
    assert trusted.hook(tmp_path / "elsewhere")  # another directory: its own trust
    assert (trusted.config.defaults.agent, trusted.config.defaults.permission_mode) == (
        "claude",
        "bypassPermissions",
    )
    assert dict(trusted.config.agents["codex"].env) == {"RUST_LOG": "trace", "EXTRA": "1"}
    # Trusted but started --restricted: the project is ignored all the same.
    forced = headless_workspace(config, profile, workspace, restricted=True, mode="print")
    assert forced.config is config and forced.hook(workspace)
    assert apply_project(config, None) is config


def test_a_linked_project_file_is_refused_even_when_trusted(tmp_path: Path) -> None:
    config, profile, workspace = profile_at(tmp_path)
    target = workspace / ".robota" / "config.yaml"
    target.rename(tmp_path / "outside.yaml")
    target.symlink_to(tmp_path / "outside.yaml")
    trust_workspace(profile.home, workspace)
    with pytest.raises(ConfigError, match="a link"):
        headless_workspace(config, profile, workspace, restricted=False, mode="print")


def test_a_projects_mcp_servers_reach_its_agents_only_when_the_workspace_is_trusted(
    tmp_path: Path,
) -> None:
    config, profile, workspace = profile_at(tmp_path)
    project = workspace / ".robota" / "config.yaml"
    project.write_text(project.read_text() + "mcpServers: {docs: {command: docs-mcp}}\n")
    with pytest.raises(WorkspaceRefused, match="robota trust --yes"):
        headless_workspace(config, profile, workspace, restricted=False, mode="mcp serve")
    untrusted = headless_workspace(config, profile, workspace, restricted=True, mode="mcp serve")
    assert "docs" not in untrusted.config.mcp_servers
    trust_workspace(profile.home, workspace)
    trusted = headless_workspace(config, profile, workspace, restricted=False, mode="mcp serve")
    assert trusted.config.mcp_servers["docs"].command == "docs-mcp"
    forced = headless_workspace(config, profile, workspace, restricted=True, mode="mcp serve")
    assert "docs" not in forced.config.mcp_servers
