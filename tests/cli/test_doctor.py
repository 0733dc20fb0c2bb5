"""``robota doctor`` against real agents, real store files and broken profiles."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import time
from pathlib import Path
from typing import Any

from ..support.agents import isolated
from ..support.processes import processes_with_home_under
from ..support.real_agents import PINNED, TEMPLATE_NAMES, write_real_agents_config
from ..support.robota import Robota


def doctor_json(robota: Robota, *args: str) -> tuple[int, dict[str, Any]]:
    completed = robota.run("doctor", "--json", *args)
    assert completed.stdout, completed.stderr
    return completed.returncode, json.loads(completed.stdout)


def checks_by_name(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {c["name"]: c for c in report["checks"]}


def test_doctor_probes_every_real_agent_and_leaves_none_running(robota: Robota) -> None:
    write_real_agents_config(robota, sorted(PINNED))
    code, report = doctor_json(robota)
    checks = checks_by_name(report)
    assert code == 0, report
    for name, version in PINNED.items():
        check = checks[f"agent {TEMPLATE_NAMES.get(name, name)}"]
        assert check["status"] == "ok", check
        assert version in check["detail"]
    assert checks["store"]["status"] == "ok"
    assert not (robota.home / "data" / "robota.sqlite").exists(), "doctor must not create it"
    assert processes_with_home_under(robota.root / "agents") == []


def test_the_leftover_check_sees_a_running_agent(tmp_path: Path) -> None:
    setup = isolated("claude-agent-acp", tmp_path / "agents")
    read_end, write_end = os.pipe()  # stdin stays open: the agent waits for requests
    try:
        with subprocess.Popen(
            [setup.command, *setup.args],
            env=setup.env,
            stdin=read_end,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        ) as process:
            try:
                # Just after exec the launcher may still be replacing itself (env, then
                # node) and /proc shows an empty environment for an instant.
                deadline = time.monotonic() + 5
                while process.pid not in processes_with_home_under(tmp_path / "agents"):
                    assert time.monotonic() < deadline, "the running agent was not seen"
                    time.sleep(0.01)
            finally:
                process.kill()
    finally:
        os.close(read_end)
        os.close(write_end)


def test_doctor_names_a_missing_agent_and_the_command_that_installs_it(robota: Robota) -> None:
    assert robota.run("init").returncode == 0
    robota.home.chmod(0o700)
    code, report = doctor_json(robota, "--agent", "gemini")
    gemini = checks_by_name(report)["agent gemini"]
    assert code == 1
    assert gemini["status"] == "fail"
    assert gemini["fix"] == "install it: npm install -g @google/gemini-cli"
    assert [c["name"] for c in report["checks"] if c["name"].startswith("agent")] == [
        "agent gemini"
    ]


def test_doctor_reports_a_broken_config_with_file_and_key(robota: Robota) -> None:
    assert robota.run("init").returncode == 0
    config = robota.home / "config.yaml"
    config.write_text(config.read_text().replace("agent: codex", "agent: nobody"))
    completed = robota.run("doctor")
    assert completed.returncode == 1
    assert "FAIL  config" in completed.stdout
    assert str(config) in completed.stdout and "defaults.agent" in completed.stdout


def test_doctor_warns_about_a_profile_others_can_read(robota: Robota) -> None:
    assert robota.run("init").returncode == 0
    robota.home.chmod(0o755)
    (robota.home / ".env").chmod(0o644)
    _, report = doctor_json(robota, "--agent", "codex")
    checks = checks_by_name(report)
    assert checks["profile"]["status"] == "warn"
    assert checks["profile"]["fix"] == f"chmod 700 {robota.home}"
    assert checks[".env"]["fix"] == f"chmod 600 {robota.home / '.env'}"


def test_doctor_refuses_a_store_from_a_newer_robota(robota: Robota) -> None:
    assert robota.run("init").returncode == 0
    store = robota.home / "data" / "robota.sqlite"
    with sqlite3.connect(store) as db:
        db.execute("CREATE TABLE schema_versions (version INTEGER PRIMARY KEY, name TEXT)")
        db.execute("INSERT INTO schema_versions VALUES (99, 'from the future')")
    _, report = doctor_json(robota, "--agent", "codex")
    store_check = checks_by_name(report)["store"]
    assert store_check["status"] == "fail"
    assert "v99" in store_check["detail"]


def test_doctor_rejects_an_unknown_agent_name(robota: Robota) -> None:
    assert robota.run("init").returncode == 0
    completed = robota.invoke("doctor", "--agent", "nope")
    assert completed.returncode == 2
    assert "--agent nope: not configured" in completed.stderr


def test_doctor_without_a_profile_says_to_run_init(robota: Robota) -> None:
    completed = robota.run("doctor")
    assert completed.returncode == 1
    assert "run: robota init" in completed.stdout


def test_doctor_shows_the_last_words_of_an_agent_that_fails(robota: Robota) -> None:
    from ._dying_agent import DOTENV_SECRET, DYING_WORDS, SHAPED_TOKEN, write_dying_agent_config

    write_dying_agent_config(robota)
    code, report = doctor_json(robota)
    dying = checks_by_name(report)["agent dying"]
    assert code == 1
    assert (dying["status"], dying["detail"]) == ("fail", "the agent exited early (exit code 4)")
    assert dying["stderr_tail"] == DYING_WORDS
    assert "stderr_tail" not in checks_by_name(report)["config"]
    text = robota.run("doctor")
    assert text.returncode == 1
    lines = text.stdout.splitlines()
    failed = next(n for n, line in enumerate(lines) if "FAIL  agent dying" in line)
    assert lines[failed + 1].strip() == "its stderr ended with:"
    assert [line.strip() for line in lines[failed + 2 : failed + 5]] == [
        w.strip() for w in DYING_WORDS
    ]
    for leak in (DOTENV_SECRET, SHAPED_TOKEN):
        assert leak not in text.stdout + json.dumps(report)
