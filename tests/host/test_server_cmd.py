"""``robota server run | start | stop | status`` on real processes: the real ``robota`` script,
a detached host with a real ACP agent against the fake model, and nothing left behind."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import sqlite3
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from robota.core.config import Profile
from robota.core.control import MAX_LINE, ControlClient, probe_host
from robota.host import process_gone

from ..support.host import BOUND, agent_name, wait_for_status
from ..support.model_server import FakeModel
from ..support.processes import processes_with_home_under
from ..support.robota import ROBOTA, Robota
from ._server import sandbox, server, server_json

STATUS_FIELDS = {
    "running",
    "ready",
    "pid",
    "version",
    "profile",
    "started_at",
    "transports",
    "agents",
    "routes",
    "turns_running",
}
NOBODY = 65534

__all__ = ["sandbox"]  # the fixture this module uses, from _server


@pytest.fixture
def model() -> Iterator[FakeModel]:
    with FakeModel() as fake:
        yield fake


@pytest.fixture
def short_root() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="robota-srv-", dir="/tmp"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


def call(profile: Profile, type_name: str, fields: dict[str, Any] | None = None) -> Any:
    with ControlClient(profile.control_socket, timeout=BOUND) as client:
        return client.call(type_name, fields)


def assert_offline(robota: Robota, profile: Profile, *, known_routes: int) -> None:
    code, offline = server_json(robota, "status")
    assert code == 0
    assert set(offline) == STATUS_FIELDS
    assert (offline["running"], offline["ready"], offline["pid"]) == (False, False, None)
    assert offline["profile"] == str(profile.home)
    assert offline["agents"] == [{"name": agent_name("codex-acp"), "pid": None, "version": None}]
    assert offline["routes"] == {"known": known_routes, "active": 0}


def test_start_status_second_start_and_stop(sandbox: tuple[Robota, Profile]) -> None:
    robota, profile = sandbox
    assert_offline(robota, profile, known_routes=0)

    code, started = server_json(robota, "start")
    assert code == 0, started
    assert (started["started"], started["running"], started["ready"]) == (True, True, True)
    pid = started["pid"]
    assert pid != os.getpid() and not process_gone(pid)
    assert os.getsid(pid) == pid, "the host leads a session of its own"

    code, status = server_json(robota, "status")
    assert code == 0
    assert set(status) == STATUS_FIELDS
    assert (status["running"], status["ready"], status["pid"]) == (True, True, pid)
    assert status["transports"] == []
    assert status["routes"] == {"known": 0, "active": 0}
    assert status["turns_running"] == 0
    assert status["agents"] == [{"name": agent_name("codex-acp"), "pid": None, "version": None}]

    task = call(profile, "task.new", {})["task"]["id"]
    sent = call(profile, "task.send", {"task": task, "text": "hi", "wait": True})
    assert [t["final"] for t in sent["turns"]] == ["ECHO: hi"]
    _, status = server_json(robota, "status")
    (agent,) = status["agents"]
    assert isinstance(agent["pid"], int) and not process_gone(agent["pid"])
    assert isinstance(agent["version"], str) and agent["version"]
    assert status["routes"] == {"known": 1, "active": 1}
    human = server(robota, "status")
    assert human.returncode == 0
    assert f"host: running, ready (pid {pid}" in human.stdout
    assert f"(pid {agent['pid']}" in human.stdout

    code, second = server_json(robota, "start")
    assert code == 0
    assert (second["started"], second["pid"]) == (False, pid)
    again = server(robota, "run")
    assert again.returncode == 0, again.stderr
    assert f"a host already runs for this profile (pid {pid})" in again.stdout

    code, stopped = server_json(robota, "stop")
    assert code == 0, stopped
    assert stopped == {"stopped": True, "running": False, "pid": pid}
    assert process_gone(pid)
    assert not probe_host(profile.host_lock, profile.host_state_file).running
    assert not profile.control_socket.exists()
    assert processes_with_home_under(robota.root) == []

    assert_offline(robota, profile, known_routes=1)
    code, nothing = server_json(robota, "stop")
    assert (code, nothing["stopped"]) == (0, False)
    assert not (profile.data_dir / "last-crash.json").exists(), "a stop is no crash"


def test_server_run_stops_cleanly_on_sigterm(sandbox: tuple[Robota, Profile]) -> None:
    robota, profile = sandbox
    with subprocess.Popen(
        [str(ROBOTA), "server", "run"],
        env=robota.environment(None, ()),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as host:
        try:
            with ControlClient(profile.control_socket, timeout=BOUND) as client:
                assert wait_for_status(client, host)["pid"] == host.pid
            host.send_signal(signal.SIGTERM)
            _, err = host.communicate(timeout=BOUND)
        finally:
            if host.poll() is None:
                host.kill()
    assert host.returncode == 0, err
    assert processes_with_home_under(robota.root) == []


def raw_exchange(path: Path, payload: bytes, replies: int) -> list[dict[str, Any]]:
    """Send ``payload`` on one connection and read ``replies`` reply lines."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as raw:
        raw.settimeout(BOUND)
        raw.connect(str(path))
        raw.sendall(payload)
        data = b""
        while data.count(b"\n") < replies:
            chunk = raw.recv(65536)
            assert chunk, f"the host closed the connection after {data!r}"
            data += chunk
    return [json.loads(line) for line in data.splitlines()]


