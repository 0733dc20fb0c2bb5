"""Who may approve: the ancestry walk as a table, ``/proc`` read as it is, and an operator-only
request refused to a peer that descends from a marked process (a real child process)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import pytest
import trio

from robota.core.control import (
    REAPER_MARK,
    ControlServer,
    Endpoint,
    ProcessEntry,
    caller_refusal,
    judge_caller,
    read_process,
)
from robota.runtimes._reaper import MARK

from ._requests import Status
from ._serving import status


def entry(
    pid: int, ppid: int, *, pgid: int = 0, sid: int = 0, marked: bool = False
) -> ProcessEntry:
    return ProcessEntry(pid, ppid, pgid or pid, sid or pid, f"p{pid}", marked)


# A shell (10) under a login (2) under init (1); an agent (20, marked) under the host (5).
TABLE = {
    1: entry(1, 0),
    2: entry(2, 1),
    10: entry(10, 2),
    11: entry(11, 10, pgid=10, sid=10),
    5: entry(5, 1),
    20: entry(20, 5, marked=True),
    21: entry(21, 20, pgid=20, sid=20),
    22: entry(22, 21, pgid=22, sid=22),
    # Reparented to init, but still in the agent's process group / session.
    30: entry(30, 1, pgid=20, sid=5),
    31: entry(31, 1, pgid=31, sid=20),
    # A chain whose parent vanished, and one that loops.
    40: entry(40, 41),
    50: entry(50, 51),
    51: entry(51, 50),
}


@pytest.mark.parametrize(
    ("pid", "refused_because"),
    [
        (1, None),
        (10, None),
        (11, None),  # a person's shell's child
        (5, None),  # the host itself
        (20, "process 20 (p20) carries the mark robota gives the agents it starts"),  # the agent
        (21, "process 20 (p20)"),  # its child
        (22, "process 20 (p20)"),  # a grandchild in a session of its own (script's child)
        (30, "process 20 (p20)"),  # an orphan in the agent's process group
        (31, "process 20 (p20)"),  # an orphan in the agent's session
        (40, "cannot be read (process 41 is gone)"),
        (50, "loops at process 50"),
        (99, "cannot be read (process 99 is gone)"),
    ],
)
def test_the_walk(pid: int, refused_because: str | None) -> None:
    why = judge_caller(pid, TABLE.get)
    if refused_because is None:
        assert why is None
    else:
        assert why is not None and refused_because in why, why


def test_the_mark_is_the_reapers() -> None:
    assert REAPER_MARK == MARK


def test_read_process_parses_proc(tmp_path: Path) -> None:
    own = tmp_path / "7"
    own.mkdir()
    # A name with spaces and parentheses: the fields start after the last ')'.
    (own / "stat").write_text("7 (a (b) c) S 3 7 6 0 -1 4194560 0 0\n")
    (own / "environ").write_bytes(b"HOME=/x\0" + REAPER_MARK.encode() + b"=ab12\0")
    assert read_process(7, tmp_path) == ProcessEntry(7, 3, 7, 6, "a (b) c", True)
    (own / "environ").write_bytes(b"NOT_" + REAPER_MARK.encode() + b"=ab12\0")
    found = read_process(7, tmp_path)
    assert found is not None and not found.marked
    assert read_process(8, tmp_path) is None
    assert caller_refusal(7, tmp_path / "missing") is None  # no /proc: nothing to walk


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")
def test_this_process_and_a_marked_child_on_the_real_proc() -> None:
    assert caller_refusal(os.getpid()) is None
    env = {**os.environ, REAPER_MARK: "feedface"}
    # The marked process starts an unmarked grandchild in a new session: still refused.
    script = (
        "import os, subprocess, sys;"
        f"env = {{k: v for k, v in os.environ.items() if k != {REAPER_MARK!r}}};"
        "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(30)'],"
        " env=env, start_new_session=True);"
        "print(child.pid, flush=True); sys.stdin.read(); child.kill(); child.wait()"
    )
    with subprocess.Popen(
        [sys.executable, "-c", script],
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    ) as marked:
        assert marked.stdout is not None and marked.stdin is not None
        grandchild = int(marked.stdout.readline())
        try:
            why = caller_refusal(grandchild)
            assert why is not None and f"process {marked.pid}" in why, why
        finally:
            marked.stdin.close()
            marked.wait(timeout=30)


@dataclass(frozen=True, slots=True)
class Approve:
    TYPE: ClassVar[str] = "approve"


async def approved(request: Approve) -> object:
    return {"approved": True}


_CLIENT = """
import json, socket, sys
sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
sock.connect(sys.argv[1])
sock.sendall(b'{"id": 1, "type": "status"}\\n{"id": 2, "type": "approve"}\\n')
data = b""
while data.count(b"\\n") < 2:
    chunk = sock.recv(65536)
    if not chunk:
        break
    data += chunk
print(json.dumps([json.loads(line) for line in data.splitlines()]))
"""


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")
@pytest.mark.parametrize("marked", [False, True])
async def test_an_operator_request_from_an_agents_descendant_is_refused(
    socket_path: Path, marked: bool
) -> None:
    server = ControlServer(
        socket_path, [Endpoint(Status, status), Endpoint(Approve, approved, operator=True)]
    )
    env = {k: v for k, v in os.environ.items() if k != REAPER_MARK}
    if marked:
        env[REAPER_MARK] = "0123abcd"
    async with trio.open_nursery() as nursery:
        await nursery.start(server.serve)
        done = await trio.to_thread.run_sync(
            lambda: subprocess.run(
                [sys.executable, "-c", _CLIENT, str(socket_path)],
                env=env,
                capture_output=True,
                text=True,
                timeout=60,
                check=True,
            )
        )
        nursery.cancel_scope.cancel()
    plain, approve = json.loads(done.stdout)
    assert plain == {"id": 1, "ok": True, "result": {"running": True}}
    if marked:
        assert approve["ok"] is False and approve["error"]["code"] == "forbidden"
        assert "only the operator may ask 'approve'" in approve["error"]["message"]
        assert "the mark robota gives the agents it starts" in approve["error"]["message"]
    else:
        assert approve == {"id": 2, "ok": True, "result": {"approved": True}}
