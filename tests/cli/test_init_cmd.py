"""``robota init`` as a user runs it: the real script, real files, pipes and terminals."""

from __future__ import annotations

import fcntl
import json
import os
import select
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from robota.cli._init_cmd import parse_selection
from robota.core.config import template_text

from ..support.robota import ROBOTA, Robota

FEISHU_CONFIG = template_text("config.yaml").replace(
    "  console:\n    enabled: true\n",
    "  console:\n    enabled: true\n"
    "  feishu:\n"
    "    appId: ${FEISHU_APP_ID}\n"
    "    appSecret: ${FEISHU_APP_SECRET}\n"
    "    userOpenId: ou_owner\n",
)


def test_creates_the_profile_and_lists_missing_agents(robota: Robota) -> None:
    first = robota.run("init")
    assert first.returncode == 0, first.stderr
    home = robota.home
    assert f"robota profile: {home} (ROBOTA_HOME)" in first.stdout
    for label, path in [
        ("config.yaml", home / "config.yaml"),
        (".env", home / ".env"),
        ("data", home / "data"),
        ("logs", home / "logs"),
    ]:
        assert f"  created    {label:<12} {path}\n" in first.stdout
    assert "Config: ok, default agent codex" in first.stdout
    assert (
        "  codex-acp          missing: npm install -g @zed-industries/codex-acp\n" in first.stdout
    )
    assert stat.S_IMODE((home / ".env").stat().st_mode) == 0o600

    second = robota.run("init")
    assert second.returncode == 0
    assert second.stdout.count("  unchanged  ") == 4


def test_json_output_is_one_object_and_versions_are_read_not_run(robota: Robota) -> None:
    robota.preinstall("@openai/codex")
    result = robota.run_json("init")
    assert result["ok"] is True
    assert result["defaultAgent"] == "codex"
    assert result["files"] == {
        name: {"path": str(robota.home / path), "status": "created"}
        for name, path in [
            ("config", "config.yaml"),
            ("env", ".env"),
            ("dataDir", "data"),
            ("logDir", "logs"),
        ]
    }
    assert result["config"] == {"ok": True, "error": None}
    agents = {agent["name"]: agent for agent in result["agents"]}
    assert list(agents) == ["codex", "codex-acp", "gemini", "qwen", "opencode", "claude-agent-acp"]
    assert agents["codex"]["installed"] is True
    assert agents["codex"]["version"] == "0.46.0"
    assert agents["gemini"] == {
        "name": "gemini",
        "package": "@google/gemini-cli",
        "installed": False,
        "version": None,
        "path": None,
        "installCommand": "npm install -g @google/gemini-cli",
    }
    assert not robota.agent_ran.exists()
    # Not on a terminal: nothing was installed, although npm is right there on PATH.
    assert not robota.npm_log.exists()


def test_invalid_config_exits_2_and_leaves_the_file_alone(robota: Robota) -> None:
    robota.home.mkdir()
    broken = "agents:\n  codex: {kind: app-server\n"
    (robota.home / "config.yaml").write_text(broken)

    plain = robota.run("init")
    assert plain.returncode == 2
    assert plain.stderr.startswith(f"robota init: {robota.home / 'config.yaml'}: line 3")
    assert "expected valid YAML" in plain.stderr

    as_json = robota.run("init", "--json")
    assert as_json.returncode == 2
    assert json.loads(as_json.stdout) == {"ok": False, "error": plain.stderr[13:].strip()}
    assert (robota.home / "config.yaml").read_text() == broken


def test_config_problems_are_reported_without_failing_init(robota: Robota) -> None:
    robota.home.mkdir()
    (robota.home / "config.yaml").write_text(
        template_text("config.yaml").replace("  agent: codex\n", "  agent: gone\n")
    )
    result = robota.run_json("init")
    assert result["config"] == {
        "ok": False,
        "error": f"{robota.home / 'config.yaml'}: defaults.agent: found 'gone', expected one of "
        "the configured agents: codex, codex-acp, gemini, qwen, opencode, claude",
    }


