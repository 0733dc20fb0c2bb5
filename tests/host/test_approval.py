"""Who may approve, on real processes: an agent that opens a pty of its own (``script``) and
pipes ``y`` into ``robota session attach`` is refused, and so is a raw ``session.attach`` it
sends the session's control socket itself, and a raw ``session.surface`` (the WebSocket's URL
and token, with which it could answer the session's approvals); the same attach from the test
(a person's side) is served."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import sys
from pathlib import Path

import pytest

from robota.core.config import Profile

from ..support.agent_actor import FAULT_AGENT
from ..support.host import host_process, task, task_json
from ..support.processes import processes_with_home_under
from ..support.robota import ROBOTA, Robota
from ..support.sessions import Surface, ok_json, registration, robota_cmd, workspace
from ._server import sandbox

RAW_ATTACH = """
import json, socket, sys
sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
sock.settimeout(60)
sock.connect(sys.argv[1])
request = {"id": 1, "type": sys.argv[3], "generation": sys.argv[2]}
if sys.argv[3] == "session.attach":
    request["mode"] = "drive"
sock.sendall(json.dumps(request).encode() + b"\\n")
data = b""
while b"\\n" not in data:
    chunk = sock.recv(65536)
    if not chunk:
        break
    data += chunk
print("raw-reply", data.split(b"\\n")[0].decode())
"""


__all__ = ["sandbox"]  # the fixture this module uses, from _server


@pytest.fixture
def fault_sandbox(sandbox: tuple[Robota, Profile]) -> tuple[Robota, Profile]:
    """The host tests' sandbox with the fault agent configured and ``script`` on PATH."""
    robota, profile = sandbox
    config_file = robota.home / "config.yaml"
    config = json.loads(config_file.read_text())
    config["agents"]["fault"] = {
        "kind": "acp",
        "command": sys.executable,
        "args": [str(FAULT_AGENT)],
    }
    config_file.write_text(json.dumps(config))
    (robota.root / "bin" / "robota").symlink_to(ROBOTA)  # on PATH, as an installed one is
    script = shutil.which("script")
    if script is None:
        pytest.skip("needs script(1) (util-linux) to open a pty as an agent would")
    (robota.root / "bin" / "script").symlink_to(script)
    return robota, profile


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="the check reads /proc")
def test_an_agents_pty_cannot_approve_an_attach(fault_sandbox: tuple[Robota, Profile]) -> None:
    robota, profile = fault_sandbox
    project = workspace(robota)
    started = ok_json(
        robota,
        "session",
        "start",
        "--background",
        "--agent",
        "fault",
        "--name",
        "alpha",
        "--cwd",
        str(project),
    )
    session_id = started["id"]
    found = registration(profile, session_id)
    raw = robota.root / "raw_attach.py"
    raw.write_text(RAW_ATTACH)
    try:
        with host_process(robota, profile):
            task_id = task_json(robota, "new", "--agent", "fault")["task"]["id"]
            attach = shlex.quote(f"robota session attach {session_id}")
            command = f"echo y | script -eqc {attach} /dev/null; echo attach-exit=$?"
            through_pty = task(robota, "send", task_id, f"TERMINAL {command}", "--wait")
            assert through_pty.returncode == 0, through_pty.stderr
            answer = through_pty.stdout
            assert "only the operator answers this question" in answer, answer
            assert "the mark robota gives the agents it starts" in answer, answer
            assert "not attached" in answer and "attach-exit=1" in answer, answer
            assert "attached to task" not in answer

            # The session refuses the requests itself, whoever asks them without the CLI.
            for request_type in ("session.attach", "session.surface"):
                argv = shlex.join(
                    [sys.executable, str(raw), found.socket, found.generation, request_type]
                )
                direct = task(robota, "send", task_id, f"TERMINAL {argv}", "--wait")
                assert direct.returncode == 0, direct.stderr
                (line,) = [x for x in direct.stdout.splitlines() if "raw-reply" in x]
                reply = json.loads(line.split("raw-reply", 1)[1])
                assert reply["ok"] is False and reply["error"]["code"] == "forbidden", reply
                refusal = f"only the operator may ask '{request_type}'"
                assert refusal in reply["error"]["message"], reply
                assert "token" not in json.dumps(reply), reply
    finally:
        # A person's attach (this test's own process) is still served.
        surface = Surface(profile, session_id)
        try:
            assert surface.first.get("type") == "hello", surface.first
        finally:
            surface.close()
        assert robota_cmd(robota, "session", "stop", session_id).returncode == 0
    assert processes_with_home_under(robota.root) == []
    assert os.environ.get("ROBOTA_REAPER_MARK") is None
