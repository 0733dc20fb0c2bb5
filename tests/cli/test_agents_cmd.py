"""``robota agents list`` and ``robota agents check`` on real agents."""

from __future__ import annotations

import json

from ._robota import Robota
from .test_doctor import processes_with_home_under, write_real_agents_config


def test_list_shows_protocol_path_and_version_without_starting_anything(robota: Robota) -> None:
    write_real_agents_config(robota, ["codex", "claude-agent-acp"])
    completed = robota.run("agents", "list", "--json")
    assert completed.returncode == 0, completed.stderr
    rows = {r["name"]: r for r in json.loads(completed.stdout)["agents"]}
    assert rows["codex"]["protocol"] == "app-server"
    assert rows["codex"]["default"] is True
    assert rows["claude"]["protocol"] == "acp"
    assert all(r["installed"] for r in rows.values())
    assert processes_with_home_under(robota.root / "agents") == []


def test_list_names_the_install_command_of_a_missing_agent(robota: Robota) -> None:
    assert robota.run("init").returncode == 0
    rows = {
        r["name"]: r for r in json.loads(robota.run("agents", "list", "--json").stdout)["agents"]
    }
    assert rows["gemini"]["installed"] is False
    assert rows["gemini"]["installCommand"] == "npm install -g @google/gemini-cli"
    plain = robota.run("agents", "list").stdout
    assert "not found: npm install -g @google/gemini-cli" in plain


def test_check_opens_and_closes_a_session_on_each_protocol(robota: Robota) -> None:
    write_real_agents_config(robota, ["codex", "claude-agent-acp"])
    for name, version in (("codex", "0.171.0"), ("claude", "0.49.0")):
        completed = robota.run("agents", "check", name, "--json")
        assert completed.returncode == 0, completed.stdout + completed.stderr
        report = json.loads(completed.stdout)
        assert (report["ok"], report["version"], report["detail"]) == (True, version, "session ok")
        assert set(report["timings"]) == {"initialize", "session", "stop"}
        assert report["capabilities"]["steer"] is (name == "codex")
    assert processes_with_home_under(robota.root / "agents") == []


def test_check_of_an_unknown_agent_is_a_usage_error(robota: Robota) -> None:
    assert robota.run("init").returncode == 0
    completed = robota.run("agents", "check", "nobody")
    assert completed.returncode == 2
    assert "no agent 'nobody'" in completed.stderr


def test_check_of_a_missing_agent_fails_with_exit_1(robota: Robota) -> None:
    assert robota.run("init").returncode == 0
    completed = robota.run("agents", "check", "gemini")
    assert completed.returncode == 1
    assert "FAILED" in completed.stdout and "cannot start 'gemini'" in completed.stdout
