"""``robota agents list`` and ``robota agents check`` on real agents."""

from __future__ import annotations

import json
import re
import signal
import sys
import time
from pathlib import Path

from ..support.agent_actor import FAULT_AGENT, alive
from ..support.processes import processes_with_home_under
from ..support.real_agents import write_real_agents_config
from ..support.robota import Robota
from ._dying_agent import DOTENV_SECRET, DYING_WORDS, SHAPED_TOKEN, write_dying_agent_config


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
    completed = robota.invoke("agents", "check", "nobody")
    assert completed.returncode == 2
    assert "no agent 'nobody'" in completed.stderr


def test_check_of_a_missing_agent_fails_with_exit_1(robota: Robota) -> None:
    assert robota.run("init").returncode == 0
    completed = robota.run("agents", "check", "gemini")
    assert completed.returncode == 1
    assert "FAILED" in completed.stdout and "cannot start 'gemini'" in completed.stdout


def test_a_terminated_robota_leaves_no_agent_process_behind(robota: Robota, tmp_path: Path) -> None:
    """SIGTERM while an agent that ignores stdin EOF, with a child of its own, is starting."""
    pid_file = tmp_path / "pids"
    config = {
        "agents": {
            "stubborn": {
                "kind": "acp",
                "command": sys.executable,
                "args": [str(FAULT_AGENT)],
                "env": {
                    "FAULT_AGENT_SILENT": "1",
                    "FAULT_AGENT_CHILD": "1",
                    "FAULT_AGENT_IGNORE_EOF": "1",
                    "FAULT_AGENT_PIDS": str(pid_file),
                },
            }
        },
        "defaults": {"agent": "stubborn", "cwd": str(robota.root)},
    }
    robota.home.mkdir(mode=0o700, exist_ok=True)
    (robota.home / "config.yaml").write_text(json.dumps(config))
    process = robota.start("agents", "check", "stubborn", "--timeout", "60")
    try:
        deadline = time.monotonic() + 30
        while len(pid_file.read_text().split() if pid_file.exists() else []) < 2:
            if time.monotonic() > deadline or process.poll() is not None:
                process.kill()
                out, err = process.communicate()
                raise AssertionError(f"the agent never started: {out}{err}")
            time.sleep(0.05)
        process.send_signal(signal.SIGTERM)
        process.communicate(timeout=30)
        assert process.returncode == 128 + signal.SIGTERM
    finally:
        if process.poll() is None:
            process.kill()
        process.communicate()
    agent, helper = (int(pid) for pid in pid_file.read_text().split())
    assert not alive(agent)
    deadline = time.monotonic() + 5
    while alive(helper):
        assert time.monotonic() < deadline, "the agent's own child outlived robota"
        time.sleep(0.05)


def test_check_of_an_agent_that_dies_at_start_shows_its_last_words(robota: Robota) -> None:
    write_dying_agent_config(robota)
    as_json = robota.run("agents", "check", "dying", "--json")
    assert as_json.returncode == 1, as_json.stderr
    report = json.loads(as_json.stdout)
    assert (report["ok"], report["detail"]) == (False, "the agent exited early (exit code 4)")
    assert report["stderr_tail"] == DYING_WORDS
    text = robota.run("agents", "check", "dying")
    assert text.returncode == 1
    assert "FAILED: the agent exited early (exit code 4)" in text.stdout
    assert "  its stderr ended with:\n" + "".join(f"    {w}\n" for w in DYING_WORDS) in text.stdout
    for run in (as_json, text):
        for leak in (DOTENV_SECRET, SHAPED_TOKEN, "\x1b"):
            assert leak not in run.stdout + run.stderr


def test_check_of_real_codex_refusing_its_config_shows_why(robota: Robota) -> None:
    write_real_agents_config(robota, ["codex"])
    codex_config = robota.root / "agents" / "codex" / "home" / ".codex" / "config.toml"
    text = codex_config.read_text()
    codex_config.write_text(
        re.sub(r'(?m)^approval_policy = ".*"$', 'approval_policy = "untrusted"', text)
    )
    completed = robota.run("agents", "check", "codex", "--json")
    assert completed.returncode == 1, completed.stderr
    report = json.loads(completed.stdout)
    assert report["detail"] == "the agent exited early (exit code 1)"
    assert (
        'Error: approval_policy = "untrusted" is no longer supported; remove this setting'
        in report["stderr_tail"]
    )
    assert processes_with_home_under(robota.root / "agents") == []
