"""``robota session`` and ``robota daemon`` on real processes: the real ``robota`` script,
detached background sessions with a real ACP agent against the fake model, their own control
sockets in the owner-only rendezvous directory, and nothing left behind."""

from __future__ import annotations

import json
import os
import signal
import socket
import sqlite3
import stat
import subprocess
import time
import uuid
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from robota.core.config import Profile
from robota.core.control import ControlClient, HostRefused
from robota.core.store import open_reader
from robota.host import process_gone, routes_of, session_paths

from ..support.host import BOUND, host_process, sandboxed, task, task_json
from ..support.model_server import FakeModel
from ..support.processes import kill_processes_with_home_under, processes_with_home_under
from ..support.real_agents import write_real_agents_config
from ..support.robota import ROBOTA, Robota
from ..support.sessions import (
    AGENT,
    Surface,
    notice,
    ok_json,
    registration,
    robota_cmd,
    send,
    workspace,
)
from ..support.terminal import Tmux
from ..support.tui import wait_for_exit

ROW_FIELDS = {"id", "name", "state", "started_at", "agent", "daemon"}


@pytest.fixture
def model() -> Iterator[FakeModel]:
    # SLOW streams 80 deltas 50 ms apart: long enough to be seen working, short enough to end.
    with FakeModel(slow_deltas=80, slow_delay=0.05) as fake:
        yield fake


@pytest.fixture
def sandbox(short_root: Path, model: FakeModel) -> Iterator[tuple[Robota, Profile]]:
    """A sandbox whose sessions are all ended afterwards, however the test ended."""
    robota, profile = sandboxed(short_root, model, AGENT)
    yield robota, profile
    kill_processes_with_home_under(short_root)


def rows(robota: Robota) -> list[dict[str, Any]]:
    listed = ok_json(robota, "session", "list")
    assert isinstance(listed, list)
    return listed


def row_of(robota: Robota, session_id: str) -> dict[str, Any]:
    (row,) = [r for r in rows(robota) if r["id"] == session_id]
    return row


def wait_state(robota: Robota, session_id: str, state: str) -> dict[str, Any]:
    deadline = time.monotonic() + BOUND
    while True:
        row = row_of(robota, session_id)
        if row["state"] == state:
            return row
        assert time.monotonic() < deadline, f"never {state}: {row}"
        time.sleep(0.1)


def test_a_background_session_starts_lists_works_and_stops(sandbox: tuple[Robota, Profile]) -> None:
    robota, profile = sandbox
    project = workspace(robota)
    started = ok_json(
        robota, "session", "start", "--background", "--name", "alpha", "--cwd", str(project)
    )
    session_id = started["id"]
    assert started == {"id": session_id, "name": "alpha"}

    # Owner-only rendezvous: the directory 0700, the socket 0600, the registration 0600.
    _lock, reg_path, sock = session_paths(profile, session_id)
    assert stat.S_IMODE(profile.sessions_dir.stat().st_mode) == 0o700
    assert stat.S_IMODE(sock.stat().st_mode) == 0o600
    assert stat.S_IMODE(reg_path.stat().st_mode) == 0o600
    found = registration(profile, session_id)
    assert (found.name, found.agent, found.daemon) == ("alpha", AGENT, False)

    idle = row_of(robota, session_id)
    assert set(idle) == ROW_FIELDS
    assert (idle["name"], idle["state"], idle["agent"]) == ("alpha", "idle", AGENT)

    outcome = send(profile, session_id, "SLOW secret prompt words")
    assert outcome["outcome"]["kind"] == "started"
    working = wait_state(robota, session_id, "working")
    listing = robota_cmd(robota, "session", "list", "--json").stdout
    # Content-free: no prompt, no answer, no path, no generation in any row.
    for leaked in ("secret prompt", "SLOW", str(project), found.generation, str(robota.root)):
        assert leaked not in listing
    assert set(working) == ROW_FIELDS
    wait_state(robota, session_id, "idle")

    # An owner that does not answer (stopped by SIGSTOP) is unknown, not idle.
    os.kill(found.pid, signal.SIGSTOP)
    try:
        assert row_of(robota, session_id)["state"] == "unknown"
    finally:
        os.kill(found.pid, signal.SIGCONT)
    wait_state(robota, session_id, "idle")

    renamed = robota_cmd(robota, "session", "rename", "alpha", "beta")  # named by its name
    assert renamed.returncode == 0, renamed.stderr
    assert row_of(robota, session_id)["name"] == "beta"
    unknown = robota_cmd(robota, "session", "stop", "alpha")
    assert unknown.returncode == 2 and "no session is named 'alpha'" in unknown.stderr

    pid = found.pid
    stopped = robota_cmd(robota, "session", "stop", session_id[:5])  # by a unique prefix
    assert stopped.returncode == 0, stopped.stderr
    assert process_gone(pid)
    assert processes_with_home_under(robota.root) == [], "the session left a process behind"
    assert not reg_path.exists() and not sock.exists()
    assert rows(robota) == []


