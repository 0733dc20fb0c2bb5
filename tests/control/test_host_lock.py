"""One host per profile, with real processes: the lock outlives nothing it should not, racing
starters get exactly one winner, and status reads it all without changing anything."""

from __future__ import annotations

import contextlib
import os
import signal
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from robota.core.control import (
    HostAlreadyRunning,
    HostState,
    Presence,
    UnsafeRuntimeDir,
    acquire_host_lock,
    probe_host,
)

CHILD = Path(__file__).with_name("_lock_child.py")


def files(run: Path) -> tuple[Path, Path]:
    return run / "host.lock", run / "host.json"


def state_for(run: Path) -> HostState:
    return HostState.of_this_process(version="test", profile=run, socket=run / "control.sock")


class Child:
    """A ``_lock_child.py`` process; its stdin is the parent's lever."""

    def __init__(self, run: Path, wait: float = 5.0, *options: str) -> None:
        self.process = subprocess.Popen(
            [sys.executable, str(CHILD), str(run), str(wait), *options],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.line() == "ready"

    def line(self) -> str:
        assert self.process.stdout is not None
        return self.process.stdout.readline().strip()

    def go(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write("go\n")
        self.process.stdin.flush()

    def finish(self) -> int:
        assert self.process.stdin is not None
        self.process.stdin.close()
        return self.process.wait(timeout=30)

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(timeout=30)
        for stream in (self.process.stdin, self.process.stdout):
            if stream is not None:
                stream.close()


@pytest.fixture
def children() -> Iterator[list[Child]]:
    started: list[Child] = []
    yield started
    for child in started:
        child.kill()


def test_the_holder_publishes_and_releases(tmp_path: Path) -> None:
    run = tmp_path / "run"
    lock_path, state_path = files(run)
    lock = acquire_host_lock(lock_path, state_path)
    assert stat.S_IMODE(run.stat().st_mode) == 0o700
    assert stat.S_IMODE(lock_path.stat().st_mode) == 0o600
    assert probe_host(lock_path, state_path).presence is Presence.STARTING
    state = state_for(run)
    lock.publish(state)
    assert stat.S_IMODE(state_path.stat().st_mode) == 0o600
    verdict = probe_host(lock_path, state_path)
    assert (verdict.presence, verdict.state) == (Presence.RUNNING, state)
    lock.release()
    assert not lock.held
    assert not state_path.exists()
    assert lock_path.exists()  # never deleted: deleting a lock file races the next locker
    assert probe_host(lock_path, state_path).presence is Presence.NOT_RUNNING
    with pytest.raises(RuntimeError, match="released"):
        lock.publish(state)


def test_a_second_acquirer_is_told_who_runs(tmp_path: Path) -> None:
    lock_path, state_path = files(tmp_path / "run")
    published = state_for(tmp_path)
    with acquire_host_lock(lock_path, state_path) as lock:
        lock.publish(published)
        with pytest.raises(HostAlreadyRunning) as refused:
            acquire_host_lock(lock_path, state_path)
        assert refused.value.state == published
        assert f"already running (pid {os.getpid()}" in str(refused.value)
    with acquire_host_lock(lock_path, state_path):
        pass


def test_a_holder_that_never_publishes_is_named_after_the_wait(tmp_path: Path) -> None:
    lock_path, state_path = files(tmp_path / "run")
    with acquire_host_lock(lock_path, state_path), pytest.raises(HostAlreadyRunning) as refused:
        acquire_host_lock(lock_path, state_path, wait=0.2)
    assert refused.value.state is None
    assert refused.value.holder == os.getpid()
    assert f"held by process {os.getpid()}, which has not published its state" in str(refused.value)


def test_status_of_a_profile_that_never_ran_creates_nothing(tmp_path: Path) -> None:
    lock_path, state_path = files(tmp_path / "run")
    verdict = probe_host(lock_path, state_path)
    assert (verdict.presence, verdict.state) == (Presence.NOT_RUNNING, None)
    assert not (tmp_path / "run").exists()


def test_a_sigkilled_holder_keeps_nothing(tmp_path: Path, children: list[Child]) -> None:
    run = tmp_path / "run"
    lock_path, state_path = files(run)
    child = Child(run)
    children.append(child)
    child.go()
    assert child.line() == f"won {child.process.pid}"
    running = probe_host(lock_path, state_path)
    assert running.presence is Presence.RUNNING
    assert running.state is not None
    assert running.state.pid == child.process.pid
    with pytest.raises(HostAlreadyRunning) as refused:
        acquire_host_lock(lock_path, state_path)
    assert refused.value.state == running.state

    os.kill(child.process.pid, signal.SIGKILL)
    child.kill()
    assert child.process.returncode == -signal.SIGKILL
    assert state_path.exists()  # the dead host could not clean up...
    stale = probe_host(lock_path, state_path)
    assert stale.presence is Presence.NOT_RUNNING  # ...and its state is read as stale
    assert f"pid {child.process.pid} is stale" in stale.reason
    with acquire_host_lock(lock_path, state_path) as lock:
        lock.publish(state_for(run))
        now = probe_host(lock_path, state_path)
        assert now.state is not None
        assert now.state.pid == os.getpid()


def test_a_process_the_holder_started_does_not_keep_the_lock(
    tmp_path: Path, children: list[Child]
) -> None:
    run = tmp_path / "run"
    child = Child(run, 5.0, "--spawn")
    children.append(child)
    child.go()
    assert child.line() == f"won {child.process.pid}"
    words = child.line().split()
    assert words[0] == "spawned"
    agent = int(words[1])
    try:
        os.kill(child.process.pid, signal.SIGKILL)
        child.kill()
        os.kill(agent, 0)  # the agent outlives the host, holding every inherited descriptor
        assert probe_host(*files(run)).presence is Presence.NOT_RUNNING
        with acquire_host_lock(*files(run)):
            pass
    finally:
        os.killpg(agent, signal.SIGKILL)
        with contextlib.suppress(ChildProcessError):
            os.waitpid(agent, 0)


def test_a_cleanly_stopped_holder_removes_its_state(tmp_path: Path, children: list[Child]) -> None:
    run = tmp_path / "run"
    child = Child(run)
    children.append(child)
    child.go()
    assert child.line().startswith("won ")
    assert child.finish() == 0
    assert child.line() == "released"
    assert not files(run)[1].exists()
    assert probe_host(*files(run)).reason == "no host holds the lock"


@pytest.mark.concurrency
def test_racing_acquirers_have_exactly_one_winner(
    tmp_path: Path, children: list[Child], repetition: int
) -> None:
    run = tmp_path / "run"
    racers = [Child(run), Child(run)]
    children.extend(racers)
    for racer in racers:
        racer.go()
    outcomes = {racer.process.pid: racer.line().split() for racer in racers}
    winners = [pid for pid, words in outcomes.items() if words[0] == "won"]
    losers = [words for words in outcomes.values() if words[0] == "lost"]
    assert len(winners) == 1, outcomes
    assert losers == [["lost", str(winners[0])]], outcomes
    for racer in racers:
        assert racer.finish() == 0


def test_the_runtime_dir_is_tightened_to_owner_only(tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir(mode=0o755)
    run.chmod(0o755)
    with acquire_host_lock(*files(run)):
        assert stat.S_IMODE(run.stat().st_mode) == 0o700


@pytest.mark.parametrize("kind", ["symlink", "file"])
def test_a_runtime_dir_that_is_not_a_plain_directory_is_refused(tmp_path: Path, kind: str) -> None:
    run = tmp_path / "run"
    if kind == "symlink":
        (tmp_path / "elsewhere").mkdir()
        run.symlink_to(tmp_path / "elsewhere")
        expected = "expected a directory, found a symbolic link"
    else:
        run.write_text("")
        expected = "expected a directory, found a file"
    with pytest.raises(UnsafeRuntimeDir, match=expected):
        acquire_host_lock(*files(run))
