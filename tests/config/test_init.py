"""init_profile on real directories: creation, modes, idempotence, merges, reset and the lock."""

from __future__ import annotations

import fcntl
import os
import signal
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from robota.core import ConfigError
from robota.core.config import (
    InitLockTimeout,
    Profile,
    init_profile,
    resolve_profile,
    template_text,
)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def _profile(tmp_path: Path) -> Profile:
    return resolve_profile({"ROBOTA_HOME": str(tmp_path / "home")})


def _snapshot(home: Path) -> dict[str, bytes]:
    return {
        str(path.relative_to(home)): path.read_bytes()
        for path in sorted(home.rglob("*"))
        if path.is_file()
    }


def test_creates_an_owner_only_profile_from_the_templates(tmp_path: Path) -> None:
    profile = _profile(tmp_path)
    result = init_profile(profile)
    home = profile.home
    assert [o.status for o in (result.config, result.env, result.data_dir, result.log_dir)] == [
        "created"
    ] * 4
    assert (home / "config.yaml").read_text() == template_text("config.yaml")
    assert (home / ".env").read_text() == template_text("env")
    assert _mode(home / ".env") == 0o600
    assert _mode(home / "config.yaml") == 0o600
    for directory in (home, home / "data", home / "logs"):
        assert _mode(directory) == 0o700
    assert result.backup is None
    # No temporary files are left behind.
    assert sorted(p.name for p in home.iterdir()) == [
        ".env",
        "config.yaml",
        "data",
        "init.lock",
        "logs",
    ]


def test_second_run_is_byte_identical_and_reports_unchanged(tmp_path: Path) -> None:
    profile = _profile(tmp_path)
    init_profile(profile)
    before = _snapshot(profile.home)
    result = init_profile(profile)
    assert {o.status for o in (result.config, result.env, result.data_dir, result.log_dir)} == {
        "unchanged"
    }
    after = _snapshot(profile.home)
    after.pop("init.lock"), before.pop("init.lock")  # holds the pid of the last run
    assert after == before


def test_existing_profile_gets_missing_entries_and_keeps_the_rest(tmp_path: Path) -> None:
    profile = _profile(tmp_path)
    profile.home.mkdir(parents=True)
    user_config = (
        "# my setup\n"
        "agents:\n"
        "  mine:\n"
        "    kind: acp\n"
        "    command: mine   # the only one\n"
        "defaults:\n"
        "  agent: mine\n"
    )
    (profile.home / "config.yaml").write_text(user_config)
    (profile.home / ".env").write_text("SLACK_BOT_TOKEN=xoxb-mine\n")
    (profile.home / ".env").chmod(0o644)

    result = init_profile(profile)

    assert (result.config.status, result.env.status) == ("updated", "updated")
    merged = (profile.home / "config.yaml").read_text()
    assert merged.startswith(user_config)
    assert "\ntransports:\n  console:\n    enabled: true\n" in merged
    assert "codex" not in merged.split("defaults:")[0]  # the user's agent list is theirs
    assert (profile.home / ".env").read_text() == "SLACK_BOT_TOKEN=xoxb-mine\n"
    assert _mode(profile.home / ".env") == 0o600  # tightened
    assert _mode(profile.home / "config.yaml") == 0o644  # the user's choice, kept


def test_invalid_yaml_is_reported_and_the_file_left_alone(tmp_path: Path) -> None:
    profile = _profile(tmp_path)
    profile.home.mkdir(parents=True)
    broken = "agents:\n  mine: [unclosed\n"
    (profile.home / "config.yaml").write_text(broken)
    with pytest.raises(ConfigError) as caught:
        init_profile(profile)
    assert str(caught.value).startswith(f"{profile.home / 'config.yaml'}: line ")
    assert (profile.home / "config.yaml").read_text() == broken


