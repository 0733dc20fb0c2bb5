"""Print mode's runs for the tests of ``print.run`` (a warm host's print mode): the real
``robota`` script run in a sandbox, its JSON output with what differs between two runs of the
same turn blanked, what the hosts' logs and the store say of their print runs and tasks, and
the fixtures ``model`` (a slowly streaming fake model) and ``hosted`` (a sandbox whose host
runs)."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import closing, contextmanager
from pathlib import Path
from typing import Any

import pytest

from robota.core.config import Profile
from robota.core.store import open_reader

from ..support.host import BOUND, sandboxed
from ..support.model_server import FakeModel
from ..support.processes import kill_processes_with_home_under
from ..support.robota import ROBOTA, Robota
from ._server import server_json


def hosted_sandbox(
    root: Path, model: FakeModel, agent: str = "codex"
) -> Iterator[tuple[Robota, Profile]]:
    """A sandbox whose host runs (a real ``robota server start``), ended afterwards (a
    fixture's body)."""
    robota, profile = sandboxed(root, model, agent)
    code, started = server_json(robota, "start")
    assert code == 0, started
    try:
        yield robota, profile
    finally:
        server_json(robota, "stop")
        kill_processes_with_home_under(root)


@pytest.fixture
def model() -> Iterator[FakeModel]:
    with FakeModel(slow_deltas=40, slow_delay=0.05) as fake:
        yield fake


@pytest.fixture
def hosted(short_root: Path, model: FakeModel) -> Iterator[tuple[Robota, Profile]]:
    """A sandbox whose host runs (a real ``robota server start``), ended afterwards."""
    yield from hosted_sandbox(short_root, model)


def run(
    robota: Robota,
    *args: str,
    stdin: str | list[str] | None = None,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    """``robota ARGS``; a list of ``stdin`` lines is a conversation (``converse``)."""
    if isinstance(stdin, list):
        return converse(robota, args, stdin, cwd=cwd or robota.root)
    return subprocess.run(
        [str(ROBOTA), *args],
        env=robota.environment(env, ()),
        input=stdin,
        stdin=None if stdin is not None else subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=BOUND,
        check=False,
        cwd=cwd or robota.root,
    )


def converse(
    robota: Robota, args: tuple[str, ...], lines: list[str], cwd: Path
) -> subprocess.CompletedProcess[str]:
    """``robota ARGS`` (``--input-format stream-json``) given each of ``lines`` once the turn
    of the line before has printed its ``result``: a line that arrives while a turn runs
    steers it or is queued, depending on timing, and this run is about neither."""
    with (
        tempfile.TemporaryFile("w+") as err,
        subprocess.Popen(
            [str(ROBOTA), *args],
            env=robota.environment(None, ()),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=err,
            text=True,
            cwd=cwd,
        ) as process,
    ):
        assert process.stdin is not None and process.stdout is not None
        out: list[str] = []
        try:
            with timeout_kills(process):
                for line in lines:
                    process.stdin.write(line)
                    process.stdin.flush()
                    while (got := process.stdout.readline()) and not is_result(got):
                        out.append(got)
                    out.append(got)
                process.stdin.close()
                out.append(process.stdout.read())
                process.wait(timeout=BOUND)
        finally:
            if process.poll() is None:
                process.kill()
        err.seek(0)
        return subprocess.CompletedProcess(
            process.args, process.returncode, "".join(out), err.read()
        )


def is_result(line: str) -> bool:
    return line.strip().startswith("{") and json.loads(line).get("type") == "result"


@contextmanager
def timeout_kills(process: subprocess.Popen[str]) -> Iterator[None]:
    """Kills ``process`` if the block has not ended within ``BOUND`` (a read would wait)."""
    timer = threading.Timer(BOUND, process.kill)
    timer.start()
    try:
        yield
    finally:
        timer.cancel()


def known_routes(robota: Robota) -> int:
    """The tasks the host opened for ``print.run`` so far (its log says each)."""
    logs = (robota.home / "logs").glob("*.log*")
    return sum(path.read_text(errors="replace").count("print.run: task ") for path in logs)


_VARYING = re.compile(r"(^|_)id$|_ms$")
_VARYING_TEXT = re.compile(r"(Chunk ID: |Wall time: )\S+")
"""What Codex's shell tool output says that differs on every run."""


def normalized(value: Any) -> Any:
    """``value`` with what differs between two runs of the same turn (ids, times, the fake
    model's running item numbers) blanked."""
    if isinstance(value, dict):
        return {k: "*" if _VARYING.search(k) else normalized(v) for k, v in value.items()}
    if isinstance(value, list):
        return [normalized(v) for v in value]
    if isinstance(value, str):
        return _VARYING_TEXT.sub(r"\1*", value)
    return value


def json_lines(stdout: str) -> list[Any]:
    return [normalized(json.loads(line)) for line in stdout.splitlines() if line.strip()]


def unqueued(stdout: str) -> tuple[list[Any], list[Any]]:
    """The lines but ``queued``, in order, and the ``queued`` ones."""
    objects = json_lines(stdout)
    queued = [o for o in objects if o["type"] == "queued"]
    return [o for o in objects if o["type"] != "queued"], queued


def host_log(robota: Robota) -> str:
    """What the profile's logs say (the host's and the daemons')."""
    return "".join(p.read_text(errors="replace") for p in (robota.home / "logs").glob("*.log*"))


def signalled_mid_turn(robota: Robota, sent: signal.Signals, *args: str) -> tuple[int, str]:
    """``robota *args --output-format stream-json``, sent ``sent`` once its turn streams: its
    exit code and stderr."""
    with subprocess.Popen(
        [str(ROBOTA), *args, "--output-format", "stream-json"],
        env=robota.environment(None, ()),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=robota.root,
    ) as printing:
        assert printing.stdout is not None
        for line in printing.stdout:
            if json.loads(line)["type"] == "text_delta":
                break
        printing.send_signal(sent)
        _, stderr = printing.communicate(timeout=BOUND)
    return printing.returncode, stderr


def wait_until_no_turn_runs(robota: Robota) -> None:
    """Until the host runs no turn (it still runs, and within the bound)."""
    deadline = time.monotonic() + BOUND
    while True:
        status_code, status = server_json(robota, "status")
        assert status_code == 0 and status["running"], "the host went on"
        if status["turns_running"] == 0:
            return
        assert time.monotonic() < deadline, "the host's turn was not interrupted"
        time.sleep(0.2)


def attempt_routes(profile: Profile, task_id: str) -> list[str]:
    """The route each of the task's turns ran on, oldest first, from the store itself."""
    with closing(open_reader(profile.data_dir / "robota.sqlite")) as db:
        rows = db.execute(
            "SELECT route_key FROM turn_attempts WHERE task_id = ? ORDER BY rowid", (task_id,)
        ).fetchall()
    return [str(row[0]) for row in rows]


def owner_of(profile: Profile, task_id: str) -> tuple[str, int, int] | None:
    with closing(open_reader(profile.data_dir / "robota.sqlite")) as db:
        row = db.execute(
            "SELECT owner, pid, generation FROM task_owners WHERE task_id = ?", (task_id,)
        ).fetchone()
    return None if row is None else (str(row[0]), int(row[1]), int(row[2]))


def owned_by(profile: Profile, owner: str) -> list[str]:
    with closing(open_reader(profile.data_dir / "robota.sqlite")) as db:
        rows = db.execute("SELECT task_id FROM task_owners WHERE owner = ?", (owner,)).fetchall()
    return [str(row[0]) for row in rows]


def host_status(robota: Robota) -> Any:
    code, status = server_json(robota, "status")
    assert code == 0 and status["running"], status
    return status
