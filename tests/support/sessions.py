"""Background sessions for the tests: the ``robota session`` commands run in a sandbox, a
session's registration and control calls, and ``Surface``, an attached terminal's end of a
session read frame by frame."""

from __future__ import annotations

import json
import socket
import subprocess
from pathlib import Path
from typing import Any

from robota.core.config import Profile
from robota.core.control import ControlClient, parse_registration
from robota.host import session_paths

from .host import BOUND
from .robota import ROBOTA, Robota
from .trust import trust_workspace

AGENT = "codex-acp"


def workspace(robota: Robota, name: str = "project") -> Path:
    """The one place a test's workspace is made (a git repository's root), trusted."""
    path = robota.root / name
    path.mkdir()
    (path / ".git").mkdir()
    (path / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    trust_workspace(robota.home, path)
    return path


def robota_cmd(
    robota: Robota, *args: str, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(ROBOTA), *args],
        env=robota.environment(None, ()),
        cwd=cwd or robota.root,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=BOUND,
        check=False,
    )


def ok_json(robota: Robota, *args: str, cwd: Path | None = None) -> Any:
    done = robota_cmd(robota, *args, "--json", cwd=cwd)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def registration(profile: Profile, session_id: str) -> Any:
    _lock, path, _socket = session_paths(profile, session_id)
    return parse_registration(path.read_bytes())


def send(profile: Profile, session_id: str, text: str, generation: str | None = None) -> Any:
    found = registration(profile, session_id)
    with ControlClient(Path(found.socket), timeout=BOUND) as client:
        return client.call(
            "session.send", {"generation": generation or found.generation, "text": text}
        )


class Surface:
    """A raw attach connection: the request, the hello, then frames as lines."""

    def __init__(self, profile: Profile, session_id: str, mode: str = "drive") -> None:
        found = registration(profile, session_id)
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(BOUND)
        self.sock.connect(found.socket)
        self.buffer = b""
        request = {"id": 1, "type": "session.attach", "generation": found.generation, "mode": mode}
        self.send(request)
        self.first = self.frame()

    def send(self, frame: dict[str, Any]) -> None:
        self.sock.sendall(json.dumps(frame).encode() + b"\n")

    def frame(self) -> dict[str, Any]:
        while b"\n" not in self.buffer:
            data = self.sock.recv(65536)
            if not data:
                raise EOFError
            self.buffer += data
        line, self.buffer = self.buffer.split(b"\n", 1)
        frame: dict[str, Any] = json.loads(line)
        return frame

    def until(self, check: Any) -> dict[str, Any]:
        while not check(frame := self.frame()):
            pass
        return frame

    def close(self) -> None:
        self.sock.close()


def notice(kind: str, event: str | None = None) -> Any:
    def check(frame: dict[str, Any]) -> bool:
        if frame.get("type") != "notice" or frame["notice"]["kind"] != kind:
            return False
        return event is None or frame["notice"]["event"]["type"] == event

    return check


def start_on_task(robota: Robota, cwd: Path, task: str) -> tuple[int, str]:
    """``session start --background --task TASK --cwd CWD``: its exit code and what it said
    (with the session's stderr log when it failed)."""
    done = robota_cmd(
        robota, "session", "start", "--background", "--task", task, "--cwd", str(cwd), "--json"
    )
    said = done.stderr
    if done.returncode != 0 and "see " in said:
        said += Path(said.rsplit("see ", 1)[1].strip()).read_text()
    return done.returncode, said or done.stdout