def test_reset_needs_yes_when_not_on_a_terminal(robota: Robota) -> None:
    assert robota.run("init").returncode == 0
    (robota.home / ".env").write_text("MINE=1\n")

    refused = robota.run("init", "--reset")
    assert refused.returncode == 2
    assert "--yes" in refused.stderr
    assert (robota.home / ".env").read_text() == "MINE=1\n"

    result = robota.run_json("init", "--reset", "--yes")
    backup = Path(str(result["backup"]))
    assert backup.parent == robota.home / ".reset-backups"
    assert (backup / ".env").read_text() == "MINE=1\n"
    assert (robota.home / ".env").read_text() == template_text("env")
    assert result["files"]["env"]["status"] == "created"


def test_profile_option_wins_over_the_environment(robota: Robota, tmp_path: Path) -> None:
    other = tmp_path / "other"
    result = robota.run_json(
        "--profile", "other", "init", env={"ROBOTA_CONFIG": str(tmp_path / "stray.yaml")}
    )
    assert result["profile"]["configFile"] == str(other / "config.yaml")
    assert (other / "config.yaml").exists() and (other / ".env").exists()
    assert not robota.home.exists()
    assert not (tmp_path / "stray.yaml").exists()


def test_profile_and_config_cannot_be_combined(robota: Robota) -> None:
    completed = robota.invoke("--profile", "p", "--config", "c.yaml", "init")
    assert completed.returncode == 2
    assert "--profile and --config cannot be combined" in completed.stderr


def test_config_option_picks_the_file_and_keeps_the_profile_env(robota: Robota) -> None:
    result = robota.run_json("--config", "elsewhere/robota.yaml", "init")
    assert (robota.root / "elsewhere" / "robota.yaml").read_text() == template_text("config.yaml")
    assert result["files"]["env"]["path"] == str(robota.home / ".env")


def test_profile_option_clears_inherited_chat_credentials(robota: Robota, tmp_path: Path) -> None:
    profile = tmp_path / "bot"
    profile.mkdir()
    (profile / "config.yaml").write_text(FEISHU_CONFIG)
    inherited = {"FEISHU_APP_ID": "cli_prod", "FEISHU_APP_SECRET": "prod-secret-value"}

    # Through ROBOTA_HOME the shell's credentials count (the environment wins)...
    pinned = robota.run_json("init", env={"ROBOTA_HOME": str(profile), **inherited})
    assert pinned["config"] == {"ok": True, "error": None}

    # ...but --profile starts from the profile's own .env.
    isolated = robota.run("--profile", str(profile), "init", "--json", env=inherited)
    result = json.loads(isolated.stdout)
    assert result["config"]["ok"] is False
    assert "found ${FEISHU_APP_ID} but FEISHU_APP_ID is not set" in result["config"]["error"]
    assert "prod-secret-value" not in isolated.stdout + isolated.stderr

    with (profile / ".env").open("a") as env_file:
        env_file.write("FEISHU_APP_ID=cli_test\nFEISHU_APP_SECRET=test-secret\n")
    again = robota.run("--profile", str(profile), "init", "--json", env=inherited)
    assert json.loads(again.stdout)["config"] == {"ok": True, "error": None}


def test_platform_directories_without_robota_home(robota: Robota) -> None:
    result = robota.run_json(
        "init", unset=["ROBOTA_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME"]
    )
    user = robota.root / "user"
    assert result["profile"]["pinned"] is False
    assert (user / ".config" / "robota" / "config.yaml").is_file()
    assert (user / ".config" / "robota" / ".env").is_file()
    assert (user / ".local" / "share" / "robota").is_dir()
    assert Path(str(result["profile"]["logDir"])).is_dir()
    assert Path(str(result["profile"]["logDir"])).is_relative_to(user / ".local" / "state")


# -- the init lock, across processes ---------------------------------------------------------