def test_reset_moves_everything_to_a_timestamped_backup(tmp_path: Path) -> None:
    profile = _profile(tmp_path)
    init_profile(profile)
    (profile.home / "config.yaml").write_text("# old\n" + template_text("config.yaml"))
    (profile.home / ".env").write_text("OLD=1\n")
    (profile.home / "data" / "robota.sqlite").write_bytes(b"db")
    (profile.home / "logs" / "robota.log").write_text("{}\n")
    now = time.mktime((2025, 1, 2, 3, 4, 5, 0, 0, 0)) - time.timezone

    result = init_profile(profile, reset=True, now=now)

    backup = profile.home / ".reset-backups" / "20250102T030405Z"
    assert result.backup == backup
    assert (backup / "config.yaml").read_text().startswith("# old\n")
    assert (backup / ".env").read_text() == "OLD=1\n"
    assert (backup / "data" / "robota.sqlite").read_bytes() == b"db"
    assert (backup / "logs" / "robota.log").exists()
    assert (profile.home / "config.yaml").read_text() == template_text("config.yaml")
    assert result.config.status == "created"
    assert list((profile.home / "data").iterdir()) == []
    # A second reset in the same second does not overwrite the first backup.
    assert init_profile(profile, reset=True, now=now).backup == backup.with_name(
        "20250102T030405Z-1"
    )


# -- the init lock -----------------------------------------------------------------------------

_HOLD = """
import fcntl, os, sys, time
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o600)
fcntl.flock(fd, fcntl.LOCK_EX)
os.pwrite(fd, f"{os.getpid()}\\n".encode(), 0)
print("locked", flush=True)
time.sleep(60)
"""


@contextmanager
def _lock_holder(path: Path) -> Iterator[subprocess.Popen[str]]:
    """Another process that holds the init lock until killed."""
    with subprocess.Popen(
        [sys.executable, "-c", _HOLD, str(path)], stdout=subprocess.PIPE, text=True
    ) as holder:
        try:
            assert holder.stdout is not None
            assert holder.stdout.readline() == "locked\n"
            yield holder
        finally:
            holder.kill()


def test_a_dead_holder_does_not_block(tmp_path: Path) -> None:
    profile = _profile(tmp_path)
    profile.home.mkdir(parents=True)
    with _lock_holder(profile.init_lock) as holder:
        holder.send_signal(signal.SIGKILL)
        holder.wait()
    # The lock file is still there, with the dead pid in it.
    assert profile.init_lock.read_text() == f"{holder.pid}\n"
    waited: list[int | None] = []
    started = time.monotonic()
    init_profile(profile, lock_timeout=5, on_wait=waited.append)
    assert waited == []
    assert time.monotonic() - started < 2


def test_a_live_holder_blocks_until_it_lets_go(tmp_path: Path) -> None:
    profile = _profile(tmp_path)
    profile.home.mkdir(parents=True)
    with _lock_holder(profile.init_lock) as holder:
        waited: list[int | None] = []
        with pytest.raises(InitLockTimeout, match=f"held by process {holder.pid}"):
            init_profile(profile, lock_timeout=0.3, on_wait=waited.append)
        assert waited == [holder.pid]
        assert not (profile.home / "config.yaml").exists()

        done = threading.Event()
        outcome: list[str] = []

        def run() -> None:
            outcome.append(init_profile(profile, lock_timeout=10).config.status)
            done.set()

        thread = threading.Thread(target=run)
        thread.start()
        assert not done.wait(0.5)  # still waiting for the holder
        holder.kill()
        assert done.wait(5)
        thread.join()
        assert outcome == ["created"]


def test_the_lock_is_an_flock_on_init_lock(tmp_path: Path) -> None:
    # Other tools (and older robota versions) coordinate through the same file.
    profile = _profile(tmp_path)
    profile.home.mkdir(parents=True)
    fd = os.open(profile.init_lock, os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        with pytest.raises(InitLockTimeout):
            init_profile(profile, lock_timeout=0.2)
    finally:
        os.close(fd)
    assert init_profile(profile, lock_timeout=1).config.status == "created"