NOBODY_CLIENT = """\
import json, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.settimeout(30)
s.connect(sys.argv[1])
# Nothing sent: the host refuses on accept, replies once and hangs up.
data = b""
while chunk := s.recv(65536):
    data += chunk
print(data.decode())
"""


def test_garbage_oversized_and_another_uid_leave_the_host_serving(
    sandbox: tuple[Robota, Profile],
) -> None:
    robota, profile = sandbox
    code, started = server_json(robota, "start")
    assert code == 0, started
    socket_path = profile.control_socket

    garbage, oversized, good = raw_exchange(
        socket_path,
        b"this is not json\n"
        + b'{"id": 2, "type": "server.status", "pad": "'
        + b"x" * (MAX_LINE + 10)
        + b'"}\n{"id": 3, "type": "server.status"}\n',
        3,
    )
    assert (garbage["ok"], garbage["error"]["code"]) == (False, "bad_json")
    assert (oversized["ok"], oversized["error"]["code"]) == (False, "too_large")
    assert (good["id"], good["ok"], good["result"]["pid"]) == (3, True, started["pid"])

    if os.geteuid() != 0:
        pytest.skip("running a client as another user (nobody) needs root")
    # Loosen every mode on the way, so only the peer-uid check can refuse nobody.
    for path in (robota.root, profile.home, profile.data_dir):
        path.chmod(0o755)
    socket_path.parent.chmod(0o755)
    socket_path.chmod(0o666)
    refused = subprocess.run(
        ["/usr/bin/python3", "-c", NOBODY_CLIENT, str(socket_path)],
        user=NOBODY,
        group=NOBODY,
        extra_groups=[],
        env={"PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=BOUND,
        check=False,
    )
    assert refused.returncode == 0, refused.stderr
    (reply,) = [json.loads(line) for line in refused.stdout.splitlines() if line.strip()]
    assert (reply["ok"], reply["error"]["code"]) == (False, "forbidden")
    assert call(profile, "server.status")["pid"] == started["pid"], "the host still serves"

    code, stopped = server_json(robota, "stop")
    assert (code, stopped["stopped"]) == (0, True)
    assert processes_with_home_under(robota.root) == []


def wait_for(predicate: Any, what: str, bound: float = BOUND) -> Any:
    """Poll ``predicate`` until it returns something truthy (bounded by ``bound``)."""
    deadline = time.monotonic() + bound
    while not (value := predicate()):
        assert time.monotonic() < deadline, what
        time.sleep(0.1)
    return value


def serving_pid(profile: Profile) -> int | None:
    presence = probe_host(profile.host_lock, profile.host_state_file)
    return presence.state.pid if presence.state is not None else None


def test_a_safe_restart_waits_for_the_slow_turn_and_a_new_host_serves(
    sandbox: tuple[Robota, Profile],
) -> None:
    robota, profile = sandbox
    code, started = server_json(robota, "start")
    assert code == 0, started
    old = started["pid"]
    created = call(profile, "task.new", {})
    task, route = created["task"]["id"], created["route"]

    answers: dict[str, Any] = {}

    def slow() -> None:
        answers["slow"] = call(profile, "task.send", {"task": task, "text": "SLOW", "wait": True})

    waiter = threading.Thread(target=slow)
    waiter.start()
    try:
        wait_for(lambda: call(profile, "server.status")["turns_running"], "the turn never ran")
        # TASK as robota task takes it: here a unique id prefix.
        code, scheduled = server_json(robota, "restart", "--reason", "test", "--task", task[:6])
        assert code == 0, scheduled
        assert (scheduled["scheduled"], scheduled["force"]) == (True, False)
        assert scheduled["routes"] == [route]
        assert scheduled["pid"] == old
    finally:
        waiter.join(timeout=BOUND)
    # The turn ran to its end on the old host, and its final reached the waiter.
    (turn,) = answers["slow"]["turns"]
    assert turn["status"] == "completed" and turn["final"].startswith("slow-00")

    new = wait_for(lambda: (p := serving_pid(profile)) != old and p, "no new host came")
    wait_for(lambda: process_gone(old), "the old host did not exit")
    code, status = server_json(robota, "status")
    assert (status["running"], status["ready"], status["pid"]) == (True, True, new)
    assert not (profile.data_dir / "restart.json").exists(), "the new host took the handoff"
    assert not (profile.data_dir / "last-crash.json").exists(), "a restart is no crash"

    again = call(profile, "task.send", {"task": task, "text": "HISTORY", "wait": True})
    assert [t["final"] for t in again["turns"]] == ["HISTORY: SLOW | HISTORY"]
    with closing(sqlite3.connect(profile.data_dir / "robota.sqlite")) as db:
        (deliveries,) = db.execute(
            "SELECT COUNT(*) FROM final_deliveries WHERE turn_id = ?", (turn["turn_id"],)
        ).fetchone()
    assert deliveries == 1, "the slow turn's final was delivered once, not again by recovery"

    log = (profile.log_dir / "robota.log").read_text()
    assert f"host {new} replaced host {old}" in log
    code, stopped = server_json(robota, "stop")
    assert (code, stopped["pid"]) == (0, new)
    assert processes_with_home_under(robota.root) == []


def test_a_forced_restart_of_server_run_exits_75_and_cancel_names_its_schedule(
    sandbox: tuple[Robota, Profile],
) -> None:
    robota, profile = sandbox
    with subprocess.Popen(
        [str(ROBOTA), "server", "run"],
        env=robota.environment(None, ()),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as host:
        try:
            wait_for(lambda: serving_pid(profile) == host.pid, "the host never came up")
            unknown = server(robota, "restart", "--task", "nosuch")
            assert unknown.returncode == 2, unknown.stderr
            assert "nosuch" in unknown.stderr and call(profile, "server.status")["pid"] == host.pid
            code, scheduled = server_json(robota, "restart")
            assert (code, scheduled["force"]) == (0, False)
            stale_id = scheduled["schedule_id"]
            code, cancelled = server_json(robota, "restart", "--cancel")
            assert (code, cancelled) == (0, {"cancelled": True, "schedule_id": stale_id})
            code, newer = server_json(robota, "restart")
            assert newer["schedule_id"] != stale_id
            assert call(profile, "server.restart.cancel", {"schedule_id": stale_id}) == {
                "cancelled": False,
                "schedule_id": stale_id,
            }, "an old schedule's id cancels nothing newer"

            code, forced = server_json(robota, "restart", "--force")
            assert code == 0, forced
            assert forced["replaced"] is True and forced["status"]["ready"] is True
            new = forced["status"]["pid"]
            assert new != host.pid
            _, err = host.communicate(timeout=BOUND)
        finally:
            if host.poll() is None:
                host.kill()
    assert host.returncode == 75, err
    assert serving_pid(profile) == new
    code, stopped = server_json(robota, "stop")
    assert (code, stopped["pid"]) == (0, new)
    assert processes_with_home_under(robota.root) == []


def assert_none_left(root: Path) -> None:
    """No process of the sandbox remains (within ``BOUND``); the leftovers' command lines."""
    deadline = time.monotonic() + BOUND
    while (left := processes_with_home_under(root)) and time.monotonic() < deadline:
        time.sleep(0.1)
    commands = []
    for pid in left:
        with contextlib.suppress(OSError):
            commands.append((pid, Path(f"/proc/{pid}/cmdline").read_bytes()[:300]))
    assert left == [], commands


def attempts_of(profile: Profile, task: str) -> list[tuple[str, str, bool]]:
    """The task's attempts, oldest first: (status, prompt's first word, final delivered)."""
    with closing(sqlite3.connect(profile.data_dir / "robota.sqlite")) as db:
        rows = db.execute(
            "SELECT a.status, a.prompt, d.final_delivered_at IS NOT NULL FROM turn_attempts a "
            "LEFT JOIN final_deliveries d ON d.turn_id = a.id "
            "WHERE a.task_id = ? ORDER BY a.created_at, a.rowid",
            (task,),
        ).fetchall()
    return [(status, (prompt.split() or [""])[0], bool(done)) for status, prompt, done in rows]


def test_sigkill_mid_turn_then_start_recovers_the_turn_with_one_final(
    sandbox: tuple[Robota, Profile],
) -> None:
    robota, profile = sandbox
    code, started = server_json(robota, "start")
    assert code == 0, started
    task = call(profile, "task.new", {})["task"]["id"]
    call(profile, "task.send", {"task": task, "text": "SLOW cut short"})
    wait_for(lambda: call(profile, "server.status")["turns_running"], "the turn never ran")

    os.kill(started["pid"], signal.SIGKILL)
    wait_for(lambda: process_gone(started["pid"]), "the host did not die")
    # The reaper ends the agents of a host however it died (invariant 10).
    assert_none_left(robota.root)
    ((status, prompt, delivered),) = attempts_of(profile, task)
    assert (status in {"accepted", "running"}, prompt, delivered) == (True, "SLOW", False)

    code, again = server_json(robota, "start")
    assert (code, again["started"]) == (0, True), again
    wait_for(
        lambda: any(delivered for *_, delivered in attempts_of(profile, task)),
        "the recovered turn never delivered its final",
    )
    wait_for(lambda: call(profile, "server.status")["turns_running"] == 0, "still running")
    # The cut-short attempt ended interrupted, its final claimed so that it never comes; one
    # continuation (its prompt is robota's own) completed and delivered the one final.
    assert attempts_of(profile, task) == [
        ("interrupted", "SLOW", True),
        ("completed", "[robota", True),
    ]

    code, stopped = server_json(robota, "stop")
    assert (code, stopped["stopped"]) == (0, True)
    assert processes_with_home_under(robota.root) == []
