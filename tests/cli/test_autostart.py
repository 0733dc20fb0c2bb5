"""``robota server autostart``: the service files' content and the service manager calls.

No service manager runs here (no systemd user instance, no launchd), so the calls go to a fake
runner that records them; what is real: the rendered files, the ``env -i`` command line run as
a process, and ``systemd-analyze verify`` on the unit where that tool exists.
"""

from __future__ import annotations

import json
import plistlib
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest
from click.testing import CliRunner

from robota.cli._autostart import (
    MANAGED_MARK,
    AutostartError,
    RegistrationState,
    RunResult,
    ServiceSpec,
    disable,
    enable,
    manager_for,
    registration,
    render_launchd_plist,
    render_systemd_unit,
    service_spec,
    systemd_quote,
    unit_path,
)
from robota.cli._autostart_cmd import autostart_group
from robota.core.config import template_text

from ..support.robota import ROBOTA

SHELL_ENV = {
    "HOME": "/home/ada",
    "USER": "ada",
    "PATH": "/home/ada/.npm/bin:/usr/bin:/bin",
    "LANG": "C.UTF-8",
    "FEISHU_APP_SECRET": "s3cret-from-the-shell",
    "SLACK_BOT_TOKEN": "xoxb-from-the-shell",
    "OPENAI_API_KEY": "sk-from-the-shell",
    "XDG_CONFIG_HOME": "/home/ada/.cfg",
}


class FakeRunner:
    """Records every argv; answers from ``replies`` (argv prefix -> result), else success."""

    def __init__(self, replies: dict[tuple[str, ...], RunResult] | None = None) -> None:
        self.calls: list[list[str]] = []
        self.replies = replies or {}

    def __call__(self, argv: Sequence[str]) -> RunResult:
        self.calls.append(list(argv))
        for prefix, result in self.replies.items():
            if tuple(argv[: len(prefix)]) == prefix:
                return result
        return RunResult(0)


def pinned_spec(home: Path = Path("/srv/robota"), **changes: object) -> ServiceSpec:
    arguments: dict[str, object] = {
        "robota": Path("/opt/robota/bin/robota"),
        "home": home,
        "config_file": home / "config.yaml",
        "log_dir": home / "logs",
        "pinned": True,
        "environ": SHELL_ENV,
    }
    arguments.update(changes)
    return service_spec(**arguments)  # type: ignore[arg-type]


def test_a_pinned_profile_is_named_and_the_environment_is_the_allowlist() -> None:
    spec = pinned_spec()
    assert spec.argv == (
        "/opt/robota/bin/robota",
        "--profile",
        "/srv/robota",
        "server",
        "run",
    )
    assert dict(spec.environment) == {
        "HOME": "/home/ada",
        "USER": "ada",
        "PATH": "/home/ada/.npm/bin:/usr/bin:/bin",
        "LANG": "C.UTF-8",
        "XDG_CONFIG_HOME": "/home/ada/.cfg",
        "ROBOTA_HOME": "/srv/robota",
    }
    command = spec.command()
    assert command[:2] == ["/usr/bin/env", "-i"]
    assert command[-5:] == list(spec.argv)
    assert not any("from-the-shell" in word for word in command)


def test_other_profiles() -> None:
    custom = pinned_spec(config_file=Path("/etc/robota.yaml"))
    assert "--profile" not in custom.argv
    assert ("ROBOTA_CONFIG", "/etc/robota.yaml") in custom.environment
    platform = pinned_spec(
        home=Path("/home/ada/.cfg/robota"), pinned=False, log_dir=Path("/home/ada/.log")
    )
    assert platform.argv == ("/opt/robota/bin/robota", "server", "run")
    assert "ROBOTA_HOME" not in dict(platform.environment)
    # One registration per profile.
    assert len({custom.name, platform.name, pinned_spec().name}) == 3
    assert pinned_spec().name == pinned_spec().name
    with pytest.raises(AutostartError, match="absolute path"):
        pinned_spec(robota=Path("bin/robota"))
    with pytest.raises(AutostartError, match="HOME is not set"):
        pinned_spec(environ={"PATH": "/bin"})
    with pytest.raises(AutostartError, match="LANG holds a line break"):
        pinned_spec(environ={**SHELL_ENV, "LANG": "C\n[Service]"})