def owner_rows(profile: Profile) -> list[tuple[str, str, int, int]]:
    """(task, owner, pid, generation) of every owned task, from the store itself."""
    with closing(open_reader(profile.data_dir / "robota.sqlite")) as db:
        rows = db.execute("SELECT task_id, owner, pid, generation FROM task_owners").fetchall()
    return [tuple(row) for row in rows]


def bound_routes(profile: Profile, task_id: str) -> list[str]:
    with closing(open_reader(profile.data_dir / "robota.sqlite")) as db:
        return routes_of(db, task_id)


def test_a_sessions_task_is_its_own_until_it_ends_then_the_host_takes_it_over(
    sandbox: tuple[Robota, Profile],
) -> None:
    """One owner per task: a ``task send`` to a background session's task goes to that
    session (its agent, its route), other requests are refused naming it; once the session is
    gone, the host takes the task over (generation 2) and drives it on its own route."""
    robota, profile = sandbox
    project = workspace(robota)
    session_id = ok_json(
        robota, "session", "start", "--background", "--name", "owned", "--cwd", str(project)
    )["id"]
    found = registration(profile, session_id)
    owner = f"session:{session_id}"
    ((task_id, recorded, pid, generation),) = owner_rows(profile)
    assert (recorded, pid, generation) == (owner, found.pid, 1)

    with host_process(robota, profile):
        sent = task_json(robota, "send", task_id, "hello owner", "--wait")
        assert (sent["owner"], sent["route"]) == (owner, owner)
        assert [turn["final"] for turn in sent["turns"]] == ["ECHO: hello owner"]
        # The host ran nothing for it: no route of its own, and the session still owns it.
        assert bound_routes(profile, task_id) == [owner]
        assert owner_rows(profile) == [(task_id, owner, found.pid, 1)]
        refused = task(robota, "stop", task_id)
        assert refused.returncode == 1, refused.stderr
        assert f"driven by background session {session_id} (pid {found.pid})" in refused.stderr

        stopped = robota_cmd(robota, "session", "stop", session_id)
        assert stopped.returncode == 0, stopped.stderr
        assert process_gone(found.pid)

        taken = task_json(robota, "send", task_id, "after the session", "--wait")
        assert "owner" not in taken
        assert taken["route"] == f"cli:{task_id}"
        assert [turn["final"] for turn in taken["turns"]] == ["ECHO: after the session"]
        ((_, recorded, pid, generation),) = owner_rows(profile)
        assert (recorded, generation) == ("host", 2)
        assert pid != found.pid
    assert processes_with_home_under(robota.root) == [], "a process was left behind"


