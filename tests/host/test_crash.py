"""Crashes and diagnostics of the host: crash reports on an unexpected exit (never a secret,
never the environment), faulthandler's output in logs/host.stderr.log, rotated host logs."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from robota.core.config import Profile
from robota.core.control import HostState
from robota.host import Host as RealHost
from robota.host import _run, crash_report, rotate_log
from robota.host._spawn import spawn_detached
from robota.runtimes._reaper import MARK

from ..support.host import BOUND, sandboxed
from ..support.model_server import FakeModel
from ..support.processes import processes_with_home_under
from ..support.robota import ROBOTA

SECRET = "s3cr3t-value-never-in-a-report"


@pytest.fixture
def model() -> Iterator[FakeModel]:
    with FakeModel() as fake:
        yield fake


def test_the_report_masks_secrets_and_token_shapes() -> None:
    report = crash_report(
        reason=f"boom: {SECRET}",
        uptime=12.34567,
        pid=42,
        version="0.1.0",
        logs={"host.stderr.log": [f"token {SECRET}", "auth: Bearer abcdefghijkl", "plain"]},
        secrets=[SECRET],
        now=datetime(2026, 12, 2, 6, 0, tzinfo=UTC),
    )
    assert report == {
        "time": "2026-12-02T06:00:00+00:00",
        "exit_code": 1,
        "exit_reason": "boom: ***",
        "uptime_seconds": 12.346,
        "pid": 42,
        "version": "0.1.0",
        "log_lines": {"host.stderr.log": ["token ***", "auth: Bearer ***", "plain"]},
    }


class FailingHost(RealHost):
    """The real host whose tree fails once it is up (a child that cannot be kept alive)."""

    async def run(self) -> None:
        raise RuntimeError(f"injected failure of a child ({SECRET})")


def test_a_failed_tree_writes_a_crash_report_and_exits_1(
    short_root: Path, model: FakeModel, monkeypatch: pytest.MonkeyPatch
) -> None:
    robota, profile = sandboxed(short_root, model, "codex-acp")
    (profile.home / ".env").write_text(f"SOME_TOKEN={SECRET}\n")
    profile.log_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    (profile.log_dir / "host.stderr.log").write_text(f"earlier line quoting {SECRET}\nlast line\n")
    monkeypatch.setenv("ROBOTA_HOME", str(robota.home))
    monkeypatch.setenv("SOME_ENV_ONLY_VALUE", "environment-is-never-copied")
    monkeypatch.setattr(_run, "Host", FailingHost)
    monkeypatch.setattr(_run, "_enable_faulthandler", lambda _profile: None)  # pytest's own

    running: list[HostState | None] = []
    assert _run.run_host(on_running=lambda state, _message: running.append(state)) == 1
    assert running == []

    last = profile.data_dir / "last-crash.json"
    (report_path,) = (profile.data_dir / "crash-reports").glob("crash-*.json")
    assert last.read_bytes() == report_path.read_bytes()
    assert oct(report_path.stat().st_mode & 0o777) == "0o600"
    text = last.read_text()
    assert SECRET not in text
    assert "environment-is-never-copied" not in text
    report = json.loads(text)
    assert report["exit_code"] == 1
    assert report["exit_reason"] == (
        "the supervision tree failed: RuntimeError: injected failure of a child (***)"
    )
    assert report["pid"] == os.getpid() and report["uptime_seconds"] >= 0
    assert report["log_lines"]["host.stderr.log"] == ["earlier line quoting ***", "last line"]
    robota_log = report["log_lines"]["robota.log"]
    assert any("the supervision tree failed" in line for line in robota_log), robota_log


def test_faulthandler_writes_to_the_hosts_stderr_log(short_root: Path, model: FakeModel) -> None:
    robota, profile = sandboxed(short_root, model, "codex-acp")
    with subprocess.Popen(
        [str(ROBOTA), "server", "run"],
        env=robota.environment(None, ()),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,  # not the log: faulthandler must find the file itself
    ) as host:
        try:
            deadline = time.monotonic() + BOUND
            while not profile.control_socket.is_socket():
                assert host.poll() is None
                assert time.monotonic() < deadline, "the host never came up"
                time.sleep(0.05)
            host.send_signal(signal.SIGABRT)
            host.wait(timeout=BOUND)
        finally:
            if host.poll() is None:
                host.kill()
    assert host.returncode == -signal.SIGABRT
    log = (profile.log_dir / "host.stderr.log").read_text()
    assert "Fatal Python error: Aborted" in log
    assert "Current thread" in log or "Thread 0x" in log
    deadline = time.monotonic() + BOUND
    while processes_with_home_under(short_root):  # the reaper ends the agents it watched
        assert time.monotonic() < deadline, processes_with_home_under(short_root)
        time.sleep(0.1)


def test_host_logs_rotate_at_the_limit_keeping_three(tmp_path: Path) -> None:
    log = tmp_path / "host.stderr.log"
    for generation in range(5):
        log.write_text(f"generation {generation}\n" + "x" * 100)
        rotate_log(log, max_bytes=100, backups=3)
    assert not log.exists()
    kept = {p.name: p.read_text().splitlines()[0] for p in tmp_path.iterdir()}
    assert kept == {
        "host.stderr.log.1": "generation 4",
        "host.stderr.log.2": "generation 3",
        "host.stderr.log.3": "generation 2",
    }
    log.write_text("small")
    rotate_log(log, max_bytes=100, backups=3)
    assert log.read_text() == "small", "below the limit nothing moves"


def test_a_detached_process_loses_the_mark_of_the_robota_that_started_it(tmp_path: Path) -> None:
    """``robota server start`` run by an agent: the host must not end with that agent's robota."""
    profile = Profile(
        tmp_path, tmp_path / "config.yaml", tmp_path / "data", tmp_path / "logs", True
    )
    logs = (profile.log_dir / "out.log", profile.log_dir / "err.log")
    probe = "import json, os; print(json.dumps(sorted(os.environ)))"
    environ = {"PATH": os.environ["PATH"], MARK: "0123456789abcdef", "KEPT": "1"}
    process = spawn_detached(profile, [sys.executable, "-c", probe], logs, environ)
    assert process.wait(timeout=BOUND) == 0, logs[1].read_text()
    assert "KEPT" in json.loads(logs[0].read_text())
    assert MARK not in json.loads(logs[0].read_text())