@pytest.mark.parametrize(("platform", "manager"), [("linux", "systemd"), ("darwin", "launchd")])
def test_manager_for(platform: str, manager: str) -> None:
    assert manager_for(platform) == manager


def test_manager_for_other_platforms() -> None:
    with pytest.raises(AutostartError, match="not 'win32'"):
        manager_for("win32")


def test_the_systemd_unit() -> None:
    spec = pinned_spec(environ={**SHELL_ENV, "LANG": 'a b$HOME%i"\\'})
    unit = render_systemd_unit(spec)
    lines = unit.splitlines()
    assert lines[0].startswith(f"# {MANAGED_MARK}")
    for line in [
        "[Service]",
        "Type=simple",
        "Restart=on-failure",
        "SuccessExitStatus=75",
        "RestartPreventExitStatus=75",
        "KillMode=process",
        "WorkingDirectory=/home/ada",
        "WantedBy=default.target",
    ]:
        assert line in lines
    exec_start = next(line for line in lines if line.startswith("ExecStart="))
    assert exec_start.startswith('ExecStart=/usr/bin/env "-i" "HOME=/home/ada" ')
    assert exec_start.endswith('"/opt/robota/bin/robota" "--profile" "/srv/robota" "server" "run"')
    # systemd would expand $ and % and split on spaces: all escaped inside quotes.
    assert '"LANG=a b$$HOME%%i\\"\\\\"' in exec_start
    assert "from-the-shell" not in unit