def test_waits_for_another_init_and_then_finishes(robota: Robota) -> None:
    robota.home.mkdir()
    fd = os.open(robota.home / "init.lock", os.O_RDWR | os.O_CREAT)
    fcntl.flock(fd, fcntl.LOCK_EX)
    os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
    with subprocess.Popen(
        [str(ROBOTA), "init", "--json"],
        env=robota.env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as waiting:
        try:
            # Its first stderr line says it waits (a fixed sleep instead raced a slow start).
            assert waiting.stderr is not None
            ready, _, _ = select.select([waiting.stderr], [], [], 30)
            assert ready, "init said nothing within 30 s"
            first = waiting.stderr.readline()
            assert waiting.poll() is None, "init did not wait for the lock"
            assert not (robota.home / "config.yaml").exists()
        finally:
            os.close(fd)  # let go
        stdout, _ = waiting.communicate(timeout=30)
    assert waiting.returncode == 0
    assert f"Waiting for process {os.getpid()} to finish `robota init`" in first
    assert json.loads(stdout)["files"]["config"]["status"] == "created"


@pytest.mark.concurrency
def test_concurrent_inits_serialize(robota: Robota) -> None:
    processes = [
        subprocess.Popen(
            [str(ROBOTA), "init", "--json"],
            env=robota.env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        for _ in range(2)
    ]
    statuses = []
    for process in processes:
        with process:
            stdout, _ = process.communicate(timeout=60)
        assert process.returncode == 0
        statuses.append(json.loads(stdout)["files"]["config"]["status"])
    assert sorted(statuses) == ["created", "unchanged"]
    assert (robota.home / "config.yaml").read_text() == template_text("config.yaml")
    assert sorted(p.name for p in robota.home.iterdir()) == [
        ".env",
        "config.yaml",
        "data",
        "init.lock",
        "logs",
    ]


# -- on a terminal -----------------------------------------------------------------------------


def test_on_a_terminal_it_asks_and_installs_only_what_was_chosen(robota: Robota) -> None:
    robota.install_fake_npm()
    code, output = robota.run_in_terminal(
        "init", answers=[("[list numbers/all/empty=skip]", "7\n"), ("or nothing.", "2 5\n")]
    )
    assert code == 0, output
    # The first answer was out of range and asked again; then 2 and 5 of the missing list.
    assert "Answer with numbers from 1 to 6, 'all', or nothing." in output
    assert robota.npm_log.read_text() == (
        "install -g @zed-industries/codex-acp\ninstall -g opencode-ai\n"
    )
    assert "  codex-acp          installed (0.3.1)" in output
    assert "  opencode           installed (0.15.3)" in output
    assert not robota.agent_ran.exists()


def test_on_a_terminal_an_empty_answer_installs_nothing(robota: Robota) -> None:
    robota.install_fake_npm()
    code, output = robota.run_in_terminal(
        "init", "--json", answers=[("[list numbers/all/empty=skip]", "\n")]
    )
    assert code == 0, output
    assert not robota.npm_log.exists()
    # On a terminal stdout and stderr are the same stream; the JSON object is the last line.
    assert json.loads(output.strip().splitlines()[-1])["ok"] is True


def test_on_a_terminal_reset_asks_first(robota: Robota) -> None:
    assert robota.run("init").returncode == 0
    (robota.home / ".env").write_text("MINE=1\n")
    code, output = robota.run_in_terminal("init", "--reset", answers=[("start afresh?", "n\n")])
    assert code == 1
    assert "Aborted" in output
    assert (robota.home / ".env").read_text() == "MINE=1\n"
    assert not (robota.home / ".reset-backups").exists()


# -- the command table -------------------------------------------------------------------------


def test_help_lists_init_without_importing_heavy_modules() -> None:
    probe = (
        "import sys\n"
        "from robota.cli import cli\n"
        "try:\n"
        "    cli.main(['--help'], prog_name='robota')\n"
        "except SystemExit:\n"
        "    pass\n"
        "heavy = {'ruamel', 'trio', 'sqlite_utils', 'cryptography'}\n"
        "print(sorted(heavy & {name.split('.')[0] for name in sys.modules}))\n"
    )
    completed = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    )
    assert "  init " in completed.stdout
    assert completed.stdout.strip().splitlines()[-1] == "[]"


@pytest.mark.parametrize(
    ("answer", "chosen"),
    [
        ("", []),
        ("  ", []),
        ("all", [0, 1, 2]),
        ("ALL", [0, 1, 2]),
        ("1,3", [0, 2]),
        ("3 1 3", [2, 0]),
        ("0", None),
        ("4", None),
        ("1-2", None),
        ("yes", None),
    ],
)
def test_parse_selection(answer: str, chosen: list[int] | None) -> None:
    assert parse_selection(answer, 3) == chosen
