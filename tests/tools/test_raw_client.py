"""The raw protocol client the benchmarks measure robota against (tools/raw_client.py), and the
wire tap they put in front of every agent (tools/wire_tap.py), against the small fault agent."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from robota.runtimes._app_server_map import PERMISSION_MODES
from robota.runtimes._handshake import acp_initialize_params, app_server_initialize_params

ROOT = Path(__file__).resolve().parents[2]
for path in (ROOT, ROOT / "tools" / "bench"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

from _real import read_tap, tap_command, turn_marks  # noqa: E402
from tools.raw_client import (  # noqa: E402
    APP_SERVER_THREAD,
    CLIENT_INFO,
    RawAgent,
    acp_permission,
    app_server_decision,
)

FAULT_AGENT = [sys.executable, str(ROOT / "tests" / "support" / "fault_agent.py")]


def test_it_asks_what_robota_asks_so_the_agents_do_the_same_work() -> None:
    approval, sandbox = PERMISSION_MODES["default"]
    assert {"approvalPolicy": approval, "sandbox": sandbox} == APP_SERVER_THREAD
    robota_info = app_server_initialize_params()["clientInfo"]
    assert (CLIENT_INFO["name"], CLIENT_INFO["title"]) == (
        robota_info["name"],
        robota_info["title"],
    )
    acp = acp_initialize_params(fs=True, terminal=True)
    assert acp["clientCapabilities"] == {
        "fs": {"readTextFile": True, "writeTextFile": True},
        "terminal": True,
    }


def test_requests_from_the_agent_are_declined_as_print_mode_declines_them() -> None:
    assert app_server_decision("item/commandExecution/requestApproval") == {"decision": "decline"}
    assert app_server_decision("item/tool/requestUserInput") is None
    options = [{"optionId": "y", "kind": "allow_once"}, {"optionId": "n", "kind": "reject_once"}]
    assert acp_permission({"options": options}) == {
        "outcome": {"outcome": "selected", "optionId": "n"}
    }
    assert acp_permission({"options": []}) == {"outcome": {"outcome": "cancelled"}}


def test_acp_turns_skip_garbage_and_answer_permissions(tmp_path: Path) -> None:
    with RawAgent("acp", FAULT_AGENT, cwd=tmp_path) as agent:
        session = agent.open(tmp_path)
        assert session.startswith("fault-")
        first = agent.turn("hello")
        assert (first.text, first.status) == ("echo: hello", "completed")
        assert 0 < first.seconds < 10
        assert agent.turn("GARBAGE").text == "survived the garbage"
        assert "reject_once" in agent.turn("ASK").text
        assert list(agent.stamps) == ["spawn", "spawned", "initialized", "session"]


def test_close_ends_an_agent_that_ignores_eof_and_its_whole_group(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    env = {
        **os.environ,
        "FAULT_AGENT_IGNORE_EOF": "1",
        "FAULT_AGENT_CHILD": "1",
        "FAULT_AGENT_PIDS": str(pids),
    }
    agent = RawAgent("acp", FAULT_AGENT, env=env, cwd=tmp_path)
    agent.start()
    agent.open(tmp_path)
    started = time.monotonic()
    assert agent.close() != 0  # it needed SIGTERM
    assert time.monotonic() - started < 6
    for pid in map(int, pids.read_text().split()):
        assert not Path(f"/proc/{pid}").exists() or "Z" in _state(pid)


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "Z"


def test_the_command_line_prints_each_step_through_the_wire_tap(tmp_path: Path) -> None:
    log = tmp_path / "tap.jsonl"
    done = subprocess.run(
        [
            sys.executable,
            str(ROOT / "tools" / "raw_client.py"),
            "--protocol",
            "acp",
            "--cwd",
            str(tmp_path),
            "--prompt",
            "one",
            "--prompt",
            "two",
            "--json",
            "--",
            *tap_command(log, FAULT_AGENT),
        ],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert [t["text"] for t in result["turns"]] == ["echo: one", "echo: two"]
    assert set(result["steps"]) == {"spawn", "spawned", "initialized", "session"}
    entries = read_tap(log)
    assert entries[0]["event"] == "start"
    methods = [e.get("method") for e in entries if e.get("dir") == ">"]
    assert methods == ["initialize", "session/new", "session/prompt", "session/prompt"]
    marks = turn_marks(entries, "acp")
    assert len(marks) == 2 and all(start < end for start, end in marks)