def test_systemd_quote() -> None:
    assert systemd_quote("plain") == '"plain"'
    assert systemd_quote('say "hi" $X 100%') == '"say \\"hi\\" $$X 100%%"'


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="no systemd-analyze here")
def test_systemd_accepts_the_unit(tmp_path: Path) -> None:
    spec = pinned_spec(robota=Path(sys.executable))
    unit = tmp_path / f"{spec.name}.service"
    unit.write_text(render_systemd_unit(spec))
    done = subprocess.run(
        ["systemd-analyze", "verify", "--man=no", str(unit)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    # verify also reports the host's own units; only lines about ours matter.
    ours = [line for line in done.stderr.splitlines() if spec.name in line]
    assert ours == [], done.stderr


def test_the_launch_agent() -> None:
    spec = pinned_spec()
    data = render_launchd_plist(spec)
    assert f"<!-- {MANAGED_MARK} -->".encode() in data
    plist = plistlib.loads(data)
    assert plist["Label"] == f"io.robota.{spec.name}"
    assert plist["ProgramArguments"] == spec.command()
    assert plist["KeepAlive"] == {"SuccessfulExit": False}
    assert plist["RunAtLoad"] is True
    assert plist["AbandonProcessGroup"] is True
    assert plist["StandardErrorPath"] == "/srv/robota/logs/autostart.log"
    assert b"from-the-shell" not in data


def test_the_command_line_runs_robota_in_exactly_that_environment(tmp_path: Path) -> None:
    """The service's ``env -i`` line, run for real with ``--version`` in place of the host."""
    env = {"HOME": str(tmp_path), "PATH": "/usr/bin:/bin", "FEISHU_APP_SECRET": "x" * 20}
    spec = pinned_spec(home=tmp_path / "home", robota=ROBOTA, environ=env)
    command = [*spec.command()[: -len(spec.argv)], str(ROBOTA), "--version"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=60, check=True)
    assert done.stdout.startswith("robota, version ")
    probe = [*spec.command()[: -len(spec.argv)], "/usr/bin/env"]
    seen = subprocess.run(probe, capture_output=True, text=True, timeout=60, check=True)
    assert sorted(seen.stdout.splitlines()) == sorted(
        [f"HOME={tmp_path}", "PATH=/usr/bin:/bin", f"ROBOTA_HOME={tmp_path / 'home'}"]
    )


def test_systemd_enable_status_disable(tmp_path: Path) -> None:
    environ = {"HOME": str(tmp_path)}
    spec = pinned_spec()
    runner = FakeRunner()
    path = enable("systemd", spec, environ, runner, start_now=True, linger=True)
    assert path == tmp_path / ".config" / "systemd" / "user" / f"{spec.name}.service"
    assert path.read_text() == render_systemd_unit(spec)
    assert runner.calls == [
        ["systemctl", "--user", "daemon-reload"],
        ["systemctl", "--user", "enable", "--now", f"{spec.name}.service"],
        ["loginctl", "enable-linger"],
    ]

    runner = FakeRunner(
        {
            ("systemctl", "--user", "is-enabled"): RunResult(0, "enabled\n"),
            ("systemctl", "--user", "is-active"): RunResult(3, "inactive\n"),
        }
    )
    found = registration("systemd", spec, environ, runner)
    assert (found.state, found.enabled, found.active) == (RegistrationState.CURRENT, True, False)
    assert runner.calls == [
        ["systemctl", "--user", "is-enabled", f"{spec.name}.service"],
        ["systemctl", "--user", "is-active", f"{spec.name}.service"],
    ]
    moved = pinned_spec(robota=Path("/usr/local/bin/robota"))
    assert registration("systemd", moved, environ, runner).state is RegistrationState.OUTDATED

    runner = FakeRunner()
    assert disable("systemd", spec, environ, runner) is True
    assert not path.exists()
    assert runner.calls == [
        ["systemctl", "--user", "disable", "--now", f"{spec.name}.service"],
        ["systemctl", "--user", "daemon-reload"],
    ]
    assert disable("systemd", spec, environ, runner) is False
    absent = registration("systemd", spec, environ, FakeRunner())
    assert absent.state is RegistrationState.ABSENT


def test_enable_without_starting_when_a_host_runs(tmp_path: Path) -> None:
    runner = FakeRunner()
    spec = pinned_spec()
    enable("systemd", spec, {"HOME": str(tmp_path)}, runner, start_now=False)
    assert ["systemctl", "--user", "enable", f"{spec.name}.service"] in runner.calls


def test_a_failing_manager_call_is_reported(tmp_path: Path) -> None:
    runner = FakeRunner(
        {("systemctl",): RunResult(1, "", "Failed to connect to bus: No medium found\n")}
    )
    with pytest.raises(AutostartError, match="daemon-reload` failed \\(exit 1\\): Failed to"):
        enable("systemd", pinned_spec(), {"HOME": str(tmp_path)}, runner, start_now=True)
    found = registration("systemd", pinned_spec(), {"HOME": str(tmp_path)}, runner)
    assert (found.enabled, found.active) == (None, None)
    assert "Failed to connect to bus" in found.detail


def test_a_file_robota_did_not_write_is_left_alone(tmp_path: Path) -> None:
    environ = {"HOME": str(tmp_path)}
    spec = pinned_spec()
    path = unit_path("systemd", spec, environ)
    path.parent.mkdir(parents=True)
    path.write_text("[Service]\nExecStart=/bin/true\n")
    runner = FakeRunner()
    with pytest.raises(AutostartError, match="not written by robota"):
        enable("systemd", spec, environ, runner, start_now=True)
    with pytest.raises(AutostartError, match="not written by robota"):
        disable("systemd", spec, environ, runner)
    assert registration("systemd", spec, environ, runner).state is RegistrationState.FOREIGN
    assert path.read_text() == "[Service]\nExecStart=/bin/true\n"
    assert runner.calls == [
        ["systemctl", "--user", "is-enabled", f"{spec.name}.service"],
        ["systemctl", "--user", "is-active", f"{spec.name}.service"],
    ]


def test_launchd_enable_status_disable(tmp_path: Path) -> None:
    environ = {"HOME": str(tmp_path)}
    spec = pinned_spec()
    target = f"gui/501/{spec.label}"
    runner = FakeRunner({("launchctl", "bootout"): RunResult(113, "", "not loaded")})
    path = enable("launchd", spec, environ, runner, start_now=True, uid=501)
    assert path == tmp_path / "Library" / "LaunchAgents" / f"{spec.label}.plist"
    assert path.read_bytes() == render_launchd_plist(spec)
    assert runner.calls == [
        ["launchctl", "bootout", target],
        ["launchctl", "bootstrap", "gui/501", str(path)],
        ["launchctl", "kickstart", target],
    ]
    with pytest.raises(AutostartError, match="--linger is for systemd"):
        enable("launchd", spec, environ, runner, start_now=True, linger=True, uid=501)

    runner = FakeRunner({("launchctl", "print"): RunResult(0, "\tstate = running\n")})
    found = registration("launchd", spec, environ, runner, uid=501)
    assert (found.state, found.enabled, found.active) == (RegistrationState.CURRENT, True, True)
    assert runner.calls == [["launchctl", "print", target]]

    runner = FakeRunner()
    assert disable("launchd", spec, environ, runner, uid=501) is True
    assert runner.calls == [["launchctl", "bootout", target]]
    assert not path.exists()


def test_the_commands(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.yaml").write_text(template_text("config.yaml"))
    monkeypatch.setenv("HOME", str(tmp_path / "user"))
    monkeypatch.setenv("ROBOTA_HOME", str(home))
    monkeypatch.delenv("ROBOTA_CONFIG", raising=False)
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    monkeypatch.setenv("SLACK_BOT_TOKEN", "xoxb-must-not-reach-the-unit")
    runner = FakeRunner()
    obj = {"autostart_runner": runner, "autostart_platform": "linux", "autostart_robota": ROBOTA}
    cli = CliRunner()

    enabled = cli.invoke(autostart_group, ["enable", "--json"], obj=obj)
    assert enabled.exit_code == 0, enabled.output
    report = json.loads(enabled.output)
    assert report["started"] is True
    assert report["host"]["running"] is False
    unit = Path(report["path"])
    assert unit.parent == tmp_path / "user" / ".config" / "systemd" / "user"
    text = unit.read_text()
    assert f'"{ROBOTA}" "--profile" "{home}" "server" "run"' in text
    assert "xoxb" not in text
    assert runner.calls[1] == ["systemctl", "--user", "enable", "--now", unit.name]

    status = cli.invoke(autostart_group, ["status", "--json"], obj=obj)
    assert status.exit_code == 0, status.output
    found = json.loads(status.output)
    assert found["registration"]["state"] == "current"
    assert found["host"]["presence"] == "not_running"

    plain = cli.invoke(autostart_group, ["status"], obj=obj)
    assert f"service:  {unit} (systemd): current" in plain.output
    assert "host:     not_running" in plain.output

    disabled = cli.invoke(autostart_group, ["disable"], obj=obj)
    assert disabled.exit_code == 0
    assert disabled.output == f"removed {unit.stem}\n"
    assert not unit.exists()

    (home / "config.yaml").unlink()
    missing = cli.invoke(autostart_group, ["enable"], obj=obj)
    assert missing.exit_code == 2
    assert "run `robota init` first" in missing.output

    other = cli.invoke(autostart_group, ["status"], obj={**obj, "autostart_platform": "win32"})
    assert other.exit_code == 2
    assert "autostart supports Linux (systemd) and macOS (launchd)" in other.output