def test_a_stale_generation_is_refused_and_a_damaged_registration_listed(
    sandbox: tuple[Robota, Profile],
) -> None:
    robota, profile = sandbox
    project = workspace(robota)
    session_id = ok_json(robota, "session", "start", "--background", "--cwd", str(project))["id"]
    first = registration(profile, session_id)

    with pytest.raises(HostRefused) as refused:
        send(profile, session_id, "hello", generation="0" * 32)
    assert refused.value.code == "stale_generation"

    # The same id started again: the old start's generation is refused by the new one.
    assert robota_cmd(robota, "session", "stop", session_id).returncode == 0
    assert process_gone(first.pid)
    argv = [
        str(ROBOTA), "session", "run", "--id", session_id, "--name", "again",
        "--agent", AGENT, "--cwd", str(project),
    ]  # fmt: skip
    again = subprocess.Popen(
        argv,
        env=robota.environment(None, ()),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + BOUND
        while not (
            session_paths(profile, session_id)[1].exists()
            and row_of(robota, session_id)["state"] == "idle"
        ):
            assert again.poll() is None and time.monotonic() < deadline
            time.sleep(0.1)
        second = registration(profile, session_id)
        assert second.generation != first.generation
        with ControlClient(Path(second.socket), timeout=BOUND) as client:
            with pytest.raises(HostRefused) as stale:
                client.call("session.stop", {"generation": first.generation})
            assert stale.value.code == "stale_generation"
        assert again.poll() is None, "a stale stop stopped the session"

        # A damaged registration beside the healthy one: listed unavailable, hiding nothing.
        (profile.sessions_dir / "0123456789ab.json").write_text("{not json")
        listed = {r["id"]: r for r in rows(robota)}
        assert listed["0123456789ab"]["state"] == "unknown"
        assert "unavailable" in listed["0123456789ab"]
        assert listed[session_id]["state"] == "idle"
        broken = robota_cmd(robota, "session", "stop", "0123456789ab")
        assert broken.returncode == 2
        assert "cannot be controlled" in broken.stderr

        # A registration whose owner is gone is unknown, never a guess, and not controlled.
        os.killpg(again.pid, signal.SIGKILL)
        again.wait(timeout=BOUND)
        assert row_of(robota, session_id)["state"] == "unknown"
        dead = robota_cmd(robota, "session", "stop", session_id)
        assert dead.returncode == 2 and "cannot be verified" in dead.stderr
    finally:
        if again.poll() is None:
            os.killpg(again.pid, signal.SIGKILL)
            again.wait(timeout=BOUND)


def test_daemon_starts_race_to_one_daemon(sandbox: tuple[Robota, Profile]) -> None:
    robota, profile = sandbox
    project = workspace(robota)
    starts = [
        subprocess.Popen(
            [str(ROBOTA), "daemon", "start", "--json"],
            env=robota.environment(None, ()),
            cwd=project,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    results = []
    for start in starts:
        out, err = start.communicate(timeout=BOUND)
        assert start.returncode == 0, err
        results.append(json.loads(out))
    assert results[0]["id"] == results[1]["id"]
    assert sorted(r["started"] for r in results) == [False, True]
    daemons = [r for r in rows(robota) if r["daemon"]]
    assert [d["id"] for d in daemons] == [results[0]["id"]]
    assert not any(p.suffix == ".start" for p in profile.sessions_dir.iterdir())

    # From a subdirectory of the same repository: the same daemon.
    (project / "sub").mkdir()
    assert ok_json(robota, "daemon", "start", cwd=project / "sub")["id"] == results[0]["id"]
    # A --restricted start is not handed the daemon that runs with the project's settings.
    restricted = robota_cmd(robota, "daemon", "start", "--restricted", cwd=project)
    assert restricted.returncode == 1 and "--restricted start is not handed" in restricted.stderr

    status = ok_json(robota, "daemon", "status", cwd=project)
    assert (status["running"], status["id"], status["restricted"]) == (
        True,
        results[0]["id"],
        False,
    )
    assert robota_cmd(robota, "daemon", "stop", cwd=project).returncode == 0
    assert ok_json(robota, "daemon", "status", cwd=project) == {"running": False}

    # A Restricted daemon (permission mode plan) is never handed to a plain start.
    restricted_id = ok_json(robota, "daemon", "start", "--restricted", cwd=project)["id"]
    plain = robota_cmd(robota, "daemon", "start", cwd=project)
    assert plain.returncode == 1 and "runs Restricted" in plain.stderr
    assert ok_json(robota, "daemon", "status", cwd=project)["restricted"] is True
    with closing(sqlite3.connect(profile.data_dir / "robota.sqlite")) as db:
        modes = db.execute("SELECT title, permission_mode FROM tasks").fetchall()
    assert sorted(modes) == [("daemon", "default"), ("daemon", "plan")]
    assert registration(profile, restricted_id).restricted is True
    assert robota_cmd(robota, "daemon", "stop", cwd=project).returncode == 0
    assert processes_with_home_under(robota.root) == []


def test_a_start_lock_is_removed_only_by_its_start_or_unlock(
    sandbox: tuple[Robota, Profile],
) -> None:
    robota, profile = sandbox
    project = workspace(robota)
    from robota.host import start_lock_path, take_start_lock, workspace_of

    held = take_start_lock(profile, workspace_of(project))
    assert held is not None
    # Held by a live start (this test): another start waits, finds no daemon, and says so
    # only once that start is gone; here it is not, so the lock stays put.
    other = take_start_lock(profile, workspace_of(project))
    assert other is None
    path = start_lock_path(profile, workspace_of(project))
    path.write_text(path.read_text().replace(held.token, "someone-else"))
    held.release()
    assert path.exists(), "a start released a lock it no longer holds"
    # A dead taker's lock: refused until the user unlocks it.
    path.write_text("999999999 1 deadbeef\n")
    refused = robota_cmd(robota, "daemon", "start", cwd=project)
    assert refused.returncode == 1 and "robota daemon unlock" in refused.stderr
    assert robota_cmd(robota, "daemon", "unlock", cwd=project).returncode == 0
    assert not path.exists()


def test_a_start_lock_is_never_seen_half_written(sandbox: tuple[Robota, Profile]) -> None:
    """A racing start reads the lock while another takes it: it finds no lock or a whole one
    naming a live holder, never an empty file it would take for a gone holder's."""
    import threading

    from robota.host import start_lock_holder, take_start_lock, workspace_of

    robota, profile = sandbox
    where = workspace_of(workspace(robota))
    seen: list[tuple[int, bool] | None] = []
    done = threading.Event()

    def watch() -> None:
        while not done.is_set():
            seen.append(start_lock_holder(profile, where))

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        for _ in range(200):
            held = take_start_lock(profile, where)
            assert held is not None
            held.release()
    finally:
        done.set()
        watcher.join(timeout=BOUND)
    holders = {holder for holder in seen if holder is not None}
    assert holders <= {(os.getpid(), True)}, holders
    assert sorted(p.name for p in profile.sessions_dir.iterdir() if ".start" in p.name) == []


@pytest.fixture
def terminal() -> Iterator[Tmux]:
    session = Tmux(f"robota-ses-{os.getpid()}-{uuid.uuid4().hex[:8]}")
    try:
        yield session
    finally:
        session.close()


def attach_in(
    terminal: Tmux,
    robota: Robota,
    argv: list[str],
    name: str = "alpha",
    cwd: Path | None = None,
) -> Path:
    """``argv`` (an attach) under tmux, the question answered yes; its exit-status file."""
    status = robota.root / f"attach-{uuid.uuid4().hex[:6]}"
    terminal.start([str(ROBOTA), *argv], env=robota.env, cwd=cwd or robota.root, status=status)
    terminal.wait_for(lambda s: f"Attach to session {name}? [y/N]" in s, "the question")
    terminal.type("y")
    terminal.keys("Enter")
    terminal.wait_for(lambda s: "attached to task" in s, "the TUI on the session")
    return status


def test_attach_drives_and_observe_only_watches_under_tmux(
    sandbox: tuple[Robota, Profile], model: FakeModel, terminal: Tmux
) -> None:
    robota, profile = sandbox
    project = workspace(robota)
    session_id = ok_json(
        robota, "session", "start", "--background", "--name", "alpha", "--cwd", str(project)
    )["id"]
    pid = registration(profile, session_id).pid

    # Without a terminal: refused, with the command to run in one.
    piped = robota_cmd(robota, "session", "attach", session_id)
    assert piped.returncode == 2 and f"robota session attach {session_id}" in piped.stderr

    # The question answered no (the default): nothing attaches.
    declined = robota.root / "declined"
    argv = [str(ROBOTA), "session", "attach", session_id]
    terminal.start(argv, env=robota.env, cwd=robota.root, status=declined)
    terminal.wait_for(lambda s: "Attach to session alpha? [y/N]" in s, "the question")
    terminal.keys("Enter")
    assert wait_for_exit(declined) == 1

    status = attach_in(terminal, robota, ["session", "attach", session_id])
    terminal.type("hello attach")
    terminal.keys("Enter")
    terminal.wait_for(lambda s: "ECHO: hello attach" in s, "the answer shows")
    terminal.type("SLOW going on")
    terminal.keys("Enter")
    terminal.wait_for(lambda s: "slow-01" in s, "the slow answer streams")
    terminal.type("/exit")
    terminal.keys("Enter")
    assert wait_for_exit(status) == 0
    # Detached: the session and its running turn go on, then end idle.
    assert row_of(robota, session_id)["state"] == "working"
    wait_state(robota, session_id, "idle")
    assert not process_gone(pid)

    observing = attach_in(terminal, robota, ["session", "attach", session_id, "--observe"])
    terminal.type("typed while observing")
    terminal.keys("Enter")
    terminal.wait_for(lambda s: "only observes the session" in s, "typing is refused")
    terminal.keys("C-d")
    assert wait_for_exit(observing) == 0
    prompts = [r.prompt for r in model.model_requests()]
    assert "hello attach" in prompts and "SLOW going on" in prompts
    assert "typed while observing" not in prompts
    assert row_of(robota, session_id)["state"] == "idle"

    assert robota_cmd(robota, "session", "stop", session_id).returncode == 0
    assert processes_with_home_under(robota.root) == []


def test_surfaces_are_bounded_and_answer_approvals_first_driver_leaving_declines(
    sandbox: tuple[Robota, Profile], model: FakeModel
) -> None:
    robota, profile = sandbox
    write_real_agents_config(robota, [AGENT], model.url, ask=True)  # it asks before a command
    project = workspace(robota)
    session_id = ok_json(robota, "session", "start", "--background", "--cwd", str(project))["id"]

    stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stale.connect(registration(profile, session_id).socket)
    stale.sendall(b'{"id": 1, "type": "session.attach", "generation": "00"}\n')
    assert b"stale_generation" in stale.recv(65536)
    stale.close()

    surfaces = [Surface(profile, session_id) for _ in range(4)]
    assert [s.first["type"] for s in surfaces] == ["hello"] * 4
    assert {s.first["surface"] for s in surfaces} == {f"attach:{n}" for n in range(1, 5)}
    fifth = Surface(profile, session_id)
    assert fifth.first["ok"] is False and fifth.first["error"]["code"] == "busy"
    fifth.close()

    # A garbage frame is answered and the connection stays; an oversized one ends it alone.
    driver, other, big, watcher = surfaces
    driver.send({"type": "dance"})
    assert driver.frame()["type"] == "protocol_error"
    big.sock.sendall(b"x" * (1024 * 1024 + 10) + b"\n")
    with pytest.raises((EOFError, ConnectionResetError)):
        big.until(lambda _frame: False)
    big.close()

    # An approval reaches the driving surfaces; the first answer wins.
    driver.send({"type": "submit", "prompt": "SHELL: touch made.txt && echo from-attach"})
    asked = driver.until(notice("TurnUpdate", "approval_requested"))
    approval_id = asked["notice"]["event"]["approval_id"]
    other.until(notice("TurnUpdate", "approval_requested"))
    assert row_of(robota, session_id)["state"] == "needs-input"
    other.send({"type": "permission-response", "id": approval_id, "result": "accept"})
    resolved = driver.until(notice("TurnUpdate", "approval_resolved"))
    assert resolved["notice"]["event"]["decision"] == "accept"
    assert resolved["notice"]["event"]["answerer"] == other.first["surface"]
    # A later answer is refused, to that terminal alone.
    driver.send({"type": "permission-response", "id": approval_id, "result": "decline"})
    refused = driver.until(notice("RouteReply"))
    assert f"already answered by {other.first['surface']}" in refused["notice"]["text"]
    assert refused["notice"]["surface"] == driver.first["surface"]
    finished = watcher.until(notice("TurnFinished"))
    assert "from-attach" in (finished["notice"].get("final_text") or "")
    wait_state(robota, session_id, "idle")

    # The last driver leaving while a question waits: it is declined, the turn ends.
    other.close()
    watcher.close()
    driver.send({"type": "submit", "prompt": "SHELL: touch other.txt && echo nobody-answers"})
    driver.until(notice("TurnUpdate", "approval_requested"))
    driver.close()
    wait_state(robota, session_id, "idle")
    assert (project / "made.txt").exists(), "the accepted command ran in the project"
    assert not (project / "other.txt").exists(), "the declined command ran"
    assert robota_cmd(robota, "session", "stop", session_id).returncode == 0


def test_robota_attach_connects_the_tui_to_the_workspace_daemon(
    sandbox: tuple[Robota, Profile], terminal: Tmux
) -> None:
    robota, _profile = sandbox
    project = workspace(robota)
    missing = robota_cmd(robota, "--attach", cwd=project)
    assert missing.returncode == 2 and "robota daemon start" in missing.stderr
    daemon_id = ok_json(robota, "daemon", "start", cwd=project)["id"]
    status = attach_in(terminal, robota, ["--attach"], name="daemon", cwd=project)
    terminal.type("hello daemon")
    terminal.keys("Enter")
    terminal.wait_for(lambda s: "ECHO: hello daemon" in s, "the daemon answers")
    terminal.keys("C-d")
    assert wait_for_exit(status) == 0
    assert ok_json(robota, "daemon", "status", cwd=project)["id"] == daemon_id
    assert robota_cmd(robota, "daemon", "stop", cwd=project).returncode == 0
    assert processes_with_home_under(robota.root) == []
